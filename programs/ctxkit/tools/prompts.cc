// Seed 000's three prompts, their texts as the seed gives them, filled from
// the stored conversation: its title, model, message count, tokens, creation
// time and its history as "[USER]: ..." blocks.
//
// Arguments are strings (MCP prompt arguments). An empty value counts as not
// given (clients' forms send "" for an optional field left blank). Numbers
// are whole decimal numbers, digits only, in a documented range; anything
// else is INVALID_ARGUMENT naming the argument (the session sends -32602).
//
// Which conversation. With conversation_id, that one (NOT_FOUND / an
// INVALID_ARGUMENT for a malformed id, both -32602). summarize_context and
// extract_essentials without it (and, for extract_essentials, without
// content) take the most recently updated conversation -- the one the agent
// is most likely working on -- and say INVALID_ARGUMENT when the store has
// none, since there is then nothing to fill the prompt with.

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "ctxkit/conversations.h"
#include "ctxkit/model_registry.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"

namespace ctxkit::tools {

namespace {

using mcp::Completions;
using mcp::PromptArgument;
using mcp::PromptOutput;
using mcp::RequestContext;

// Ranges of the numeric arguments.
constexpr uint64_t kMaxSummaryTokens = 1000000;
constexpr uint64_t kMinReductionPercent = 1;
constexpr uint64_t kMaxReductionPercent = 99;
constexpr uint64_t kMaxPreserveRecent = ConversationLimits::kMaxBatchMessages;
// Longest model name (ConversationLimits::kMaxModelBytes).
constexpr size_t kMaxModelBytes = ConversationLimits::kMaxModelBytes;

constexpr std::array<std::string_view, 5> kExtractTypes = {
    "facts", "code", "decisions", "questions", "all"};

// The value of argument `name`, nullopt when absent or empty.
std::optional<std::string_view> Find(std::span<const PromptArgument> arguments,
                                     std::string_view name) {
  for (const PromptArgument& argument : arguments) {
    if (argument.name == name && !argument.value.empty()) return argument.value;
  }
  return std::nullopt;
}

// `value` quoted for an error message, cut at 40 bytes.
std::string Quoted(std::string_view value) {
  constexpr size_t kMaxShown = 40;
  std::string shown = "\"" + std::string(value.substr(0, kMaxShown));
  if (value.size() > kMaxShown) shown += "...";
  return shown + "\"";
}

// A whole number in [min, max]: digits only, no sign, spaces or exponent.
StatusOr<uint64_t> ParseWhole(std::string_view name, std::string_view value,
                              uint64_t min, uint64_t max) {
  uint64_t number = 0;
  const char* end = value.data() + value.size();
  const bool digits = std::all_of(value.begin(), value.end(), [](char c) {
    return absl::ascii_isdigit(c);
  });
  const auto parsed = std::from_chars(value.data(), end, number);
  if (!digits || parsed.ec != std::errc() || parsed.ptr != end ||
      number < min || number > max) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(name) + " must be a whole number from " +
                      std::to_string(min) + " to " + std::to_string(max) +
                      ", got " + Quoted(value));
  }
  return number;
}

StatusOr<std::optional<uint64_t>> OptionalWhole(
    std::span<const PromptArgument> arguments, std::string_view name,
    uint64_t min, uint64_t max) {
  const auto value = Find(arguments, name);
  if (!value) return std::optional<uint64_t>();
  auto number = ParseWhole(name, *value, min, max);
  if (!number.ok()) return number.status();
  return std::optional<uint64_t>(*number);
}

// ms since the epoch as "2024-11-15T10:00:00.000Z" (proleptic Gregorian,
// UTC; H. Hinnant's civil_from_days, valid for every int64 day count the
// store can hold).
std::string IsoTime(int64_t ms) {
  constexpr int64_t kMsPerDay = 86400000;
  int64_t days = ms / kMsPerDay;
  int64_t rest = ms % kMsPerDay;
  if (rest < 0) {
    rest += kMsPerDay;
    --days;
  }
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer),
                "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(year), static_cast<long long>(month),
                static_cast<long long>(day),
                static_cast<long long>(rest / 3600000),
                static_cast<long long>(rest / 60000 % 60),
                static_cast<long long>(rest / 1000 % 60),
                static_cast<long long>(rest % 1000));
  return buffer;
}

std::string UpperRole(MessageRole role) {
  std::string name = MessageRoleName(role);
  for (char& c : name) c = static_cast<char>(c - 'a' + 'A');
  return name;
}

