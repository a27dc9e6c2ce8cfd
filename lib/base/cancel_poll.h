// The one place that turns ctxkit/cancel.h's contract into code: a call
// counts its work here and the check is asked every kCancelPollWork units,
// so every long-running call is polled at the same bounded cost.
//
// Thread safety: a CancelPoll belongs to one call on one thread.

#ifndef CTXKIT_LIB_BASE_CANCEL_POLL_H_
#define CTXKIT_LIB_BASE_CANCEL_POLL_H_

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ctxkit/cancel.h"

namespace ctxkit::internal {

class CancelPoll {
 public:
  // `check` (may be empty: never cancelled) must outlive the poll; `what`
  // names the call in the CANCELLED message ("compaction").
  CancelPoll(const CancelCheck& check, std::string_view what)
      : check_(check), what_(what) {}
  CancelPoll(const CancelPoll&) = delete;
  CancelPoll& operator=(const CancelPoll&) = delete;

  // Asks the check now (the start of a call, or before a write).
  absl::Status Check() {
    if (cancelled_) return Cancelled();
    if (!check_) return absl::OkStatus();
    work_ = 0;
    cancelled_ = check_();
    return cancelled_ ? Cancelled() : absl::OkStatus();
  }

  // One message of `bytes` bytes done; asks the check when the work since
  // the last time reaches kCancelPollWork.
  absl::Status Message(size_t bytes) {
    // A CANCELLED dropped on the way (an error path that does not pass it
    // on) still ends the call at its next unit of work.
    if (cancelled_) return Cancelled();
    ++done_;
    work_ += kCancelMessageWork + bytes;
    if (work_ < kCancelPollWork) return absl::OkStatus();
    return Check();
  }

  // The call moves on to `phase` ("counting tokens"), a pass over `total`
  // messages, or over an unknown number when 0: the CANCELLED message says
  // where the call was ("compaction cancelled while counting tokens, after
  // 1200 of 40000 messages").
  void NextPhase(std::string_view phase, size_t total) {
    phase_ = phase;
    total_ = total;
    done_ = 0;
  }

 private:
  absl::Status Cancelled() const {
    if (phase_.empty()) {
      return absl::CancelledError(absl::StrFormat("%s cancelled", what_));
    }
    if (total_ == 0) {
      return absl::CancelledError(
          absl::StrFormat("%s cancelled while %s", what_, phase_));
    }
    return absl::CancelledError(
        absl::StrFormat("%s cancelled while %s, after %d of %d messages", what_,
                        phase_, std::min(done_, total_), total_));
  }

  const CancelCheck& check_;
  const std::string_view what_;
  std::string_view phase_;
  size_t work_ = 0;
  size_t done_ = 0;
  size_t total_ = 0;
  bool cancelled_ = false;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_CANCEL_POLL_H_
