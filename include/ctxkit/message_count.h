// Token counts of whole chat requests: messages, their content blocks, tool
// calls and tool definitions, with the tokens the chat format adds around
// them.
//
//   ctxkit::MessageCountOptions options;            // OpenAI layout
//   auto tok = ctxkit::Tokenizer::ForEncoding("o200k_base");
//   auto n = ctxkit::CountMessages(**tok, R"([{"role":"user",
//                                            "content":"hi"}])", options);
//   // n->total == 3 (message) + 1 ("user") + 1 ("hi") + 3 (reply) == 8
//
// Input: UTF-8 JSON, either an array of messages or an object
// {"messages": [...], "system": ..., "tools": [...]} ("system" and "tools"
// optional). Both OpenAI and Anthropic shapes are understood whatever the
// format: their content-block types do not collide, so one history may mix
// them. Wrong input is INVALID_ARGUMENT naming the field, e.g.
// "messages[3].content must be a string, an array of content blocks or null
// (got number)"; the array is called "messages" even when it is the root.
//
// Message members. A message object may hold only these members (any
// other, e.g. a misspelled "tool_call_idd", is INVALID_ARGUMENT naming the
// message, the member and the closest known one: "messages[3]: unknown key
// 'tool_call_idd'; did you mean 'tool_call_id'?"), as the OpenAI and
// Anthropic APIs refuse them too:
//   role, content                                 every format
//   name, tool_calls, tool_call_id, function_call, refusal, audio,
//   annotations                                   OpenAI (a response's
//                                                 message sent back included)
//   reasoning_content, reasoning, reasoning_details
//                                                 reasoning of DeepSeek, vLLM
//                                                 and OpenRouter
//   thinking, images, tool_name                   Ollama
//   prefix                                        Mistral, DeepSeek
//   cache_control                                 Anthropic prompt caching
//   is_demo                                       SWE-agent demonstrations
//   id, conversation_id, seq, tokens, is_compressed, created_at
//                                                 ctxkit's own message
//                                                 documents (conv get,
//                                                 compress_context) sent back
// The members of content blocks and of the request object are not checked.
// The Compactor (compactor.h) accepts the same members.
//
// The counting rules.
//
// OpenAI (MessageFormat::kOpenAI), after OpenAI's cookbook "How to count
// tokens with tiktoken" (openai/openai-cookbook,
// examples/How_to_count_tokens_with_tiktoken.ipynb, num_tokens_from_messages,
// for gpt-3.5-turbo-0125, gpt-4-0613, gpt-4o-2024-08-06, gpt-4o-mini):
//   3 per message, plus the tokens of every string field of the message
//   (role, content, name, tool_call_id, ...), plus 1 more for "name", plus 3
//   once to prime the reply (<|start|>assistant<|message|>).
// Llama 3 (kLlama3): 4 per message (<|start_header_id|>, <|end_header_id|>,
//   "\n\n", <|eot_id|>) plus its string fields as above, no extra for
//   "name", plus 5 once (<|begin_of_text|> and the assistant header).
// Anthropic (kAnthropic), after the legacy "\n\nHuman:" / "\n\nAssistant:"
//   turn markers the Claude vocabulary was made for: 3 per message (the
//   marker replaces the role, which is not counted), only "content" counted,
//   the top-level "system" counted as text, 3 once for the reply marker.
//   Anthropic publishes no offline formula, so these counts are estimates.
//
// Content: a string, null, or an array of blocks, each an object with a
// string "type":
//   text                 its "text"                       (OpenAI, Anthropic)
//   refusal              its "refusal"                    (OpenAI)
//   image_url            image_tokens, or low_detail_image_tokens for
//                        "detail": "low"                  (OpenAI)
//   image                anthropic_image_tokens           (Anthropic)
//   tool_use,            its "name" plus its "input" as minified JSON plus
//   server_tool_use      tokens_per_tool_call             (Anthropic)
//   tool_result          its "content" (string or blocks) (Anthropic)
//   thinking             its "thinking" when count_thinking (Anthropic)
//   document             the text of a "text" source or the blocks of a
//                        "content" source; otherwise as unknown
//   anything else        its whole block as minified JSON text, an
//                        overestimate on purpose
// OpenAI "tool_calls" (and the legacy "function_call"): per call the
//   function's name plus its arguments string plus tokens_per_tool_call.
// Ollama "images" (an array of base64 strings): image_tokens each.
//
// Tool definitions ("tools"): the OpenAI shape {"type":"function",
// "function":{name, description, parameters}} is counted with the
// cookbook's num_tokens_for_tools: per function 7 (o200k encodings) or 10
// (other encodings), plus the tokens of "name:description" (a final '.' of
// the description dropped); when it has properties 3, then per property 3
// plus "key:type:description", and for an enum -3 plus 3 and the item's
// tokens per item; plus 12 once at the end. ctxkit applies the same
// per-property rule to nested object properties, which the cookbook does not
// cover. The Anthropic shape {name, description, input_schema} is counted as
// its name, description and minified input_schema, plus, once per request in
// the kAnthropic format, anthropic_tool_prompt_tokens for the tool-use
// system prompt Anthropic adds.
//
// Special-token text inside messages (e.g. "<|endoftext|>") counts as
// ordinary text.
//
// Thread safety: the functions are reentrant and may run concurrently; the
// Tokenizer they are given is immutable.

#ifndef CTXKIT_MESSAGE_COUNT_H_
#define CTXKIT_MESSAGE_COUNT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/cancel.h"
#include "ctxkit/export.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"
#include "ctxkit/tokenizer.h"

