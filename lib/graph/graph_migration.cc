#include "lib/graph/graph_migration.h"

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/graph/lexical.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {

absl::Status MigrateLexicalToTermIds(MigrationContext& ctx) {
  absl::StatusOr<Database> df = ctx.OpenExistingDatabase(kLexicalDfDatabase);
  if (absl::IsNotFound(df.status())) return absl::OkStatus();
  CTXKIT_RETURN_IF_ERROR(df.status());
  // The graph opens its lexical databases together, so the others exist
  // too, but graph.lex.dfs, which this creates.
  CTXKIT_ASSIGN_OR_RETURN(LexicalDbs dbs,
                          OpenLexicalDbsWith([&](std::string_view name) {
                            return ctx.OpenDatabase(name);
                          }));
  return AssignLexicalTermIds(ctx.txn(), dbs);
}

}  // namespace ctxkit::internal