// The history as the seed shows it: "[USER]: <content>" blocks separated by
// blank lines, an assistant's tool calls after its text. CANCELLED when the
// request is cancelled while a long history is written.
StatusOr<std::string> History(const std::vector<Message>& messages,
                              RequestContext& context) {
  if (messages.empty()) return std::string("(no messages yet)");
  std::string text;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i % 1024 == 1023 && context.Cancelled()) {
      return Status(StatusCode::kCancelled, "the request was cancelled");
    }
    const Message& m = messages[i];
    if (i > 0) text += "\n\n";
    text += "[" + UpperRole(m.role) + "]: ";
    text += m.content;
    if (m.tool_calls.has_value()) {
      text += m.content.empty() ? "[tool calls: " : "\n[tool calls: ";
      text += *m.tool_calls;
      text += "]";
    }
  }
  return text;
}

// The conversation `id`, or without one the most recently updated (ties:
// the newest created), with its messages.
StatusOr<ConversationDetail> LoadConversation(
    std::optional<std::string_view> id, std::string_view prompt,
    RequestContext& context) {
  ConversationStore& conversations = *context.services().conversations;
  std::string chosen;
  if (id) {
    chosen = std::string(*id);
  } else {
    int64_t latest = 0;
    std::string cursor;
    bool first = true;
    while (first || !cursor.empty()) {
      first = false;
      if (context.Cancelled()) {
        return Status(StatusCode::kCancelled, "the request was cancelled");
      }
      auto page = conversations.List(ConversationLimits::kMaxListLimit, cursor);
      if (!page.ok()) return page.status();
      for (const Conversation& c : page->conversations) {
        if (chosen.empty() || c.updated_at > latest) {
          chosen = c.id;
          latest = c.updated_at;
        }
      }
      cursor = std::move(page->next_cursor);
    }
    if (chosen.empty()) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(prompt) +
                        " needs conversation_id: the store holds no "
                        "conversation yet");
    }
    context.Log(mcp::LogLevel::kDebug,
                std::string(prompt) +
                    ": no conversation_id, using the most recently updated "
                    "conversation " +
                    chosen);
  }
  return conversations.Get(chosen, /*include_messages=*/true);
}

// ---- summarize_context ----

StatusOr<PromptOutput> SummarizeContext(
    std::span<const PromptArgument> arguments, RequestContext& context) {
  auto max_tokens =
      OptionalWhole(arguments, "max_summary_tokens", 1, kMaxSummaryTokens);
  if (!max_tokens.ok()) return max_tokens.status();
  const auto focus = Find(arguments, "focus");
  auto detail = LoadConversation(Find(arguments, "conversation_id"),
                                 "summarize_context", context);
  if (!detail.ok()) return detail.status();
  const Conversation& c = detail->conversation;
  auto history = History(detail->messages, context);
  if (!history.ok()) return history.status();

  std::string text = "# Conversation Summarization Request\n\n";
  text += "**Conversation:** " + c.title + "\n";
  text += "**Model:** " + c.model + "\n";
  text += "**Messages:** " + std::to_string(c.message_count) + "\n";
  text += "**Total Tokens:** " + std::to_string(c.total_tokens) + "\n";
  text += "**Created:** " + IsoTime(c.created_at) + "\n\n";
  text += "## Conversation History\n\n" + *history + "\n\n---\n\n";
  text +=
      "## Summarization Instructions\n\n"
      "Please summarize the above conversation, focusing on:\n"
      "- Main topics and themes discussed\n"
      "- Key technical details or code snippets\n"
      "- Important decisions or conclusions\n"
      "- Questions asked and answers provided\n"
      "- Any action items or next steps\n\n";
  if (focus) text += "**Special Focus:** " + std::string(*focus) + "\n\n";
  text +=
      "**Format Requirements:**\n"
      "- Use clear section headers\n"
      "- Bullet points for lists\n"
      "- Preserve critical technical details\n"
      "- Be concise but comprehensive\n";
  if (*max_tokens) {
    text +=
        "- Keep summary under " + std::to_string(**max_tokens) + " tokens\n";
  }
  text +=
      "\n**Summary Structure:**\n\n"
      "**Overview:**\n[1-2 sentence high-level summary]\n\n"
      "**Main Topics:**\n- [topic 1 with brief context]\n"
      "- [topic 2 with brief context]\n\n"
      "**Technical Details:**\n- [key technical points, code patterns, "
      "etc.]\n\n"
      "**Key Takeaways:**\n- [important conclusions or decisions]\n\n"
      "**Unresolved Items:**\n- [open questions or pending tasks]\n\n"
      "Now provide the summary:";

  PromptOutput output;
  output.description = "Summarize the conversation \"" + c.title + "\"";
  output.messages.push_back({"user", std::move(text)});
  return output;
}