namespace ctxkit {

struct MessageCountOptions {
  MessageFormat format = MessageFormat::kOpenAI;
  // Count "thinking" blocks. Anthropic drops the thinking of earlier
  // assistant turns from the context, so a history being re-sent may set
  // this false; true errs on the high side.
  bool count_thinking = true;
  // Added per tool call (OpenAI tool_calls, Anthropic tool_use) for the
  // markup around its name and arguments: ctxkit's estimate; the cookbook
  // gives no figure.
  size_t tokens_per_tool_call = 3;
  // OpenAI images: 85 base + 170 per 512-pixel tile; a 1024x1024 image in
  // high or auto detail has 4 tiles (765); "low" detail is always 85
  // (OpenAI's vision guide, gpt-4o family). The size is not in the request,
  // so every image is assumed to be 1024x1024.
  size_t image_tokens = 765;
  size_t low_detail_image_tokens = 85;
  // Anthropic images: width * height / 750, at most about 1600 once Claude
  // has scaled the image to 1.15 megapixels (Anthropic's vision guide);
  // the size is unknown, so the maximum is assumed.
  size_t anthropic_image_tokens = 1600;
  // The system prompt Anthropic builds when tools are given: the figure of
  // Anthropic's tool-use pricing table for tool_choice auto on Claude 3.7
  // and 4 models (older models and other tool_choice values differ by up to
  // about 200; not re-verified for this release, so override it when the
  // exact figure matters).
  size_t anthropic_tool_prompt_tokens = 346;
  // Asked between messages whether to stop counting (ctxkit/cancel.h has
  // the contract: how often, what is returned); empty = never. A cancelled
  // count returns CANCELLED.
  CancelCheck cancel;
};

struct MessageCount {
  // Tokens of each message, in input order, with its per-message overhead.
  std::vector<size_t> messages;
  // The top-level "system" field (Anthropic shape); 0 when absent.
  size_t system = 0;
  // Tool definitions, with their overheads; 0 when there are none.
  size_t tools = 0;
  // The once-per-request reply priming of the format.
  size_t reply_priming = 0;
  // The sum of all the above.
  size_t total = 0;
  // The encoding that counted the text; empty when EstimateTokens() did.
  std::string encoding;
  CountMethod method = CountMethod::kTokenizer;
  // True only when every part was counted by a rule known to reproduce the
  // provider's count: the model's own tokenizer, the kOpenAI or kLlama3
  // format, and only text content (no images, tool calls, tool definitions
  // or unknown blocks, whose rules are estimates).
  bool exact = false;
};

// Counts `messages_json` with `tokenizer` by the rules above. exact is
// computed as if `tokenizer` were the model's own tokenizer. Errors:
// INVALID_ARGUMENT for malformed JSON or a field of the wrong type (the
// message names it), RESOURCE_EXHAUSTED for a document too large to parse,
// CANCELLED when options.cancel says so.
CTXKIT_EXPORT StatusOr<MessageCount> CountMessages(
    const Tokenizer& tokenizer, std::string_view messages_json,
    const MessageCountOptions& options = {});

// Counts with EstimateTokens() instead of a tokenizer; exact is false.
CTXKIT_EXPORT StatusOr<MessageCount> EstimateMessages(
    std::string_view messages_json, const MessageCountOptions& options = {});

// Counts for `model` as `registry` resolves it: its tokenizer when available
// (else EstimateTokens()), its message format (options.format is ignored),
// and exact only if the model's encoding is its own. An unknown model is
// counted by EstimateTokens() in the kOpenAI format. Errors as
// CountMessages, plus those of a failing tokenizer construction other than
// unavailability.
CTXKIT_EXPORT StatusOr<MessageCount> CountMessagesForModel(
    std::string_view model, std::string_view messages_json,
    const MessageCountOptions& options = {},
    const ModelRegistry& registry = ModelRegistry::Default());

// The token_counter_type values of the chat-compaction API ctxkit honours
// ("generic", "openai", "anthropic", "ollama"), mapped onto ctxkit's
// counters. That API estimated from character counts; ctxkit counts:
//   generic    EstimateTokens(), kOpenAI layout (no tokenizer assumed)
//   openai     cl100k_base, kOpenAI (the GPT-3.5/GPT-4 tokenizer that
//              counter type names; counts for o200k models are usually
//              equal or lower, so it errs high for them)
//   anthropic  the "claude" encoding, kAnthropic; always an estimate
//   ollama     the "llama3" encoding, kLlama3: exact once a Llama 3
//              tokenizer was added to `registry`, EstimateTokens() until then
// An encoding that is not available falls back to EstimateTokens().
// INVALID_ARGUMENT for another counter type, listing the four; otherwise as
// CountMessagesForModel. options.format is ignored.
CTXKIT_EXPORT StatusOr<MessageCount> CountMessagesForCounterType(
    std::string_view counter_type, std::string_view messages_json,
    const MessageCountOptions& options = {},
    const ModelRegistry& registry = ModelRegistry::Default());

// `count` as the one count-messages document, which the C ABI
// (ctxkit_chat_count) returns and `ctxkit count --messages --json`
// prints:
//   {"schema_version":1,"model" (as asked; null when counted with an
//    encoding rather than for a model),"total","messages":[n, ...] (one per
//    message, with its overhead, in input order),"system","tools",
//    "reply_priming","encoding" ("" when estimated),"method" ("tokenizer" |
//    "heuristic"),"exact"}
// INVALID_ARGUMENT only if `model` or the encoding name is not valid UTF-8.
// Pure; thread-safe.
CTXKIT_EXPORT StatusOr<std::string> MessageCountToJson(
    const MessageCount& count, std::optional<std::string_view> model);

}  // namespace ctxkit

#endif  // CTXKIT_MESSAGE_COUNT_H_
