// The context graph's part of upgrading a store's on-disk format
// (lib/store/format.cc runs it inside the upgrade's one write transaction).

#ifndef CTXKIT_LIB_GRAPH_GRAPH_MIGRATION_H_
#define CTXKIT_LIB_GRAPH_GRAPH_MIGRATION_H_

#include "absl/status/status.h"
#include "lib/store/format.h"

namespace ctxkit::internal {

// Format 2 -> 3: the lexical index gets term ids (lexical.h's header
// comment; AssignLexicalTermIds does the rewrite): every graph.lex.df term
// gets an id in term order, graph.lex.dfs is written, every forward value
// and the totals are rewritten. Postings and document lengths stay as they
// are. A store that never used the graph (no graph.lex.df) is left
// untouched. DATA_LOSS naming the entry when one is not in format 2; the
// caller then aborts the whole upgrade.
absl::Status MigrateLexicalToTermIds(MigrationContext& ctx);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_GRAPH_MIGRATION_H_