// ---- compress_conversation ----

// round(total * (100 - percent) / 100), without overflow.
uint64_t TargetTokens(uint64_t total, uint64_t percent) {
  const uint64_t keep = 100 - percent;
  return total / 100 * keep + (total % 100 * keep + 50) / 100;
}

std::string MessagesPhrase(uint64_t count) {
  return count == 1 ? "1 message" : std::to_string(count) + " messages";
}

StatusOr<PromptOutput> CompressConversation(
    std::span<const PromptArgument> arguments, RequestContext& context) {
  const auto id = Find(arguments, "conversation_id");
  if (!id) {
    return Status(StatusCode::kInvalidArgument,
                  "compress_conversation needs conversation_id, got an empty "
                  "value");
  }
  auto percent = OptionalWhole(arguments, "target_reduction_percent",
                               kMinReductionPercent, kMaxReductionPercent);
  if (!percent.ok()) return percent.status();
  auto preserve =
      OptionalWhole(arguments, "preserve_recent_count", 0, kMaxPreserveRecent);
  if (!preserve.ok()) return preserve.status();
  const uint64_t reduction = percent->value_or(50);
  auto detail = LoadConversation(id, "compress_conversation", context);
  if (!detail.ok()) return detail.status();
  const Conversation& c = detail->conversation;
  // Asking to keep more messages than there are keeps them all.
  const uint64_t recent =
      std::min<uint64_t>(preserve->value_or(5), c.message_count);
  auto history = History(detail->messages, context);
  if (!history.ok()) return history.status();
  const std::string target =
      std::to_string(TargetTokens(c.total_tokens, reduction));
  const std::string percent_text = std::to_string(reduction) + "%";

  std::string text =
      "# Conversation Compression Request\n\n"
      "You are an expert at compressing conversation context while "
      "preserving essential information.\n\n"
      "## Original Conversation\n\n";
  text += "**Title:** " + c.title + "\n";
  text += "**Model:** " + c.model + "\n";
  text += "**Messages:** " + std::to_string(c.message_count) + "\n";
  text += "**Current Tokens:** " + std::to_string(c.total_tokens) + "\n";
  text += "**Target:** Reduce by " + percent_text + " to ~" + target +
          " tokens\n\n";
  text += "## Full Conversation History\n\n" + *history + "\n\n---\n\n";
  text += "## Compression Instructions\n\n";
  text += "Your task is to compress this conversation by " + percent_text +
          " while:\n\n";
  text +=
      "**Preserve:**\n"
      "- All technical code snippets and examples\n"
      "- Key decisions and conclusions\n"
      "- Important facts and data\n"
      "- Action items and next steps\n";
  if (recent > 0) {
    text +=
        "- The most recent " + MessagesPhrase(recent) + " (keep verbatim)\n";
  }
  text +=
      "\n**Compress:**\n"
      "- Redundant explanations\n"
      "- Small talk and pleasantries\n"
      "- Repetitive questions/answers\n"
      "- Verbose descriptions\n"
      "- Intermediate discussion steps\n\n"
      "**Format:**\n"
      "Return a compressed conversation in this structure:\n\n"
      "```json\n"
      "{\n"
      "  \"summary\": \"[High-level summary of compressed content]\",\n"
      "  \"key_points\": [\n"
      "    \"[Essential point 1]\",\n"
      "    \"[Essential point 2]\"\n"
      "  ],\n"
      "  \"code_snippets\": [\n"
      "    {\n"
      "      \"description\": \"[What this code does]\",\n"
      "      \"code\": \"[The actual code]\"\n"
      "    }\n"
      "  ],\n"
      "  \"decisions\": [\n"
      "    \"[Important decision 1]\"\n"
      "  ],\n";
  if (recent > 0) {
    text += "  \"recent_messages\": [\n    // Most recent " +
            MessagesPhrase(recent) + " (verbatim)\n  ]\n";
  } else {
    text += "  \"recent_messages\": []\n";
  }
  text += "}\n```\n\n";
  text += "**Target:** ~" + target + " tokens\n\n";
  text += "Now compress the conversation:";

  PromptOutput output;
  output.description =
      "Compress the conversation \"" + c.title + "\" by " + percent_text;
  output.messages.push_back({"user", std::move(text)});
  return output;
}

