// The C API of the compactor (ctxkit/compactor.h): translation between C
// conventions and ctxkit::Compactor, with the C summarizer callback
// adapted by capi/summarizer_callback.h. No compaction logic lives
// here: requests go whole to Compactor::CompactJson and
// CompactConversationJson.
//
// A ctxkit::Compactor is immutable, yet the C handle lets callers add rules
// and install a summarizer at any time. The handle therefore keeps its
// configuration as an immutable snapshot (the Compactor built with the
// current summarizer and rule table) behind a shared_ptr: a change builds a
// new snapshot under the mutex and swaps it in; a compaction copies the
// pointer under the mutex and runs without it. Compactions never wait for
// each other, and one that is running keeps its snapshot alive.

// Defines ctxkit_compactor_add_rules, of c.h's experimental section, which
// must be declared (with its export attribute) before it is defined.
#define CTXKIT_EXPERIMENTAL_API

#include "ctxkit/compactor.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "capi/c_internal.h"
#include "capi/summarizer_callback.h"
#include "ctxkit/analytics.h"
#include "ctxkit/c.h"
#include "ctxkit/cache.h"
#include "ctxkit/classifier.h"
#include "ctxkit/conversations.h"
#include "ctxkit/status.h"
#include "lib/json/utf8.h"

struct ctxkit_cancel_token {
  // c.h promises ctxkit_cancel_token_cancel is async-signal-safe.
  static_assert(std::atomic<bool>::is_always_lock_free);
  std::atomic<bool> cancelled{false};
};

namespace {

using ctxkit::Status;
using ctxkit::StatusCode;
using ctxkit::StatusOr;
// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

// What one compaction uses; never modified once published.
struct Snapshot {
  std::shared_ptr<const ctxkit::Compactor> compactor;
  std::shared_ptr<ctxkit::Summarizer> summarizer;
  // The built-in table with the added rules in front; null until a rule is
  // added (Classifier::Default() is used then).
  std::shared_ptr<const ctxkit::Classifier> classifier;
};

}  // namespace

struct ctxkit_compactor {
  // Shared with the cache and analytics handles, which may close first.
  std::shared_ptr<ctxkit::Cache> cache;
  std::shared_ptr<ctxkit::Analytics> analytics;
  std::mutex mu;
  std::shared_ptr<const Snapshot> snapshot;  // guarded by mu

  std::shared_ptr<const Snapshot> Current() {
    std::lock_guard<std::mutex> lock(mu);
    return snapshot;
  }
};

namespace {

// A new snapshot: a Compactor over the handle's services with `summarizer`.
std::shared_ptr<const Snapshot> MakeSnapshot(
    const ctxkit_compactor& handle,
    std::shared_ptr<ctxkit::Summarizer> summarizer,
    std::shared_ptr<const ctxkit::Classifier> classifier) {
  ctxkit::CompactorServices services;
  services.cache = handle.cache.get();
  services.analytics = handle.analytics.get();
  services.summarizer = summarizer;
  services.classifier = classifier;
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->compactor = std::make_shared<const ctxkit::Compactor>(services);
  snapshot->summarizer = std::move(summarizer);
  snapshot->classifier = std::move(classifier);
  return snapshot;
}

// Clears and checks the outputs of a compaction; -1 means "go on".
int StartCompaction(const void* compactor, char** out_json,
                    size_t* out_json_len, char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (out_error != nullptr) *out_error = nullptr;
  if (compactor == nullptr || out_json == nullptr || out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "compactor, out_json and out_json_len must not be NULL");
  }
  return -1;
}

