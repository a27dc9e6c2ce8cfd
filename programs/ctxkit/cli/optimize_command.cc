// `optimize`: ctxkit::QueryOptimizer from the command line. Prints the
// library's ToJson() document (seed 000's optimize_query response without
// "success") on one line.

#include <optional>
#include <string>
#include <utility>

#include "ctxkit/query_optimizer.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/record_flags.h"

namespace ctxkit::program {

// Checked by the library, so that a bad value is an INVALID_ARGUMENT naming
// "optimization_goal" like every other bad field.
const Flag kGoalFlag{"--goal", "GOAL",
                     "reduce_tokens, improve_clarity or both (default both)"};
const Flag kOptimizeModelFlag{.name = "--model",
                              .value_name = "MODEL",
                              .help =
                                  "count tokens with this model's "
                                  "tokenizer (default claude-3-5-sonnet)",
                              .check = CheckModelFlag};
// The library decides where a cut may fall (OptimizeOptions::max_tokens);
// the help says the part a user must know before relying on N.
const Flag kMaxTokensFlag{.name = "--max-tokens",
                          .value_name = "N",
                          .help =
                              "cut the optimized query to N tokens at a "
                              "clause or word end; a sentence with a "
                              "negation, condition or restriction is "
                              "never cut or dropped, so the result may "
                              "stay over N (\"over_max_tokens\": true)",
                          .is_number = true,
                          .library_range = true};
const Flag kContextFlag{"--context", "TEXT",
                        "text the query will be sent with (counted, and "
                        "searched for repeated sentences)"};
const Flag kQueryFileFlag{"--file", "PATH", "read the query from this file"};

Status RunOptimize(const Args& args, std::ostream& out) {
  // QUERY, --file PATH or - (standard input): exactly one.
  const bool positional_text =
      !args.positional().empty() && args.positional()[0] != "-";
  if (args.positional().empty() && !args.Has(kQueryFileFlag.name)) {
    return Status(StatusCode::kInvalidArgument,
                  "query: missing; give QUERY, --file PATH or - (standard "
                  "input)");
  }
  auto read = ReadContent(args, 0, "query", QueryOptimizer::kMaxQueryBytes,
                          /*optional=*/positional_text);
  if (!read.ok()) return read.status();
  std::string query;
  if (positional_text) {
    if (read->has_value()) {
      return Status(StatusCode::kInvalidArgument,
                    "query: give only one of QUERY, --file and - (standard "
                    "input)");
    }
    query = args.positional()[0];
  } else {
    query = **std::move(read);
  }

  OptimizeOptions options;
  if (const std::string* goal = args.Value(kGoalFlag.name)) {
    auto parsed = ParseOptimizationGoal(*goal);
    if (!parsed.ok()) return parsed.status();
    options.goal = *parsed;
  }
  if (const std::string* model = args.Value(kOptimizeModelFlag.name)) {
    options.model = *model;
  }
  auto max_tokens = NumberFlag(args, kMaxTokensFlag, "max_tokens");
  if (!max_tokens.ok()) return max_tokens.status();
  options.max_tokens = *max_tokens;
  if (const std::string* context = args.Value(kContextFlag.name)) {
    options.context = *context;
  }
  auto result = QueryOptimizer::Default().Optimize(query, options);
  if (!result.ok()) return result.status();
  return PrintDocument(ToJson(*result), out);
}

}  // namespace ctxkit::program