// ---- extract_essentials ----

struct ExtractSection {
  std::string_view type;
  std::string_view instructions;  // "### Facts\n..." without a final newline
  std::string_view output;        // its member of the output JSON
  std::string_view statistics;    // its members of "statistics"
};

constexpr ExtractSection kSections[] = {
    {"facts",
     "### Facts\nObjective, verifiable information:\n"
     "- Technical specifications\n- API endpoints\n- Configuration values\n"
     "- Version numbers\n- File paths\n- Error messages",
     "  \"facts\": [\n"
     "    {\n"
     "      \"category\": \"technical|configuration|version|path|error\",\n"
     "      \"fact\": \"[The factual statement]\",\n"
     "      \"context\": \"[Where/when this was mentioned]\"\n"
     "    }\n"
     "  ]",
     "    \"total_facts\": 0"},
    {"code",
     "### Code\nAll code snippets, commands, and technical examples:\n"
     "- Function definitions\n- Code blocks\n- Command-line instructions\n"
     "- Configuration snippets\n- SQL queries",
     "  \"code\": [\n"
     "    {\n"
     "      \"language\": \"[Programming language]\",\n"
     "      \"description\": \"[What this code does]\",\n"
     "      \"code\": \"[The actual code]\",\n"
     "      \"context\": \"[Why this was shared]\"\n"
     "    }\n"
     "  ]",
     "    \"total_code_snippets\": 0"},
    {"decisions",
     "### Decisions\nImportant conclusions and choices:\n"
     "- Architecture decisions\n- Technology choices\n"
     "- Approach selections\n- Problem resolutions",
     "  \"decisions\": [\n"
     "    {\n"
     "      \"decision\": \"[What was decided]\",\n"
     "      \"rationale\": \"[Why this was chosen]\",\n"
     "      \"alternatives\": \"[What else was considered]\"\n"
     "    }\n"
     "  ]",
     "    \"total_decisions\": 0"},
    {"questions",
     "### Questions\nUnanswered or important questions:\n"
     "- Open questions\n- Clarification needs\n- Pending items",
     "  \"questions\": [\n"
     "    {\n"
     "      \"question\": \"[The question]\",\n"
     "      \"status\": \"answered|unanswered\",\n"
     "      \"answer\": \"[Answer if available]\"\n"
     "    }\n"
     "  ]",
     "    \"total_questions\": 0,\n    \"answered_questions\": 0"},
};

StatusOr<PromptOutput> ExtractEssentials(
    std::span<const PromptArgument> arguments, RequestContext& context) {
  const auto id = Find(arguments, "conversation_id");
  const auto content = Find(arguments, "content");
  const std::string_view type = Find(arguments, "extract_type").value_or("all");
  if (std::find(kExtractTypes.begin(), kExtractTypes.end(), type) ==
      kExtractTypes.end()) {
    return Status(StatusCode::kInvalidArgument,
                  "extract_type must be facts, code, decisions, questions or "
                  "all, got " +
                      Quoted(type));
  }
  const auto model_argument = Find(arguments, "model");
  if (model_argument && model_argument->size() > kMaxModelBytes) {
    return Status(
        StatusCode::kInvalidArgument,
        "model must be at most " + std::to_string(kMaxModelBytes) + " bytes");
  }
  if (id && content) {
    return Status(StatusCode::kInvalidArgument,
                  "extract_essentials takes conversation_id or content, not "
                  "both");
  }

  std::string text = "# Essential Information Extraction\n\n";
  std::string description;
  if (content) {
    // The model counts the given content; a stored conversation keeps the
    // counts of its own model.
    const std::string model(
        model_argument.value_or(context.services().config.default_model));
    auto count = CountTokens(model, *content);
    if (!count.ok()) return count.status();
    text += "Extract essential information from the following content.\n\n";
    text += "## Source Content\n\n";
    text += "**Model:** " + model + "\n";
    text += "**Tokens:** " + std::to_string(count->tokens) + "\n\n";
    text += "## Full Content\n\n" + std::string(*content) + "\n\n---\n\n";
    description = "Extract " + std::string(type) + " essentials from the " +
                  "given content";
  } else {
    auto detail = LoadConversation(id, "extract_essentials", context);
    if (!detail.ok()) return detail.status();
    const Conversation& c = detail->conversation;
    auto history = History(detail->messages, context);
    if (!history.ok()) return history.status();
    text +=
        "Extract essential information from the following conversation.\n\n";
    text += "## Source Conversation\n\n";
    text += "**Title:** " + c.title + "\n";
    text += "**Model:** " + c.model + "\n";
    text += "**Messages:** " + std::to_string(c.message_count) + "\n";
    text += "**Tokens:** " + std::to_string(c.total_tokens) + "\n\n";
    text += "## Full Content\n\n" + *history + "\n\n---\n\n";
    description = "Extract " + std::string(type) +
                  " essentials from the conversation \"" + c.title + "\"";
  }

  const bool all = type == "all";
  text += "## Extraction Instructions\n\n";
  text += all ? "Extract the following types of information:\n\n"
              : "Extract the following type of information:\n\n";
  std::string output_members;
  std::string statistics;
  for (const ExtractSection& section : kSections) {
    if (!all && section.type != type) continue;
    text += std::string(section.instructions) + "\n\n";
    output_members += std::string(section.output) + ",\n";
    if (!statistics.empty()) statistics += ",\n";
    statistics += section.statistics;
  }
  text +=
      "## Output Format\n\nReturn a structured JSON object:\n\n```json\n{\n";
  text += output_members;
  text += "  \"statistics\": {\n" + statistics + "\n  }\n}\n```\n\n";
  text += "Now extract the essential information:";

  PromptOutput output;
  output.description = std::move(description);
  output.messages.push_back({"user", std::move(text)});
  return output;
}

