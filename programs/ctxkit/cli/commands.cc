// The command table: every command of the ctxkit program is one row here.

#include "programs/ctxkit/cli/commands.h"

#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/c.h"
#include "ctxkit/version.h"
#include "programs/ctxkit/cli/host_command.h"
#include "programs/ctxkit/cli/record_flags.h"
#include "programs/ctxkit/cli/store_location.h"

namespace ctxkit::program {

const Flag kJsonFlag{"--json", "",
                     "print one JSON document (one line) instead of text"};

namespace {

// Said by the help of every record command (conv, ref, cache, stats).
#define CTXKIT_RECORD_OUTPUT                                              \
  "Prints one JSON document on one line. Opens the store read-write; a\n" \
  "command that adds records creates it if missing, any other answers\n"  \
  "NOT_FOUND when there is none. Bad field values are INVALID_ARGUMENT\n" \
  "errors naming the field, unknown ids NOT_FOUND (exit status 1).\n"

std::string VersionLine() {
  // The library actually loaded, which is what --version is asked about
  // when a shared library and a program disagree.
  const std::string_view loaded = ctxkit_version_string();
  std::string line = "ctxkit " + std::string(loaded) + " (on-disk format " +
                     std::to_string(Store::kFormatVersion) + ")";
  if (loaded != CTXKIT_VERSION_STRING) {
    line += "; program built against " CTXKIT_VERSION_STRING;
  }
  return line;
}

}  // namespace

const Program& CtxkitProgram() {
  // Built once and never destroyed, so no destructor runs at exit.
  static const std::vector<Command>* const kCommands = new std::vector<Command>{
      {
          .name = "cache check",
          .summary = "say whether a content is cached, and under which key",
          .args_usage = "[-]",
          .max_args = 1,
          .flags = {&kContentFlag, &kFileFlag, &kCacheCheckPrefixFlag,
                    &kDbFlag},
          .description =
              "Looks the content (--content, --file or - for standard\n"
              "input) up by its hash and compares the stored bytes. Prints\n"
              "{\"exists\",\"key\",\"tokens_saved\"}; found counts as a hit,\n"
              "not found as a miss.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCacheCheck,
          .exclusive = {{&kContentFlag, &kFileFlag}},
      },
      {
          .name = "cache clear",
          .summary = "remove every cache entry, or those of one prefix",
          .flags = {&kCacheClearPrefixFlag, &kDbFlag},
          .description =
              "Prints {\"cleared\":N,\"prefix\":...}. Lifetime statistics\n"
              "(hits, misses, tokens saved) are kept.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCacheClear,
      },
      {
          .name = "cache get",
          .summary = "print a cached entry by its key",
          .args_usage = "KEY",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kDbFlag},
          .description =
              "KEY is what 'cache put' printed: PREFIX:<32 hex digits>.\n"
              "Prints the entry with its content, tokens, hit count (this\n"
              "retrieval included), times and model. An absent or expired\n"
              "entry is NOT_FOUND and counts as a miss.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCacheGet,
      },
      {
          .name = "cache put",
          .summary = "store a content in the cache and print its key",
          .args_usage = "[-]",
          .max_args = 1,
          .flags = {&kContentFlag, &kFileFlag, &kCachePrefixFlag,
                    &kCacheTtlFlag, &kCacheModelFlag, &kEstimateFlag,
                    &kCacheConversationFlag, &kDbFlag},
          .description =
              "Stores the content (--content, --file or - for standard\n"
              "input) under the key PREFIX:<XXH3-128 of the content>.\n"
              "Storing the same content under the same prefix again finds\n"
              "the same entry (\"already_cached\":true) and restarts its TTL.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCachePut,
          .exclusive = {{&kContentFlag, &kFileFlag}},
      },
      {
          .name = "cache stats",
          .summary = "show the cache's statistics",
          .flags = {&kCacheTopFlag, &kDbFlag},
          .description =
              "Prints the MCP Token Optimizer's cache-stats document:\n"
              "overview (entries, hits, misses, hit rate, tokens saved),\n"
              "performance, top entries, figures by prefix and by model,\n"
              "lifetime counters and recommendations.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCacheStats,
      },
      {
          .name = "cache sweep",
          .summary = "remove the expired cache entries",
          .flags = {&kDbFlag},
          .description = "Prints {\"expired_removed\":N}.\n"
                         "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCacheSweep,
      },
      {
          .name = "compact",
          .summary = "fit a chat history into a token budget",
          .args_usage = "[FILE|-]",
          .max_args = 1,
          .flags = {&kCompactMaxTokensFlag, &kCompactStrategyFlag,
                    &kCompactModelFlag, &kEstimateFlag, &kCompactExplainFlag,
                    &kCompactFormatFlag, &kCompactRecentWindowFlag,
                    &kCompactTargetRatioFlag, &kCompactRulesFlag},
          .description =
              "Reads a chat history from FILE (standard input for - or no\n"
              "FILE): an array of messages in OpenAI, Anthropic or plain\n"
              "{role, content} format, or a whole request object as the "
              "pgEdge\n"
              "agent's POST /api/chat/compact takes it ({\"messages\",\n"
              "\"max_tokens\",\"options\":{...},...}). Flags override the\n"
              "request's members of the same name. Keeps what matters (system\n"
              "prompts, the task, corrections, errors, recent messages),\n"
              "summarizes or drops the rest, never separates a tool call from\n"
              "its result, and prints the response on one line:\n"
              "{\"messages\",\"summary\",\"token_estimate\",\n"
              "\"compaction_info\",\"budget\",...}, the messages in the\n"
              "input's format. Token counts are exact, with the tokenizer of\n"
              "--model, else of the request's token_counter_type (the\n"
              "response's \"encoding\" names it). An unknown --model is a\n"
              "usage error naming the closest known ones; with --estimate its\n"
              "tokens are estimated instead (\"counting\":\"estimate\").\n"
              "--rules FILE (a JSON array of rules, see ctxkit/classifier.h)\n"
              "replaces the request's \"rules\". --explain adds\n"
              "\"decisions\": each input message's tier, the rule that chose\n"
              "it, and what happened to it and why. Uses no store.\n"
              "\n"
              "Exit status: 0 when the result fits the budget; 3 when it\n"
              "cannot (the messages that must be kept do not fit even\n"
              "truncated): the best-effort result is printed and stderr says\n"
              "by how much (ctxkit: OUT_OF_RANGE: budget: ...); 1 for bad\n"
              "input, an INVALID_ARGUMENT naming the field, e.g.\n"
              "messages[3].role; 2 for a usage error, such as a flag value\n"
              "out of its range or an unknown --model.\n",
          .handler = RunCompact,
          .partial_result_code = StatusCode::kOutOfRange,
      },
      {
          .name = "completion",
          .summary = "print a shell completion script (bash)",
          .args_usage = "bash",
          .min_args = 1,
          .max_args = 1,
          .description =
              "Prints a bash script that completes this program's commands,\n"
              "flags and flag values, generated from the same table as\n"
              "--help. Load it with 'source <(ctxkit completion bash)', or\n"
              "save it as /usr/share/bash-completion/completions/ctxkit.\n",
          .handler = RunCompletion,
      },
      {
          .name = "conv add",
          .summary = "add a message to a conversation",
          .args_usage = "ID [-]",
          .min_args = 1,
          .max_args = 2,
          .flags = {&kRoleFlag, &kContentFlag, &kFileFlag, &kNameFlag,
                    &kToolCallIdFlag, &kToolCallsFlag, &kCompressedFlag,
                    &kDbFlag},
          .description =
              "The content comes from --content, --file or - (standard\n"
              "input); an assistant message with --tool-calls may have none.\n"
              "Its tokens are counted with the conversation's model. Prints\n"
              "{\"message\":{...},\"conversation\":{...}}: the message's id,\n"
              "seq, tokens and content_bytes (its content is not sent back)\n"
              "and the totals after the addition.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunConvAdd,
          .exclusive = {{&kContentFlag, &kFileFlag}},
      },
      {
          .name = "conv create",
          .summary = "create a conversation and print it",
          .flags = {&kConvTitleFlag, &kConvModelFlag, &kEstimateFlag,
                    &kConvMetadataFlag, &kDbFlag},
          .description =
              "--title is required. Prints {\"conversation\":{...}} with its\n"
              "new id (a UUID), which the other conv commands take.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunConvCreate,
          .required = {&kConvTitleFlag},
      },
      {
          .name = "conv delete",
          .summary = "delete a conversation and all that belongs to it",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kDbFlag},
          .description =
              "Everything goes in one transaction. Prints how many messages\n"
              "and dependent records (references, cache entries) went.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunConvDelete,
      },
      {
          .name = "conv get",
          .summary = "print a conversation with its messages",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kNoMessagesFlag, &kDbFlag},
          .description =
              "Prints {\"conversation\",\"messages\",\"actual_tokens\"}:\n"
              "actual_tokens is the whole history as a chat request for the\n"
              "conversation's model, chat framing included.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunConvGet,
      },
      {
          .name = "conv list",
          .summary = "list conversations, newest first",
          .flags = {&kListLimitFlag, &kCursorFlag, &kDbFlag},
          .description =
              "Prints {\"conversations\",\"total\",\"showing\",\n"
              "\"next_cursor\"}; pass next_cursor to --cursor for the next\n"
              "page (null on the last page).\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunConvList,
      },
      {
          .name = "conv stats",
          .summary = "show token statistics of one conversation or of all",
          .args_usage = "[ID]",
          .max_args = 1,
          .flags = {&kTimelinePointsFlag, &kDbFlag},
          .description =
              "With ID: the MCP Token Optimizer's token-stats of that\n"
              "conversation (totals, timeline, context-window status) and its\n"
              "optimization tips. Without: the store-wide totals by model and\n"
              "by day, and general tips. 'ctxkit stats' adds the cache and\n"
              "references.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunConvStats,
      },
      {
          .name = "conv update",
          .summary = "change a conversation's title or metadata",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kConvTitleFlag, &kConvMetadataFlag, &kDbFlag},
          .description = "Prints {\"conversation\":{...}} after the change.\n"
                         "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunConvUpdate,
      },
      {
          .name = "count",
          .summary = "count the tokens of a text or of a chat request",
          .args_usage = "[FILE|-]",
          .max_args = 1,
          .flags = {&kModelFlag, &kEstimateFlag, &kEncodingFlag, &kSpecialFlag,
                    &kMessagesFlag, &kChunkSizeFlag, &kTextFlag, &kJsonFlag},
          .description =
              "Prints the number of tokens of FILE (standard input for - or\n"
              "no FILE), or of TEXT itself with --text, in the encoding of\n"
              "--encoding (default o200k_base) or of the model --model\n"
              "names. Counts are exact: the ids are those of OpenAI's\n"
              "tiktoken. An unknown model is a usage error naming the\n"
              "closest known ones; with --estimate it is counted with a\n"
              "heuristic estimate instead, as is a known model whose\n"
              "tokenizer is not available (Llama 3), said so on stderr;\n"
              "--json then shows \"method\":\"heuristic\", \"estimate\":true\n"
              "and what estimated it, and \"encoding\":null.\n"
              "\n"
              "Input of any size is read in chunks, counted on every core.\n"
              "A chunk ends only where cutting cannot change the tokens, so\n"
              "the count equals that of the whole text: after an ASCII\n"
              "letter or digit, before whitespace, punctuation or a digit\n"
              "or letter of the other kind (before whitespace only, with\n"
              "--special all), and after a CJK letter before 、。or ，.\n"
              "A stretch with no such place is one piece of the tokenizer's\n"
              "(megabytes of spaces, of punctuation, of CJK letters) and is\n"
              "held whole. Inputs over 100 MB show progress on stderr when\n"
              "it is a terminal.\n"
              "\n"
              "With --messages the input is a chat request as JSON: an\n"
              "array of messages or {\"messages\":[...],\"system\":...,\n"
              "\"tools\":[...]}, in OpenAI or Anthropic shape. The count\n"
              "includes the tokens the model's chat format adds (3 per\n"
              "message and 3 for the reply in OpenAI's layout); --json\n"
              "shows the count of each message.\n",
          .handler = RunCount,
          .exclusive = {{&kModelFlag, &kEncodingFlag}},
      },
      {
          .name = "ctx add",
          .summary = "add a message to a context of the graph",
          .args_usage = "ID [-]",
          .min_args = 1,
          .max_args = 2,
          .flags = {&kRoleFlag, &kContentFlag, &kFileFlag, &kImportanceFlag,
                    &kTagsFlag, &kDbFlag, &kConfigFlag},
          .description =
              "Creates the context when it is new. The content comes from\n"
              "--content, --file or - (standard input); --importance is\n"
              "low, medium, high or critical in any case. The message may\n"
              "trigger a summary and a cleanup (see ctxkit/context_graph.h):\n"
              "the result says so (summarized, linked, cleaned).\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxAdd,
          .exclusive = {{&kContentFlag, &kFileFlag}},
      },
      {
          .name = "ctx cleanup",
          .summary = "archive (or delete) the contexts unrelated to one",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kDryRunFlag, &kModeFlag, &kMinContextsFlag, &kKeepDaysFlag,
                    &kDbFlag, &kConfigFlag},
          .description =
              "Seed 003's keep-set from context ID: it, the contexts similar\n"
              "or related to it, its parent, siblings and children, the\n"
              "important and the recent ones stay; 'ctx restore' undoes an\n"
              "archive. Prints {cleanedContexts, kept}.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxCleanup,
      },
      {
          .name = "ctx delete",
          .summary = "delete a context, its conversation and its edges",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kDbFlag, &kConfigFlag},
          .description = "Everything goes in one transaction.\n"
                         "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxDelete,
      },
      {
          .name = "ctx get",
          .summary = "print a context with its newest messages and summary",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kCtxLimitFlag, &kDbFlag, &kConfigFlag},
          .description =
              "Prints retrieve_context's document: the newest --limit\n"
              "messages (default 100) oldest first, the summary, the\n"
              "counts, parentContextId and childContextIds.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxGet,
      },
      {
          .name = "ctx hierarchy",
          .summary = "where a context sits in the hierarchy, or the parents",
          .args_usage = "[ID]",
          .max_args = 1,
          .flags = {&kCursorFlag, &kDbFlag, &kConfigFlag},
          .description =
              "With ID: its parent, children, ancestors and hierarchical\n"
              "summary. Without: the ids of the contexts that have children.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxHierarchy,
      },
      {
          .name = "ctx list",
          .summary = "list contexts, the most recently active first",
          .flags = {&kCtxLimitFlag, &kCursorFlag, &kArchivedFlag, &kDbFlag,
                    &kConfigFlag},
          .description = "Pass next_cursor to --cursor for the next page.\n"
                         "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxList,
      },
      {
          .name = "ctx meta",
          .summary = "list, print or write meta summaries",
          .args_usage = "[META_ID]",
          .max_args = 1,
          .flags = {&kContextsFlag, &kCursorFlag, &kDbFlag, &kConfigFlag},
          .description =
              "Without META_ID: the meta summaries' ids. With it: that meta\n"
              "summary, or with --contexts A,B,... it written (created, or\n"
              "rewritten in place with the next version) over those.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxMeta,
      },
      {
          .name = "ctx metrics",
          .summary = "the graph's calls and counts over a day, week or month",
          .flags = {&kPeriodFlag, &kDbFlag, &kConfigFlag},
          .description =
              "get_context_metrics' document: totalCalls, byType,\n"
              "averageDuration (ms), averageScore (the share of calls that\n"
              "succeeded), historyTrend by day, and the graph's contexts,\n"
              "messages, edgesByType, summaries, hierarchies and\n"
              "metaSummaries. Calls are those every surface recorded (ctx\n"
              "commands, ctxkit mcp, ctxkit serve) in the store's analytics.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxMetrics,
      },
      {
          .name = "ctx path",
          .summary = "the path between two contexts",
          .args_usage = "SOURCE TARGET",
          .min_args = 2,
          .max_args = 2,
          .flags = {&kDirectionFlag, &kEdgeTypeFlag, &kMaxHopsFlag,
                    &kWeightedFlag, &kExpiredFlag, &kArchivedFlag,
                    &kEdgeFilterFlag, &kDbFlag, &kConfigFlag},
          .description =
              "The fewest hops (or with --weighted the largest product of\n"
              "weights) over current edges, either way unless --direction\n"
              "outgoing; --type takes a comma-separated list, --metadata an\n"
              "object each crossed edge's metadata must hold. Prints {path,\n"
              "hops, edges, totalWeight, found}; no path is found:false.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxPath,
      },
      {
          .name = "ctx relate",
          .summary = "add or update a typed, weighted edge",
          .args_usage = "SOURCE TARGET",
          .min_args = 2,
          .max_args = 2,
          .flags = {&kEdgeTypeFlag, &kWeightFlag, &kEdgeMetadataFlag,
                    &kCreateMissingFlag, &kReplaceParentFlag, &kDbFlag,
                    &kConfigFlag},
          .description =
              "An edge (SOURCE, --type, TARGET) that exists is updated: its\n"
              "weight, and --metadata merged into its metadata (RFC 7386).\n"
              "Both contexts must exist unless --create-missing.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxRelate,
          .required = {&kEdgeTypeFlag},
      },
      {
          .name = "ctx related",
          .summary = "the contexts related to one",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kEdgeTypeFlag, &kDirectionFlag, &kEdgesFlag,
                    &kCtxLimitFlag, &kExpiredFlag, &kArchivedFlag,
                    &kEdgeFilterFlag, &kTagsFlag, &kDbFlag, &kConfigFlag},
          .description =
              "Outgoing edges first, then incoming, in the order they were\n"
              "added; --edges prints each edge with its weight, times and\n"
              "metadata. --metadata '{\"auto\":true}' keeps the edges whose\n"
              "metadata holds those members (null: absent); --tags the\n"
              "contexts with a message carrying every tag.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxRelated,
      },
      {
          .name = "ctx restore",
          .summary = "bring back a context cleanup archived",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kDbFlag, &kConfigFlag},
          .description = CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxRestore,
      },
      {
          .name = "ctx similar",
          .summary = "the contexts most similar to a text",
          .args_usage = "TEXT",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kCtxLimitFlag, &kMinSimilarityFlag, &kMethodFlag,
                    &kTagsFlag, &kArchivedFlag, &kDbFlag, &kConfigFlag},
          .description =
              "BM25 over each context's messages, tags and summary, ranked\n"
              "by TF-IDF cosine (similarity, 0..1); a context needs no\n"
              "summary to be found. --tags keeps contexts with every tag.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxSimilar,
      },
      {
          .name = "ctx summarize",
          .summary = "write the next version of a context's summary",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kForceFlag, &kDbFlag, &kConfigFlag},
          .description =
              "Extractive and deterministic. Without --force a context with\n"
              "no message since its last summary keeps (and prints) it.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxSummarize,
      },
      {
          .name = "ctx unrelate",
          .summary = "delete an edge, or end its fact with --invalidate",
          .args_usage = "SOURCE TARGET",
          .min_args = 2,
          .max_args = 2,
          .flags = {&kEdgeTypeFlag, &kInvalidateFlag, &kDbFlag, &kConfigFlag},
          .description =
              "--invalidate keeps the edge as history (invalidAt and\n"
              "expiredAt set now): queries stop seeing it unless asked for\n"
              "expired edges.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunCtxUnrelate,
          .required = {&kEdgeTypeFlag},
      },
      {
          .name = "ctx verify",
          .summary = "check the graph's indexes and counters",
          .flags = {&kDbFlag, &kConfigFlag},
          .description =
              "Reads the whole graph in one snapshot: edge indexes mirror\n"
              "each other, counters equal a recount, the lexical index a\n"
              "recomputation, summary versions are contiguous, the\n"
              "hierarchy is acyclic. Prints the report; exit status 1 when\n"
              "it finds a problem.\n",
          .handler = RunCtxVerify,
      },
      {
          .name = "ctx viz",
          .summary = "draw a context and its neighbourhood",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kFormatFlag, &kDepthFlag, &kDbFlag, &kConfigFlag},
          .description =
              "json (the seed's document), mermaid, text or Graphviz dot, up\n"
              "to --depth hops; ids are escaped so no id breaks a diagram.\n",
          .handler = RunCtxViz,
      },
      {
          .name = "decode",
          .summary = "print the text of token ids",
          .args_usage = "[ID...]",
          .max_args = kUnlimitedArgs,
          .flags = {&kEncodingFlag, &kModelFlag},
          .description =
              "Prints the bytes the token ids stand for, in the encoding of\n"
              "--encoding (default o200k_base) or of --model: the ID\n"
              "arguments, or the ids on standard input, separated by\n"
              "spaces, commas or brackets, so the output of 'tokenize'\n"
              "(or a JSON array) decodes back to its text. A number that\n"
              "is not a token of the encoding is an error naming it and\n"
              "its place.\n",
          .handler = RunDecode,
          .exclusive = {{&kEncodingFlag, &kModelFlag}},
      },
      {
          .name = "demo",
          .summary = "store, count, compact, and serve an MCP session",
          .flags = {&kDemoDbFlag},
          .description =
              "Writes the records note:0001 .. note:1000 to the\n"
              "sub-database \"demo\" in one write transaction, reads some\n"
              "back with Get and a Cursor, and prints the figures of the\n"
              "store as 'store info' does. Without --db the store lives\n"
              "in a fresh directory under $TMPDIR (or /tmp) that is\n"
              "removed when the demo ends; the default store location is\n"
              "not touched. With --db the store is created if missing and\n"
              "kept; a second run rewrites the same records.\n"
              "\n"
              "Then it compacts a built-in agent session to 25 % of its\n"
              "tokens, and starts 'ctxkit mcp' on the same store as a child\n"
              "process to run a scripted MCP session over stdio: create a\n"
              "conversation, add messages, count, compress, read its\n"
              "statistics and get a prompt, one line per exchange.\n",
          .handler = RunDemo,
      },
      {
          .name = "encodings",
          .summary = "list the built-in encodings",
          .description = "Prints the names that --encoding accepts, one per "
                         "line.\n",
          .handler = RunEncodings,
      },
      {
          .name = "man",
          .summary = "print the manual page (troff)",
          .description =
              "Prints ctxkit(1), generated from the same table as --help.\n"
              "Read it with 'ctxkit man | man -l -', or install it as\n"
              "/usr/local/share/man/man1/ctxkit.1.\n",
          .handler = RunMan,
      },
      {
          .name = "mcp",
          .summary = "serve the tools over MCP on standard input and output",
          .flags = {&kDbFlag, &kConfigFlag, &kPrintConfigFlag},
          .description =
              "A Model Context Protocol server: one JSON-RPC message per line\n"
              "on standard input, one per line on standard output, logs on\n"
              "standard error. Tools: manage_conversation, compress_context,\n"
              "count_tokens, smart_cache, track_references, optimize_query\n"
              "(the MCP Token Optimizer) and compact_chat (the pgEdge agent);\n"
              "five resources with templates and three prompts. Ends at end\n"
              "of input (answering what it read) or on SIGTERM (finishing the\n"
              "message being written).\n"
              "\n"
              "Configuration, later sources winning: defaults, --config (a\n"
              "JSON object, or @FILE), environment (CTXKIT_DB,\n"
              "CTXKIT_PAGE_SIZE, ...), flags. --print-config prints the\n"
              "result as JSON and exits.\n",
          .handler = RunMcp,
      },
      {
          .name = "optimize",
          .summary = "make a prompt shorter and more direct",
          .args_usage = "[QUERY|-]",
          .max_args = 1,
          .flags = {&kQueryFileFlag, &kGoalFlag, &kOptimizeModelFlag,
                    &kEstimateFlag, &kMaxTokensFlag, &kContextFlag},
          .description =
              "Finds filler words, hedges, redundant phrases and politeness\n"
              "padding in QUERY (or the file of --file, or standard input for\n"
              "-) and rewrites it, keeping every content word, number,\n"
              "identifier, code span, quoted string and URL. Prints the MCP\n"
              "Token Optimizer's optimize_query document (original,\n"
              "optimized, analysis) on one line. Uses no store.\n",
          .handler = RunOptimize,
      },
      {
          .name = "ref add",
          .summary = "add a reference (file, url, code, note, document)",
          .args_usage = "[-]",
          .max_args = 1,
          .flags = {&kRefTypeFlag, &kRefTitleFlag, &kContentFlag, &kFileFlag,
                    &kRefConversationFlag, &kRefMetadataFlag, &kDbFlag},
          .description =
              "--type and --title are required; the content comes from\n"
              "--content, --file or - (standard input). The reference is\n"
              "indexed for 'ref search' and its content's tokens counted.\n"
              "Prints it, with a preview instead of the content.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunRefAdd,
          .required = {&kRefTypeFlag, &kRefTitleFlag},
          .exclusive = {{&kContentFlag, &kFileFlag}},
      },
      {
          .name = "ref delete",
          .summary = "delete a reference",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kDbFlag},
          .description = "Prints {\"deleted\":true,\"id\":...}.\n"
                         "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunRefDelete,
      },
      {
          .name = "ref get",
          .summary = "print a reference with its content",
          .args_usage = "ID",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kDbFlag},
          .description = CTXKIT_RECORD_OUTPUT,
          .handler = RunRefGet,
      },
      {
          .name = "ref list",
          .summary = "list references, all or one conversation's",
          .flags = {&kRefConversationFlag, &kRefWithContentFlag, &kDbFlag},
          .description =
              "Prints {\"references\":[...],\"stats\":{\"total_references\",\n"
              "\"total_tokens\",\"by_type\"}} in order of addition.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunRefList,
      },
      {
          .name = "ref search",
          .summary = "search references by relevance (BM25)",
          .args_usage = "QUERY",
          .min_args = 1,
          .max_args = 1,
          .flags = {&kSearchLimitFlag, &kRefConversationFlag, &kDbFlag},
          .description =
              "Ranks references by BM25 over title (weighted 3x) and\n"
              "content. Prints {\"results\":[{\"id\",\"type\",\"title\",\n"
              "\"preview\",\"highlights\",\"tokens\",\"relevance\"}],\n"
              "\"total\",\"total_matches\"}, best first. preview is the\n"
              "best-matching passage, highlights the [start,end) code\n"
              "points of the query terms in it; relevance is in [0, 1]:\n"
              "0.7 and up about the query, below 0.3 an incidental\n"
              "mention (references.h).\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunRefSearch,
      },
      {
          .name = "serve",
          .summary = "serve the REST API and MCP over HTTP",
          .flags = {&kDbFlag, &kListenFlag, &kTokenFileFlag, &kConfigFlag,
                    &kPrintConfigFlag},
          .description =
              "An HTTP server: POST /api/chat/compact (the pgEdge agent), GET\n"
              "/health, GET /api/user/info, MCP at POST /mcp/v1 (one JSON-RPC\n"
              "message per request) and /mcp (Streamable HTTP). With\n"
              "--token-file every endpoint but /health requires\n"
              "'Authorization: Bearer TOKEN'; a non-loopback --listen\n"
              "requires --token-file (a file writable by its owner only, not\n"
              "a symbolic link, holding a token of at least 32 bytes). Port 0\n"
              "picks a free port; the address is printed on standard error.\n"
              "Stops on SIGTERM or SIGINT.\n"
              "\n"
              "Limits against slow or hostile clients (--config keys, or\n"
              "CTXKIT_ and the key in capitals): header_timeout_seconds (10)\n"
              "for the request line and headers, body_timeout_seconds (60)\n"
              "for the body, max_headers (100) and max_header_bytes (65536)\n"
              "per request, max_connections_per_client (256),\n"
              "max_sessions (1024) MCP sessions, max_body_bytes (8 MiB),\n"
              "timeout_seconds (30) per read or write, threads (0 = auto).\n"
              "Configuration otherwise as for 'mcp'.\n",
          .handler = RunServe,
      },
      {
          .name = "stats",
          .summary = "show the statistics of a store: tokens, cache, "
                     "references",
          .flags = {&kDbFlag},
          .description =
              "Prints the MCP Token Optimizer's aggregate token-stats\n"
              "(overview, by_model, cache_efficiency, trends) plus the days\n"
              "with messages, the cache-stats document as \"cache\", the\n"
              "references' totals as \"references\" and general optimization\n"
              "tips. Every figure comes from totals kept with each write: no\n"
              "scan.\n"
              "\n" CTXKIT_RECORD_OUTPUT,
          .handler = RunStats,
      },
      {
          .name = "store info",
          .summary = "show the figures and sub-databases of a store",
          .flags = {&kDbFlag, &kJsonFlag},
          .description =
              "Opens the store read-only and prints its path, on-disk\n"
              "format, map size and ceiling, page size, pages in use,\n"
              "last transaction id and readers, then every sub-database\n"
              "with its entries, pages and B-tree depth. It never creates\n"
              "anything: a missing store is a NOT_FOUND error (exit\n"
              "status 1).\n",
          .handler = RunStoreInfo,
      },
      {
          .name = "store check",
          .summary = "check that a store is whole: every page and every total",
          .flags = {&kDbFlag, &kJsonFlag},
          .description =
              "Opens the store read-only and checks it over one snapshot:\n"
              "every page of every LMDB tree (the free list, the main\n"
              "database and each sub-database) is walked with reads that\n"
              "never pass the end of the file, and every total, statistic\n"
              "and index of the conversations, references and cache is\n"
              "recounted from their records. Prints the figures when all\n"
              "agree. Damage is a DATA_LOSS error naming the file, the\n"
              "sub-database, the page or key and what differs (exit\n"
              "status 1); so is a data file that is empty or shorter than\n"
              "its last transaction needs, which every command refuses.\n"
              "Restore such a store from a backup. It never writes.\n",
          .handler = RunStoreCheck,
      },
      {
          .name = "store init",
          .summary = "create a store if it is missing and show its figures",
          .flags = {&kDbFlag, &kJsonFlag},
          .description =
              "Opens the store read-write, creating it if it does not\n"
              "exist (and, for a default location, its missing parent\n"
              "directories), then prints its figures as 'store info'\n"
              "does. Commands that write create their store themselves;\n"
              "this one prepares and checks a location ahead of time.\n",
          .handler = RunStoreInit,
      },
      {
          .name = "tokenize",
          .summary = "print the token ids of a text",
          .args_usage = "[FILE|-]",
          .max_args = 1,
          .flags = {&kEncodingFlag, &kModelFlag, &kSpecialFlag, &kJsonlFlag,
                    &kChunkSizeFlag, &kTextFlag},
          .description =
              "Prints the token ids of FILE (standard input for - or no\n"
              "FILE) on one line, separated by spaces, in the encoding of\n"
              "--encoding (default o200k_base) or of --model. The ids are\n"
              "those of OpenAI's tiktoken. Special-token text such as\n"
              "<|endoftext|> is ordinary text unless --special all.\n"
              "\n"
              "With --jsonl every input line is a JSON string or an object\n"
              "with a string member \"text\" (other members are ignored),\n"
              "and every output line is the JSON array of that text's ids;\n"
              "blank lines are skipped.\n",
          .handler = RunTokenize,
          .exclusive = {{&kEncodingFlag, &kModelFlag}},
      },
  };
  static const FlagNote kNotes[] = {{&kDbFlag, kStoreLocationHelp}};
  static const Program* const kProgram = new Program{
      .name = "ctxkit",
      .description =
          "ctxkit manages the context windows of LLM agents and keeps what\n"
          "they need to remember in one local store (an LMDB environment).",
      .commands = *kCommands,
      .notes = kNotes,
      .version = VersionLine(),
  };
  return *kProgram;
}

#undef CTXKIT_RECORD_OUTPUT

}  // namespace ctxkit::program
