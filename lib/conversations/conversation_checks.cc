// Checks of what callers give the ConversationStore, and the token counts of
// the messages they add.

#include "lib/conversations/conversation_checks.h"

#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "lib/base/field_check.h"
#include "lib/conversations/conversation_records.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_macros.h"
#include "lib/tokenizer/tokenizer_internal.h"

namespace ctxkit::internal {
namespace {

std::string FieldName(std::string_view prefix, std::string_view field) {
  if (prefix.empty()) return std::string(field);
  return absl::StrFormat("%s.%s", prefix, field);
}

}  // namespace

absl::StatusOr<ModelCounter> ModelCounter::For(std::string_view model) {
  ModelCounter counter;
  const ResolvedModel resolved = ModelRegistry::Default().Resolve(model);
  if (!resolved.info.encoding.empty()) {
    auto tokenizer = RegistryTokenizerForEncoding(ModelRegistry::Default(),
                                                  resolved.info.encoding);
    if (tokenizer.ok()) {
      counter.tokenizer_ = *tokenizer;
    } else if (tokenizer.status().code() !=
               absl::StatusCode::kFailedPrecondition) {
      return tokenizer.status();
    }
  }
  counter.options_.allowed_special = SpecialTokenSet::None();
  counter.options_.disallowed_special = SpecialTokenSet::None();
  return counter;
}

absl::StatusOr<uint64_t> ModelCounter::Count(std::string_view text) const {
  if (text.empty()) return 0;
  if (!tokenizer_) return EstimateTokens(text);
  CTXKIT_ASSIGN_OR_RETURN(size_t n,
                          TokenizerCount(*tokenizer_, text, options_));
  return n;
}

absl::Status CheckMetadata(std::string_view metadata) {
  return CheckJsonObject("metadata", metadata,
                         ConversationLimits::kMaxMetadataBytes);
}

absl::Status CheckTitle(std::string_view title) {
  return CheckText("title", title, ConversationLimits::kMaxTitleBytes);
}

absl::StatusOr<uint64_t> CheckAndCount(const NewMessage& m,
                                       std::string_view prefix,
                                       const ModelCounter& counter,
                                       simdjson::dom::parser& parser) {
  if (static_cast<uint8_t>(m.role) > static_cast<uint8_t>(MessageRole::kTool)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is %d; it must be user, assistant, system or tool",
                        FieldName(prefix, "role"), static_cast<int>(m.role)));
  }
  CTXKIT_RETURN_IF_ERROR(CheckText(FieldName(prefix, "content"), m.content,
                                   ConversationLimits::kMaxContentBytes,
                                   /*allow_empty=*/true));
  if (m.name) {
    CTXKIT_RETURN_IF_ERROR(CheckText(FieldName(prefix, "name"), *m.name,
                                     ConversationLimits::kMaxNameBytes));
  }
  if (m.tool_call_id) {
    const std::string field = FieldName(prefix, "tool_call_id");
    CTXKIT_RETURN_IF_ERROR(CheckText(field, *m.tool_call_id,
                                     ConversationLimits::kMaxToolCallIdBytes));
    if (m.role != MessageRole::kTool) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is only allowed on tool messages (role is %s)",
                          field, MessageRoleName(m.role)));
    }
  }
  CTXKIT_ASSIGN_OR_RETURN(uint64_t tokens, counter.Count(m.content));
  if (m.tool_calls) {
    const std::string field = FieldName(prefix, "tool_calls");
    CTXKIT_RETURN_IF_ERROR(CheckText(field, *m.tool_calls,
                                     ConversationLimits::kMaxToolCallsBytes));
    if (m.role != MessageRole::kAssistant) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is only allowed on assistant messages (role is %s)", field,
          MessageRoleName(m.role)));
    }
    CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::element root,
                            ParseJson(parser, *m.tool_calls, field));
    CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::array calls, AsArray(root, field));
    size_t i = 0;
    for (simdjson::dom::element call : calls) {
      const std::string call_path = JsonIndexPath(field, i++);
      CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::object call_obj,
                              AsObject(call, call_path));
      CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::object function,
                              GetObject(call_obj, "function", call_path));
      const std::string function_path = JsonPath(call_path, "function");
      CTXKIT_ASSIGN_OR_RETURN(std::string_view name,
                              GetString(function, "name", function_path));
      CTXKIT_ASSIGN_OR_RETURN(uint64_t name_tokens, counter.Count(name));
      tokens += name_tokens + MessageCountOptions{}.tokens_per_tool_call;
      simdjson::dom::element arguments;
      if (!function["arguments"].get(arguments)) {
        if (arguments.type() == simdjson::dom::element_type::STRING) {
          CTXKIT_ASSIGN_OR_RETURN(
              uint64_t t, counter.Count(arguments.get_string().value_unsafe()));
          tokens += t;
        } else if (arguments.type() == simdjson::dom::element_type::OBJECT) {
          const std::string minified = simdjson::minify(arguments);
          CTXKIT_ASSIGN_OR_RETURN(uint64_t t, counter.Count(minified));
          tokens += t;
        } else if (arguments.type() !=
                   simdjson::dom::element_type::NULL_VALUE) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s must be a string, an object or null (got %s)",
                              JsonPath(function_path, "arguments"),
                              JsonTypeName(arguments.type())));
        }
      }
    }
  }
  return tokens;
}

absl::Status CheckIdList(const std::vector<std::string>& ids,
                         std::vector<std::string>* normalized) {
  if (ids.empty() || ids.size() > ConversationLimits::kMaxBatchMessages) {
    return absl::InvalidArgumentError(
        absl::StrFormat("message_ids holds %d ids; it must hold 1 to %d",
                        ids.size(), ConversationLimits::kMaxBatchMessages));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    CTXKIT_ASSIGN_OR_RETURN(
        std::string id,
        NormalizeId(absl::StrFormat("message_ids[%d]", i), ids[i]));
    if (seen.insert(id).second) normalized->push_back(std::move(id));
  }
  return absl::OkStatus();
}

absl::Status AppendJsonString(std::string* out, std::string_view s) {
  JsonWriter writer;
  writer.String(s);
  CTXKIT_ASSIGN_OR_RETURN(std::string text, std::move(writer).Finish());
  out->append(text);
  return absl::OkStatus();
}

}  // namespace ctxkit::internal