// ---- completions ----

Completions CompleteExtractType(std::string_view prefix, size_t limit,
                                RequestContext&) {
  Completions result;
  size_t matches = 0;
  for (std::string_view type : kExtractTypes) {
    if (!type.starts_with(prefix)) continue;
    ++matches;
    if (result.values.size() < limit) result.values.emplace_back(type);
  }
  result.total = matches;
  return result;
}

// The registry's model names (not its prefix entries, which are no names).
Completions CompleteModel(std::string_view prefix, size_t limit,
                          RequestContext&) {
  std::vector<std::string> names;
  for (const ModelInfo& info : ModelRegistry::Default().List()) {
    if (!info.is_prefix && std::string_view(info.name).starts_with(prefix)) {
      names.push_back(info.name);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  Completions result;
  result.total = names.size();
  if (names.size() > limit) names.resize(limit);
  result.values = std::move(names);
  return result;
}

constexpr mcp::PromptArgumentSpec kSummarizeArguments[] = {
    {"conversation_id",
     "UUID of the conversation to summarize (default: the most recently "
     "updated one)",
     false, CompleteConversationId},
    {"focus", "Specific aspect to focus on in the summary", false, nullptr},
    {"max_summary_tokens",
     "Maximum tokens for the summary, a whole number from 1 to 1000000", false,
     nullptr},
};

constexpr mcp::PromptArgumentSpec kCompressArguments[] = {
    {"conversation_id", "UUID of the conversation to compress", true,
     CompleteConversationId},
    {"target_reduction_percent",
     "Target reduction in percent, a whole number from 1 to 99 (default: 50)",
     false, nullptr},
    {"preserve_recent_count",
     "Number of recent messages to keep verbatim (default: 5)", false, nullptr},
};

constexpr mcp::PromptArgumentSpec kExtractArguments[] = {
    {"conversation_id",
     "UUID of the conversation to extract from (default, when content is not "
     "given either: the most recently updated one)",
     false, CompleteConversationId},
    {"content",
     "Text to extract from instead of a conversation (not with "
     "conversation_id)",
     false, nullptr},
    {"extract_type", "facts, code, decisions, questions or all (default: all)",
     false, CompleteExtractType},
    {"model",
     "Model counting the tokens of content (default: the server's "
     "default model, claude-3-5-sonnet unless configured)",
     false, CompleteModel},
};

}  // namespace

std::span<const mcp::PromptSpec> SeedPrompts() {
  static const std::vector<mcp::PromptSpec>* const kPrompts =
      new std::vector<mcp::PromptSpec>{
          {"summarize_context", "Summarize context",
           "Generate a comprehensive summary of conversation context.",
           kSummarizeArguments, SummarizeContext},
          {"compress_conversation", "Compress conversation",
           "Generate a compressed version of conversation while preserving "
           "essentials.",
           kCompressArguments, CompressConversation},
          {"extract_essentials", "Extract essentials",
           "Extract only essential information from context (facts, code, "
           "decisions, etc.).",
           kExtractArguments, ExtractEssentials},
      };
  return *kPrompts;
}

}  // namespace ctxkit::tools
