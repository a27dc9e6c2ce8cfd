// The C API's chat section (c.h, "Chat messages"): counting a chat request
// (ctxkit/message_count.h) and validating a history (ctxkit/compactor.h).

#include <cstdint>
#include <string>
#include <string_view>

#include "capi/c_internal.h"
#include "ctxkit/c.h"
#include "ctxkit/compactor.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"

// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

extern "C" {

int ctxkit_chat_count(const char* model, size_t model_len,
                      const char* messages_json, size_t messages_json_len,
                      uint32_t flags, size_t* out_total, char** out_json,
                      size_t* out_json_len, char** out_error) {
  if (out_total != nullptr) *out_total = 0;
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (out_total == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out_total is NULL");
  }
  if (out_json != nullptr && out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "out_json_len is NULL while out_json is not");
  }
  if ((model == nullptr && model_len != 0) ||
      (messages_json == nullptr && messages_json_len != 0)) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "a string is NULL with a non-zero length");
  }
  if ((flags & ~static_cast<uint32_t>(CTXKIT_CHAT_ESTIMATE_UNKNOWN_MODEL)) !=
      0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "unknown flags " + std::to_string(flags) +
                    " (expected CTXKIT_CHAT_* values)");
  }
  return Guard(out_error, [&] {
    const std::string_view model_name = View(model, model_len);
    if ((flags & CTXKIT_CHAT_ESTIMATE_UNKNOWN_MODEL) == 0) {
      // An estimate for a mistyped name would look like an exact count.
      auto known = ctxkit::ModelRegistry::Default().Find(model_name);
      if (!known.ok() &&
          known.status().code() == ctxkit::StatusCode::kNotFound) {
        return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                    "model: " + std::string(known.status().message()) +
                        " (pass CTXKIT_CHAT_ESTIMATE_UNKNOWN_MODEL to "
                        "estimate its tokens instead)");
      }
    }
    auto count = ctxkit::CountMessagesForModel(
        model_name, View(messages_json, messages_json_len));
    if (!count.ok()) return Report(count.status(), out_error);
    if (out_json != nullptr) {
      // The one count-messages document (message_count.h), as the CLI's.
      auto json = ctxkit::MessageCountToJson(*count, model_name);
      if (!json.ok()) return Report(json.status(), out_error);
      if (int rc = ReturnDoc(*json, out_json, out_json_len, out_error);
          rc != CTXKIT_OK) {
        return rc;
      }
    }
    *out_total = count->total;
    return Ok(out_error);
  });
}

int ctxkit_chat_validate(const char* history_json, size_t history_json_len,
                         const char* format, size_t format_len,
                         char** out_error) {
  if (int rc = CheckArgs({{"history_json", history_json, history_json_len},
                          {"format", format, format_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::ChatFormat chat_format = ctxkit::ChatFormat::kAuto;
    if (format != nullptr) {
      auto parsed =
          ctxkit::ParseChatFormat(std::string_view(format, format_len));
      if (!parsed.ok()) return Report(parsed.status(), out_error);
      chat_format = *parsed;
    }
    return Report(ctxkit::ValidateChatHistory(
                      View(history_json, history_json_len), chat_format),
                  out_error);
  });
}

}  // extern "C"
