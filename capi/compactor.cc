// The C API of the compactor (ctxkit/compactor.h): translation between C
// conventions and ctxkit::Compactor, plus the adapter that turns a C
// summarizer callback into a ctxkit::Summarizer. No compaction logic lives
// here.
//
// A ctxkit::Compactor is immutable, yet the C handle lets callers add rules
// and install a summarizer at any time. The handle therefore keeps its
// configuration as an immutable snapshot (the Compactor built with the
// current summarizer, plus the added rules) behind a shared_ptr: a change
// builds a new snapshot under the mutex and swaps it in; a compaction
// copies the pointer under the mutex and runs without it. Compactions never
// wait for each other, and one that is running keeps its snapshot alive.

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
#include "ctxkit/analytics.h"
#include "ctxkit/c.h"
#include "ctxkit/cache.h"
#include "ctxkit/classifier.h"
#include "ctxkit/compactor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/status.h"
#include "lib/compactor/compaction_json.h"
#include "lib/compactor/compactor_access.h"
#include "lib/json/json_reader.h"
#include "lib/json/utf8.h"
#include "lib/status/status_internal.h"
#include "simdjson.h"

struct ctxkit_text {
  std::string text;
  bool set = false;
};

namespace {

using ctxkit::Status;
using ctxkit::StatusCode;
using ctxkit::StatusOr;
using ctxkit::capi::CopyOut;
using ctxkit::capi::Fail;
using ctxkit::capi::Guard;
using ctxkit::capi::Report;
using ctxkit::capi::View;
using ctxkit::internal::ToPublic;

int Report(const absl::Status& status, char** out_error) {
  return Report(ToPublic(status), out_error);
}

int Ok(char** out_error) { return Report(Status(), out_error); }

// A ctxkit::Summarizer that calls the host's C function. Failure of any
// kind is a Status, which makes the Compactor use the extractive summary.
class CallbackSummarizer final : public ctxkit::Summarizer {
 public:
  CallbackSummarizer(ctxkit_summarize_fn fn, void* user_data)
      : fn_(fn), user_data_(user_data) {}

  StatusOr<std::string> Summarize(
      const ctxkit::SummaryRequest& request) override {
    ctxkit_text out;
    // std::string's data is NUL-terminated, as the typedef promises.
    const int rc =
        fn_(user_data_, request.messages_json.c_str(),
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
};

// Appends `text` as a JSON string: keys come from the parser unescaped.
void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += absl::StrFormat("\\u%04x", byte);
    } else {
      out += c;
    }
  }
  out += '"';
}

// What one compaction uses; never modified once published.
struct Snapshot {
  std::shared_ptr<const ctxkit::Compactor> compactor;
  std::shared_ptr<ctxkit::Summarizer> summarizer;
  // The built-in table with the added rules in front; null when no rule
  // was added (compactions then use the request's, or the default, table).
  std::shared_ptr<const ctxkit::Classifier> classifier;
};

}  // namespace

struct ctxkit_compactor {
  ctxkit::Cache* cache = nullptr;
  ctxkit::Analytics* analytics = nullptr;
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
  services.cache = handle.cache;
  services.analytics = handle.analytics;
  services.summarizer = summarizer;
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->compactor = std::make_shared<const ctxkit::Compactor>(services);
  snapshot->summarizer = std::move(summarizer);
  snapshot->classifier = std::move(classifier);
  return snapshot;
}

// Clears and checks the outputs of a compaction; -1 means "go on".
int StartCompaction(const void* compactor, char** out_json, size_t* out_len,
                    char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_len != nullptr) *out_len = 0;
  if (out_error != nullptr) *out_error = nullptr;
  if (compactor == nullptr || out_json == nullptr || out_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "compactor, out_json and out_len must not be NULL");
  }
  return -1;
}

// Hands a response to the caller: CTXKIT_OK, or OUT_OF_RANGE with the
// response set when `not_met` holds a message.
int ReturnResponse(std::string_view response,
                   const std::optional<std::string>& not_met, char** out_json,
                   size_t* out_len, char** out_error) {
  char* copy = CopyOut(response);
  if (copy == nullptr) {
    return Fail(out_error, CTXKIT_RESOURCE_EXHAUSTED, "out of memory");
  }
  *out_json = copy;
  *out_len = response.size();
  if (not_met.has_value()) {
    return Fail(out_error, CTXKIT_OUT_OF_RANGE, *not_met);
  }
  return Ok(out_error);
}

