// The C summarizer callback (c.h's ctxkit_summarize_fn) as a
// ctxkit::Summarizer, shared by the compactor's and the context graph's
// set_summarizer calls, and the ctxkit_text buffer it writes to.

#ifndef CTXKIT_CAPI_SUMMARIZER_CALLBACK_H_
#define CTXKIT_CAPI_SUMMARIZER_CALLBACK_H_

#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "ctxkit/c.h"
#include "ctxkit/compactor.h"
#include "ctxkit/status.h"

struct ctxkit_text {
  std::string text;
  bool set = false;
};

namespace ctxkit::capi {

// A Summarizer that calls the host's C function. Failure of any kind is a
// Status, which makes the Compactor or the graph use the extractive summary.
//
// It owns the host's user data: once armed, its destructor (run when the
// last compaction or snapshot using it lets go) calls the host's destroy
// callback.
class CallbackSummarizer final : public Summarizer {
 public:
  CallbackSummarizer(ctxkit_summarize_fn fn, void* user_data)
      : fn_(fn), user_data_(user_data) {}
  ~CallbackSummarizer() override {
    if (destroy_ != nullptr) destroy_(user_data_);
  }
  CallbackSummarizer(const CallbackSummarizer&) = delete;
  CallbackSummarizer& operator=(const CallbackSummarizer&) = delete;

  // Set only once the summarizer is installed, so that a failed
  // installation does not release data the caller still owns.
  void Arm(ctxkit_destroy_fn destroy) { destroy_ = destroy; }

  StatusOr<std::string> Summarize(const SummaryRequest& request) override {
    ctxkit_text out;
    // std::string's data is NUL-terminated, as the typedef promises.
    const int rc = fn_(user_data_, request.messages_json.c_str(),
                       request.messages_json.size(), request.extractive.c_str(),
                       request.extractive.size(), request.max_tokens, &out);
    if (rc != 0) {
      return Status(StatusCode::kUnknown,
                    absl::StrFormat("summarizer callback returned %d", rc));
    }
    if (!out.set) {
      return Status(StatusCode::kUnknown,
                    "summarizer callback returned 0 without calling "
                    "ctxkit_text_set");
    }
    return std::move(out.text);
  }

 private:
  const ctxkit_summarize_fn fn_;
  void* const user_data_;
  ctxkit_destroy_fn destroy_ = nullptr;
};

}  // namespace ctxkit::capi

#endif  // CTXKIT_CAPI_SUMMARIZER_CALLBACK_H_