// Hands a response to the caller: CTXKIT_OK, or OUT_OF_RANGE with the
// response set when the budget was not met.
int ReturnResponse(const ctxkit::StatusOr<std::string>& response,
                   const ctxkit::CompactionBudget& budget, char** out_json,
                   size_t* out_json_len, char** out_error) {
  if (!response.ok()) return Report(response.status(), out_error);
  char* copy = CopyOut(*response);
  if (copy == nullptr) {
    return Fail(out_error, CTXKIT_RESOURCE_EXHAUSTED, "out of memory");
  }
  *out_json = copy;
  *out_json_len = response->size();
  if (!budget.met()) {
    return Fail(
        out_error, CTXKIT_OUT_OF_RANGE,
        absl::StrFormat(
            "budget: infeasible: the messages that must be kept take %d "
            "tokens even truncated, %d over the target of %d; the "
            "best-effort result is in out_json",
            budget.compacted_tokens, budget.over_budget_by,
            budget.target_tokens));
  }
  return Ok(out_error);
}

// The library's check for a C token; empty (never asked) for NULL, so a
// call without a token does exactly what it did before tokens existed.
ctxkit::CancelCheck CheckOf(const ctxkit_cancel_token* token) {
  if (token == nullptr) return {};
  return ctxkit::CancelWhen(token->cancelled);
}

}  // namespace

extern "C" {

int ctxkit_compactor_create(ctxkit_cache* cache, ctxkit_analytics* analytics,
                            ctxkit_compactor** out, char** out_error) {
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = nullptr;
  return Guard(out_error, [&] {
    auto handle = std::make_unique<ctxkit_compactor>();
    if (cache != nullptr) handle->cache = cache->cache;
    if (analytics != nullptr) handle->analytics = analytics->analytics;
    handle->snapshot = MakeSnapshot(*handle, nullptr, nullptr);
    *out = handle.release();
    return Ok(out_error);
  });
}

void ctxkit_compactor_free(ctxkit_compactor* compactor) { delete compactor; }

int ctxkit_text_set(ctxkit_text* text, const char* data, size_t len) {
  if (text == nullptr || (data == nullptr && len != 0)) {
    return CTXKIT_INVALID_ARGUMENT;
  }
  const std::string_view view = View(data, len);
  if (!ctxkit::internal::IsValidUtf8(view)) return CTXKIT_INVALID_ARGUMENT;
  return Guard(nullptr, [&] {
    text->text.assign(view);
    text->set = true;
    return CTXKIT_OK;
  });
}

int ctxkit_compactor_set_summarizer(ctxkit_compactor* compactor,
                                    ctxkit_summarize_fn fn, void* user_data,
                                    ctxkit_destroy_fn destroy,
                                    char** out_error) {
  if (compactor == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "compactor must not be NULL");
  }
  return Guard(out_error, [&] {
    std::shared_ptr<CallbackSummarizer> callback;
    if (fn != nullptr) {
      callback = std::make_shared<CallbackSummarizer>(fn, user_data);
    }
    // Released after the lock, so that the host's destroy callback (of a
    // summarizer only the old snapshot holds) never runs under it.
    std::shared_ptr<const Snapshot> old;
    {
      // Building the Compactor under the lock keeps two concurrent changes
      // from losing one; it is cheap, and compactions do not take the lock
      // while they run.
      std::lock_guard<std::mutex> lock(compactor->mu);
      std::shared_ptr<const Snapshot> next =
          MakeSnapshot(*compactor, callback, compactor->snapshot->classifier);
      if (callback != nullptr) callback->Arm(destroy);  // nothing throws now
      old = std::exchange(compactor->snapshot, std::move(next));
    }
    return Ok(out_error);
  });
}

int ctxkit_compactor_add_rules(ctxkit_compactor* compactor,
                               const char* rules_json, size_t rules_json_len,
                               char** out_error) {
  if (compactor == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "compactor must not be NULL");
  }
  if (rules_json == nullptr && rules_json_len != 0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "rules_json is NULL with a non-zero length");
  }
  return Guard(out_error, [&] {
    std::lock_guard<std::mutex> lock(compactor->mu);
    const Snapshot& current = *compactor->snapshot;
    // A copy, so a failed call changes nothing; the Classifier checks every
    // field and names clashing with the built-in or earlier added rules.
    auto classifier = std::make_shared<ctxkit::Classifier>(
        current.classifier != nullptr ? *current.classifier
                                      : ctxkit::Classifier::WithBuiltinRules());
    if (Status status =
            classifier->AddRulesJson(View(rules_json, rules_json_len));
        !status.ok()) {
      return Report(status, out_error);
    }
    compactor->snapshot =
        MakeSnapshot(*compactor, current.summarizer, std::move(classifier));
    return Ok(out_error);
  });
}