std::optional<std::string> BudgetNotMet(const ctxkit::CompactionResult& r) {
  if (r.budget_met) return std::nullopt;
  return absl::StrFormat(
      "budget: infeasible: the messages that must be kept take %d tokens "
      "even truncated, %d over the target of %d; the best-effort result is "
      "in out_json",
      r.compacted_tokens, r.over_budget_by, r.target_tokens);
}

// `snapshot`'s added rules, then the request's own (in front of the
// built-in table in options->classifier, when it has some), as the
// classifier of `options`.
absl::Status UseAddedRules(const Snapshot& snapshot,
                           ctxkit::CompactionOptions& options) {
  if (snapshot.classifier == nullptr) return absl::OkStatus();
  if (options.classifier == nullptr) {
    options.classifier = snapshot.classifier;
    return absl::OkStatus();
  }
  // The request's table is its rules followed by the built-in ones.
  const size_t builtin = ctxkit::Classifier::Default()->rules().size();
  const auto& request_rules = options.classifier->rules();
  const size_t own =
      request_rules.size() > builtin ? request_rules.size() - builtin : 0;
  auto combined = std::make_shared<ctxkit::Classifier>(*snapshot.classifier);
  for (size_t i = 0; i < own; ++i) {
    if (Status added = combined->AddRule(request_rules[i]); !added.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rules[%d]: %s (rules added to the compactor come first)", i,
          added.message()));
    }
  }
  options.classifier = std::move(combined);
  return absl::OkStatus();
}

// Compacts a parsed request with `snapshot`, from the messages as parsed.
int CompactParsed(const Snapshot& snapshot,
                  ctxkit::internal::CompactionRequest& request,
                  char** out_json, size_t* out_len, char** out_error) {
  if (absl::Status s = UseAddedRules(snapshot, request.options); !s.ok()) {
    return Report(s, out_error);
  }
  auto result = ctxkit::internal::CompactorAccess::Compact(
      *snapshot.compactor, request.messages, request.options);
  if (!result.ok()) return Report(result.status(), out_error);
  auto response = ctxkit::internal::ResponseJson(*result, request);
  if (!response.ok()) return Report(response.status(), out_error);
  return ReturnResponse(*response, BudgetNotMet(*result), out_json, out_len,
                        out_error);
}

// A bare array of messages as a request with every default.
std::string_view AsRequest(std::string_view json, std::string& storage) {
  const size_t start = json.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || json[start] != '[') return json;
  storage.reserve(json.size() + 14);
  storage += "{\"messages\":";
  storage += json;
  storage += '}';
  return storage;
}

}  // namespace

