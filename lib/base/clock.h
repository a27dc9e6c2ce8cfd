// Time as the stores record it: milliseconds since the Unix epoch, the unit
// of every created_at / expires_at field in the seed APIs.

#ifndef CTXKIT_LIB_BASE_CLOCK_H_
#define CTXKIT_LIB_BASE_CLOCK_H_

#include <chrono>
#include <cstdint>
#include <functional>

namespace ctxkit::internal {

// The wall clock in milliseconds since the epoch. Thread-safe.
inline int64_t SystemNowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `clock` if set, else the wall clock: parts take an optional clock in their
// options so that tests can move time (TTL expiry, retention) by hand.
inline int64_t NowMillis(const std::function<int64_t()>& clock) {
  return clock ? clock() : SystemNowMillis();
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_CLOCK_H_