int ctxkit_cancel_token_create(ctxkit_cancel_token** out, char** out_error) {
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = nullptr;
  return Guard(out_error, [&] {
    *out = new ctxkit_cancel_token();
    return Ok(out_error);
  });
}

void ctxkit_cancel_token_free(ctxkit_cancel_token* token) { delete token; }

void ctxkit_cancel_token_cancel(ctxkit_cancel_token* token) {
  // Relaxed: the flag carries no data, and the compaction only needs to
  // see it eventually.
  if (token != nullptr) token->cancelled.store(true, std::memory_order_relaxed);
}

int ctxkit_cancel_token_is_cancelled(const ctxkit_cancel_token* token) {
  return token != nullptr && token->cancelled.load(std::memory_order_relaxed)
             ? 1
             : 0;
}

int ctxkit_compactor_compact(ctxkit_compactor* compactor,
                             const char* request_json, size_t request_json_len,
                             char** out_json, size_t* out_json_len,
                             char** out_error) {
  return ctxkit_compactor_compact_with_cancel(
      compactor, request_json, request_json_len, nullptr, out_json,
      out_json_len, out_error);
}

int ctxkit_compactor_compact_with_cancel(ctxkit_compactor* compactor,
                                         const char* request_json,
                                         size_t request_json_len,
                                         const ctxkit_cancel_token* cancel,
                                         char** out_json, size_t* out_json_len,
                                         char** out_error) {
  if (int rc = StartCompaction(compactor, out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (request_json == nullptr && request_json_len != 0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "request_json is NULL with a non-zero length");
  }
  return Guard(out_error, [&] {
    const std::shared_ptr<const Snapshot> snapshot = compactor->Current();
    ctxkit::CompactionBudget budget;
    const auto response = snapshot->compactor->CompactJson(
        View(request_json, request_json_len), CheckOf(cancel), &budget);
    return ReturnResponse(response, budget, out_json, out_json_len, out_error);
  });
}

int ctxkit_compactor_compact_conversation(
    ctxkit_compactor* compactor, ctxkit_conversations* convs,
    const char* conversation_id, size_t conversation_id_len,
    const char* options_json, size_t options_json_len, char** out_json,
    size_t* out_json_len, char** out_error) {
  return ctxkit_compactor_compact_conversation_with_cancel(
      compactor, convs, conversation_id, conversation_id_len, options_json,
      options_json_len, nullptr, out_json, out_json_len, out_error);
}

int ctxkit_compactor_compact_conversation_with_cancel(
    ctxkit_compactor* compactor, ctxkit_conversations* convs,
    const char* conversation_id, size_t conversation_id_len,
    const char* options_json, size_t options_json_len,
    const ctxkit_cancel_token* cancel, char** out_json, size_t* out_json_len,
    char** out_error) {
  if (int rc = StartCompaction(compactor, out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (convs == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "convs must not be NULL");
  }
  if ((conversation_id == nullptr && conversation_id_len != 0) ||
      (options_json == nullptr && options_json_len != 0)) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "conversation_id and options_json must not be NULL with a "
                "non-zero length");
  }
  return Guard(out_error, [&] {
    const std::shared_ptr<const Snapshot> snapshot = compactor->Current();
    ctxkit::CompactionBudget budget;
    const auto response = snapshot->compactor->CompactConversationJson(
        *convs->conversations, View(conversation_id, conversation_id_len),
        View(options_json, options_json_len), CheckOf(cancel), &budget);
    return ReturnResponse(response, budget, out_json, out_json_len, out_error);
  });
}

}  // extern "C"