extern "C" {

int ctxkit_compactor_new(ctxkit_cache* cache, ctxkit_analytics* analytics,
                         ctxkit_compactor** out, char** out_error) {
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = nullptr;
  return Guard(out_error, [&] {
    auto handle = std::make_unique<ctxkit_compactor>();
    if (cache != nullptr) handle->cache = cache->cache.get();
    if (analytics != nullptr) handle->analytics = analytics->analytics.get();
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
                                    char** out_error) {
  if (compactor == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "compactor must not be NULL");
  }
  return Guard(out_error, [&] {
    std::shared_ptr<ctxkit::Summarizer> summarizer;
    if (fn != nullptr) {
      summarizer = std::make_shared<CallbackSummarizer>(fn, user_data);
    }
    // Building the Compactor under the lock keeps two concurrent changes
    // from losing one; it is cheap, and compactions do not take the lock
    // while they run.
    std::lock_guard<std::mutex> lock(compactor->mu);
    compactor->snapshot = MakeSnapshot(*compactor, std::move(summarizer),
                                       compactor->snapshot->classifier);
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
        current.classifier != nullptr
            ? *current.classifier
            : ctxkit::Classifier::WithBuiltinRules());
    if (Status status = classifier->AddRulesJson(
            View(rules_json, rules_json_len));
        !status.ok()) {
      return Report(status, out_error);
    }
    compactor->snapshot =
        MakeSnapshot(*compactor, current.summarizer, std::move(classifier));
    return Ok(out_error);
  });
}

int ctxkit_compact(ctxkit_compactor* compactor, const char* request_json,
                   size_t request_json_len, char** out_json, size_t* out_len,
                   char** out_error) {
  if (int rc = StartCompaction(compactor, out_json, out_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (request_json == nullptr && request_json_len != 0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "request_json is NULL with a non-zero length");
  }
  return Guard(out_error, [&] {
    const std::shared_ptr<const Snapshot> snapshot = compactor->Current();
    std::string storage;
    const std::string_view request =
        AsRequest(View(request_json, request_json_len), storage);
    simdjson::dom::parser parser;
    auto parsed = ctxkit::internal::ParseCompactionRequest(parser, request);
    if (!parsed.ok()) return Report(parsed.status(), out_error);
    return CompactParsed(*snapshot, *parsed, out_json, out_len, out_error);
  });
}

int ctxkit_compact_conversation(ctxkit_compactor* compactor,
                                ctxkit_conversations* convs,
                                const char* conversation_id,
                                size_t conversation_id_len,
                                const char* options_json,
                                size_t options_json_len, char** out_json,
                                size_t* out_len, char** out_error) {
  if (int rc = StartCompaction(compactor, out_json, out_len, out_error);
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
    // The options are a request without messages: parsed as one with an
    // empty history, after checking that they do not bring their own.
    std::string request = "{\"messages\":[]}";
    if (options_json != nullptr) {
      simdjson::dom::parser check;
      auto root = ctxkit::internal::ParseJson(
          check, View(options_json, options_json_len), "options_json");
      if (!root.ok()) return Report(root.status(), out_error);
      if (!root->is_object()) {
        return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                    "options_json must be an object");
      }
      // Bound to a name: iterating the temporary directly makes GCC 12
      // warn (-Wdangling-pointer) in optimized builds.
      const simdjson::dom::object options_object =
          root->get_object().value_unsafe();
      if (!options_object["messages"].error()) {
        return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                    "options_json.messages: not allowed; the stored "
                    "conversation's messages are compacted");
      }
      request = "{\"messages\":[]";
      for (const auto field : options_object) {
        request += ',';
        AppendJsonString(request, field.key);
        request += ':';
        request += simdjson::to_string(field.value);
      }
      request += '}';
    }
    simdjson::dom::parser parser;
    auto parsed = ctxkit::internal::ParseCompactionRequest(parser, request);
    if (!parsed.ok()) return Report(parsed.status(), out_error);
    if (absl::Status s = UseAddedRules(*snapshot, parsed->options); !s.ok()) {
      return Report(s, out_error);
    }
    uint64_t version = 0;
    auto result = snapshot->compactor->CompactConversation(
        *convs->conversations, View(conversation_id, conversation_id_len),
        parsed->options, &version);
    if (!result.ok()) return Report(result.status(), out_error);
    auto response = ctxkit::internal::ResponseJson(*result, *parsed);
    if (!response.ok()) return Report(response.status(), out_error);
    // The conversation and the view's version go after schema_version (or
    // first, in seed 000's shape, which has none).
    const std::string_view body(*response);
    constexpr std::string_view kHead = "{\"schema_version\":1,";
    const size_t head = body.substr(0, kHead.size()) == kHead ? kHead.size()
                                                               : size_t{1};
    std::string document(body.substr(0, head));
    document += "\"conversation_id\":";
    AppendJsonString(document, View(conversation_id, conversation_id_len));
    document += absl::StrFormat(",\"view_version\":%d,", version);
    document += body.substr(head);
    return ReturnResponse(document, BudgetNotMet(*result), out_json, out_len,
                          out_error);
  });
}

int ctxkit_chat_validate(const char* history_json, size_t history_json_len,
                         const char* format, char** out_error) {
  if (history_json == nullptr && history_json_len != 0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "history_json is NULL with a non-zero length");
  }
  return Guard(out_error, [&] {
    ctxkit::ChatFormat chat_format = ctxkit::ChatFormat::kAuto;
    if (format != nullptr) {
      auto parsed = ctxkit::ParseChatFormat(format);
      if (!parsed.ok()) return Report(parsed.status(), out_error);
      chat_format = *parsed;
    }
    return Report(ctxkit::ValidateChatHistory(
                      View(history_json, history_json_len), chat_format),
                  out_error);
  });
}

}  // extern "C"
