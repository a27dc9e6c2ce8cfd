// ctxkit::CancelCheck: how a caller stops one of ctxkit's long-running calls
// (a compaction, counting a large chat request) once nobody wants its
// result any more, e.g. because the client that asked for it hung up.
//
//   std::atomic<bool> stop{false};            // set from any thread
//   ctxkit::CompactionOptions options;
//   options.cancel = ctxkit::CancelWhen(stop);
//   auto result = compactor.Compact(history_json, options);
//   // result.status().code() == ctxkit::StatusCode::kCancelled once `stop`
//   // was seen set
//
// The contract, the same for every call that takes a CancelCheck:
//
// Who calls it, and when. The call asks the check only on the thread that
// made the call, and only before the call returns: once at the start (a
// check that already says true costs no work), then between units of work,
// never more than kCancelPollWork units apart, where a message costs
// kCancelMessageWork units plus one per byte of its JSON. So a call does at
// most one message's work, or kCancelPollWork bytes' worth of messages, past
// the moment the check turns true, however large its input; and a cheap
// check (an atomic load) costs nothing measurable. Which moments those are
// depends on the input alone, never on time or machine speed.
//
// What it returns. True means "stop": the call returns CANCELLED with a
// message naming the call and what it had done ("compaction cancelled after
// 1200 of 40000 messages"), and has written nothing: no cache entry, no
// analytics, no stored view. Once it has returned true the check is not
// asked again. A check that never returns true changes nothing: the result
// is the same, byte for byte, as without one. An empty check is never asked.
//
// Ownership, lifetime, threads. The check is a value, copied with the
// options it is part of; whatever it refers to (the flag of CancelWhen) must
// outlive the call. It must be safe to run while other threads change the
// state it reads (an atomic, as CancelWhen's, is), must not throw, and must
// not call back into the object whose call asks it.

#ifndef CTXKIT_CANCEL_H_
#define CTXKIT_CANCEL_H_

#include <atomic>
#include <cstddef>
#include <functional>

namespace ctxkit {

// True asks the running call to stop (see the contract above).
using CancelCheck = std::function<bool()>;

// A message's fixed share of work between two checks, on top of its bytes,
// so that a history of many small messages is checked as often as one of
// few large ones.
inline constexpr size_t kCancelMessageWork = 1024;
// The most work done between two checks: 64 small messages, or 64 KiB of
// message JSON.
inline constexpr size_t kCancelPollWork = size_t{64} << 10;

// A check that says true once `flag` is set. `flag` is read with relaxed
// order (it carries no data) and must outlive every call given the check.
inline CancelCheck CancelWhen(const std::atomic<bool>& flag) {
  return [&flag] { return flag.load(std::memory_order_relaxed); };
}

}  // namespace ctxkit

#endif  // CTXKIT_CANCEL_H_
