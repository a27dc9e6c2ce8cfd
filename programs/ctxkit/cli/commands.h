// The ctxkit program's commands: the table (commands.cc) and the handlers
// it points to, one file per command family.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_COMMANDS_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_COMMANDS_H_

#include <ostream>
#include <string>
#include <string_view>

#include "ctxkit/conversations.h"
#include "ctxkit/status.h"
#include "ctxkit/store.h"
#include "programs/ctxkit/cli/cli.h"

namespace ctxkit::program {

// The program: its name, help text, version line and command table.
const Program& CtxkitProgram();

// --json, for commands that can print a JSON document instead of text.
extern const Flag kJsonFlag;

// store_commands.cc
Status RunStoreInfo(const Args& args, std::ostream& out);
Status RunStoreCheck(const Args& args, std::ostream& out);
Status RunStoreInit(const Args& args, std::ostream& out);
// The text of `store info` for `info`.
// With `only_used`, the table lists the databases that hold entries and
// counts the empty ones in a last line (the demo's short form).
void PrintStoreInfoText(const StoreInfo& info, std::ostream& out,
                        bool only_used = false);

// doc_commands.cc
Status RunCompletion(const Args& args, std::ostream& out);
Status RunMan(const Args& args, std::ostream& out);

// demo.cc
extern const Flag kDemoDbFlag;
Status RunDemo(const Args& args, std::ostream& out);

// tokenizer_commands.cc
extern const Flag kModelFlag;
// Lets the commands that count tokens (not tokenize) go on with an unknown
// model, estimating its tokens; without it the model is a usage error.
extern const Flag kEstimateFlag;
// Flag::check of every --model flag: the name must resolve in
// ModelRegistry::Default(), unless the command accepts kEstimateFlag and it
// was given. The error names the closest known models (Suggest()).
std::string CheckModelFlag(std::string_view value, const Command& command,
                           const Args& args);
extern const Flag kEncodingFlag;
extern const Flag kSpecialFlag;
extern const Flag kMessagesFlag;
extern const Flag kChunkSizeFlag;
extern const Flag kJsonlFlag;
extern const Flag kTextFlag;
Status RunCount(const Args& args, std::ostream& out);
Status RunTokenize(const Args& args, std::ostream& out);
Status RunDecode(const Args& args, std::ostream& out);
Status RunEncodings(const Args& args, std::ostream& out);

// conversation_commands.cc
extern const Flag kConvTitleFlag;
extern const Flag kConvModelFlag;
extern const Flag kConvMetadataFlag;
extern const Flag kRoleFlag;
extern const Flag kNameFlag;
extern const Flag kToolCallIdFlag;
extern const Flag kToolCallsFlag;
extern const Flag kCompressedFlag;
extern const Flag kNoMessagesFlag;
extern const Flag kListLimitFlag;
extern const Flag kCursorFlag;
// --role's message role: INVALID_ARGUMENT naming role when it is missing
// or unknown.
StatusOr<MessageRole> RoleOf(const Args& args);
Status RunConvCreate(const Args& args, std::ostream& out);
Status RunConvAdd(const Args& args, std::ostream& out);
Status RunConvGet(const Args& args, std::ostream& out);
Status RunConvList(const Args& args, std::ostream& out);
Status RunConvUpdate(const Args& args, std::ostream& out);
Status RunConvDelete(const Args& args, std::ostream& out);

// stats_command.cc
extern const Flag kTimelinePointsFlag;
Status RunConvStats(const Args& args, std::ostream& out);
Status RunStats(const Args& args, std::ostream& out);

// context_commands.cc: `ctx ...`, seed 003's context memory graph.
extern const Flag kImportanceFlag;
extern const Flag kTagsFlag;
extern const Flag kEdgeTypeFlag;
extern const Flag kWeightFlag;
extern const Flag kEdgeMetadataFlag;
extern const Flag kEdgeFilterFlag;
extern const Flag kCreateMissingFlag;
extern const Flag kReplaceParentFlag;
extern const Flag kInvalidateFlag;
extern const Flag kDirectionFlag;
extern const Flag kEdgesFlag;
extern const Flag kExpiredFlag;
extern const Flag kArchivedFlag;
extern const Flag kCtxLimitFlag;
extern const Flag kMethodFlag;
extern const Flag kMinSimilarityFlag;
extern const Flag kWeightedFlag;
extern const Flag kMaxHopsFlag;
extern const Flag kForceFlag;
extern const Flag kContextsFlag;
extern const Flag kDryRunFlag;
extern const Flag kModeFlag;
extern const Flag kMinContextsFlag;
extern const Flag kKeepDaysFlag;
extern const Flag kFormatFlag;
extern const Flag kDepthFlag;
extern const Flag kPeriodFlag;
Status RunCtxAdd(const Args& args, std::ostream& out);
Status RunCtxGet(const Args& args, std::ostream& out);
Status RunCtxSummarize(const Args& args, std::ostream& out);
Status RunCtxRelate(const Args& args, std::ostream& out);
Status RunCtxUnrelate(const Args& args, std::ostream& out);
Status RunCtxRelated(const Args& args, std::ostream& out);
Status RunCtxSimilar(const Args& args, std::ostream& out);
Status RunCtxPath(const Args& args, std::ostream& out);
Status RunCtxHierarchy(const Args& args, std::ostream& out);
Status RunCtxMeta(const Args& args, std::ostream& out);
Status RunCtxCleanup(const Args& args, std::ostream& out);
Status RunCtxRestore(const Args& args, std::ostream& out);
Status RunCtxViz(const Args& args, std::ostream& out);
Status RunCtxList(const Args& args, std::ostream& out);
Status RunCtxDelete(const Args& args, std::ostream& out);
Status RunCtxMetrics(const Args& args, std::ostream& out);
Status RunCtxVerify(const Args& args, std::ostream& out);

// reference_commands.cc
extern const Flag kRefTypeFlag;
extern const Flag kRefTitleFlag;
extern const Flag kRefConversationFlag;
extern const Flag kRefMetadataFlag;
extern const Flag kRefWithContentFlag;
extern const Flag kSearchLimitFlag;
Status RunRefAdd(const Args& args, std::ostream& out);
Status RunRefGet(const Args& args, std::ostream& out);
Status RunRefList(const Args& args, std::ostream& out);
Status RunRefDelete(const Args& args, std::ostream& out);
Status RunRefSearch(const Args& args, std::ostream& out);

// cache_commands.cc
extern const Flag kCachePrefixFlag;
extern const Flag kCacheCheckPrefixFlag;
extern const Flag kCacheClearPrefixFlag;
extern const Flag kCacheTtlFlag;
extern const Flag kCacheModelFlag;
extern const Flag kCacheConversationFlag;
extern const Flag kCacheTopFlag;
Status RunCachePut(const Args& args, std::ostream& out);
Status RunCacheGet(const Args& args, std::ostream& out);
Status RunCacheCheck(const Args& args, std::ostream& out);
Status RunCacheStats(const Args& args, std::ostream& out);
Status RunCacheClear(const Args& args, std::ostream& out);
Status RunCacheSweep(const Args& args, std::ostream& out);

// optimize_command.cc
extern const Flag kGoalFlag;
extern const Flag kOptimizeModelFlag;
extern const Flag kMaxTokensFlag;
extern const Flag kContextFlag;
extern const Flag kQueryFileFlag;
Status RunOptimize(const Args& args, std::ostream& out);

// compact_command.cc
extern const Flag kCompactMaxTokensFlag;
extern const Flag kCompactStrategyFlag;
extern const Flag kCompactModelFlag;
extern const Flag kCompactExplainFlag;
extern const Flag kCompactFormatFlag;
extern const Flag kCompactRecentWindowFlag;
extern const Flag kCompactTargetRatioFlag;
extern const Flag kCompactRulesFlag;
Status RunCompact(const Args& args, std::ostream& out);

// mcp/mcp_command.cc
Status RunMcp(const Args& args, std::ostream& out);

// http/serve_command.cc
Status RunServe(const Args& args, std::ostream& out);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_COMMANDS_H_
