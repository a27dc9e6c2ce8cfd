// Summaries across contexts: a parent's hierarchical summary of its
// children (rewritten when a child's summary changes), the project meta
// summary written once enough parents have one, explicit meta summaries,
// and the hierarchy queries and listings.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/field_check.h"
#include "lib/base/key_codec.h"
#include "lib/compactor/summary_text.h"
#include "lib/conversations/conversation_checks.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/hierarchy.h"
#include "lib/graph/metrics.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

using internal::ContextRecord;
using internal::DigestRecord;

namespace {

// A hierarchical summary's code blocks are its children's that matter.
constexpr double kHierarchyCodeImportance = 0.7;
// Contexts a digest's text describes one by one.
constexpr size_t kDigestTextContexts = 3;
constexpr size_t kDigestLineBytes = 200;

// What a digest reads of one context.
struct Member {
  uint64_t seq = 0;
  std::string id;
  double importance = 0.5;
  uint64_t messages = 0;
  std::optional<internal::SummaryRecord> summary;
};

// The page of ids after `cursor` (a key this function returned), `limit`
// of them, from `db`'s keys mapped to ids by `id_of` (nullopt: skip).
template <typename IdOf>
absl::StatusOr<IdPage> PageKeys(const Transaction& txn, Database db,
                                uint32_t limit, std::string_view cursor_text,
                                IdOf id_of) {
  std::string bound;
  if (!cursor_text.empty() &&
      (cursor_text.size() > 2048 ||
       !absl::WebSafeBase64Unescape(internal::AV(cursor_text), &bound) ||
       bound.empty())) {
    return absl::InvalidArgumentError(
        "cursor is not one that this listing returned");
  }
  IdPage page;
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, internal::TxnNewCursor(txn, db));
  cursor.Seek(bound);
  if (cursor.Valid() && !bound.empty() && cursor.key() == bound) {
    cursor.Next();
  }
  std::string last;
  for (; cursor.Valid() && page.ids.size() < limit; cursor.Next()) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<std::string> id, id_of(cursor.key()));
    last = std::string(cursor.key());
    if (id) page.ids.push_back(*std::move(id));
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  if (cursor.Valid() && !last.empty()) {
    page.next_cursor = absl::WebSafeBase64Escape(internal::AV(last));
  }
  return page;
}

}  // namespace

absl::StatusOr<DigestRecord> ContextGraph::Impl::BuildDigest(
    const Transaction& txn, const std::vector<uint64_t>& seqs, DigestKind kind,
    const DigestRecord* old, int64_t now) const {
  std::vector<Member> members;
  for (uint64_t seq : seqs) {
    // A context deleted since a meta summary named it is left out.
    CTXKIT_ASSIGN_OR_RETURN(std::optional<ContextRecord> found,
                            ReadIfExists(txn, seq));
    if (!found) continue;
    ContextRecord& ctx = *found;
    Member& m = members.emplace_back();
    m.seq = seq;
    m.id = ctx.id;
    m.importance = ctx.importance_score;
    Conversation c;
    uint64_t last_seq = 0;
    CTXKIT_RETURN_IF_ERROR(internal::ReadConversationIn(
        *conversations, txn, ctx.conversation_id, &c, &last_seq));
    m.messages = c.message_count;
    if (ctx.summary_version > 0) {
      CTXKIT_ASSIGN_OR_RETURN(m.summary,
                              ReadSummary(txn, seq, ctx.summary_version));
    }
  }
  // The most important first; seq order among equals, so it is stable.
  std::stable_sort(members.begin(), members.end(),
                   [](const Member& a, const Member& b) {
                     return a.importance > b.importance;
                   });
  DigestRecord r;
  r.created_at = old ? old->created_at : now;
  r.updated_at = now;
  r.version = old ? old->version + 1 : 1;
  double score_sum = 0;
  for (const Member& m : members) {
    r.seqs.push_back(m.seq);
    r.message_count += m.messages;
    score_sum += m.importance;
  }
  std::sort(r.seqs.begin(), r.seqs.end());
  if (!members.empty()) {
    r.importance_score = score_sum / static_cast<double>(members.size());
  }

  // Code blocks: a hierarchy's important ones; a meta summary's shared ones
  // (in more than one context's summary).
  absl::flat_hash_map<std::pair<std::string, std::string>, size_t> holders;
  for (const Member& m : members) {
    if (!m.summary) continue;
    absl::flat_hash_set<std::pair<std::string, std::string>> own;
    for (const CodeBlock& b : m.summary->code_blocks) {
      if (own.insert({b.language, b.code}).second)
        ++holders[{b.language, b.code}];
    }
  }
  absl::flat_hash_set<std::pair<std::string, std::string>> taken;
  for (const Member& m : members) {
    if (!m.summary) continue;
    for (const CodeBlock& b : m.summary->code_blocks) {
      if (r.code_blocks.size() >= ContextGraphLimits::kMaxSummaryCodeBlocks) {
        break;
      }
      const bool wanted = kind == DigestKind::kHierarchy
                              ? b.importance >= kHierarchyCodeImportance
                              : holders[{b.language, b.code}] > 1;
      if (wanted && taken.insert({b.language, b.code}).second) {
        r.code_blocks.push_back(b);
      }
    }
    for (const std::string& k : m.summary->key_insights) {
      if (r.key_insights.size() < ContextGraphLimits::kMaxHierarchyInsights &&
          std::find(r.key_insights.begin(), r.key_insights.end(), k) ==
              r.key_insights.end()) {
        r.key_insights.push_back(k);
      }
    }
  }

  // The text: a header, the most important contexts, then a line for each
  // of the first few with a summary; as many lines as max_summary_tokens
  // allows.
  std::vector<std::string> lines;
  lines.push_back(absl::StrFormat(
      "%s summary of %d %s (%d messages in all).",
      kind == DigestKind::kHierarchy ? "Hierarchical" : "Meta", members.size(),
      kind == DigestKind::kHierarchy ? "child contexts" : "contexts",
      r.message_count));
  if (!members.empty()) {
    std::string top = "Most important:";
    for (size_t i = 0; i < members.size() && i < kDigestTextContexts; ++i) {
      absl::StrAppendFormat(&top, "%s %s (%.2f)", i == 0 ? "" : ",",
                            internal::MakeItem(members[i].id, kDigestLineBytes),
                            members[i].importance);
    }
    lines.push_back(top + ".");
  }
  size_t described = 0;
  for (const Member& m : members) {
    if (described == kDigestTextContexts) break;
    if (!m.summary) continue;
    lines.push_back(
        absl::StrCat(internal::MakeItem(m.id, kDigestLineBytes), ": ",
                     internal::MakeItem(m.summary->text, kDigestLineBytes)));
    ++described;
  }
  CTXKIT_ASSIGN_OR_RETURN(internal::ModelCounter counter,
                          internal::ModelCounter::For(options.model));
  for (const std::string& line : lines) {
    std::string longer =
        r.text.empty() ? line : absl::StrCat(r.text, "\n", line);
    CTXKIT_ASSIGN_OR_RETURN(uint64_t tokens, counter.Count(longer));
    if (tokens > options.max_summary_tokens) break;
    r.text = std::move(longer);
  }
  return r;
}

absl::Status ContextGraph::Impl::RefreshHierarchy(WriteTransaction& txn,
                                                  uint64_t child,
                                                  int64_t now) const {
  if (!options.hierarchical_context) return absl::OkStatus();
  CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> ancestors,
                          internal::AncestorsOf(txn, dbs, child));
  for (uint64_t parent : ancestors) {
    internal::GraphSubCall call("llm_hierarchical_summarize");
    CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> kids,
                            internal::ChildrenOf(txn, dbs, parent));
    std::optional<DigestRecord> old;
    absl::StatusOr<std::string_view> v =
        internal::TxnGet(txn, dbs.hsum, internal::SeqKey(parent));
    if (v.ok()) {
      CTXKIT_ASSIGN_OR_RETURN(old, internal::DecodeDigest(*v));
    } else if (v.status().code() != absl::StatusCode::kNotFound) {
      return v.status();
    }
    CTXKIT_ASSIGN_OR_RETURN(DigestRecord r,
                            BuildDigest(txn, kids, DigestKind::kHierarchy,
                                        old ? &*old : nullptr, now));
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, dbs.hsum, internal::SeqKey(parent), internal::EncodeDigest(r)));
    call.Done();
  }
  if (ancestors.empty()) return absl::OkStatus();

  // The project meta summary, once enough parents have one: over them all
  // (the first kMaxMetaContexts in seq order), one record rewritten in
  // place.
  std::vector<uint64_t> parents;
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, internal::TxnNewCursor(txn, dbs.hsum));
  for (cursor.SeekToFirst();
       cursor.Valid() && parents.size() < ContextGraphLimits::kMaxMetaContexts;
       cursor.Next()) {
    if (cursor.key().size() == 8) {
      parents.push_back(internal::ReadBigEndian64(cursor.key().data()));
    }
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(cursor));
  if (parents.size() < options.meta_summary_threshold) return absl::OkStatus();
  return WriteMeta(txn, kProjectMetaId, parents, now).status();
}

absl::StatusOr<DigestRecord> ContextGraph::Impl::WriteMeta(
    WriteTransaction& txn, std::string_view meta_id,
    const std::vector<uint64_t>& seqs, int64_t now) const {
  internal::GraphSubCall call("llm_meta_summarize");
  std::optional<DigestRecord> old;
  absl::StatusOr<std::string_view> v = internal::TxnGet(txn, dbs.meta, meta_id);
  if (v.ok()) {
    CTXKIT_ASSIGN_OR_RETURN(old, internal::DecodeDigest(*v));
  } else if (v.status().code() != absl::StatusCode::kNotFound) {
    return v.status();
  }
  CTXKIT_ASSIGN_OR_RETURN(
      DigestRecord r,
      BuildDigest(txn, seqs, DigestKind::kMeta, old ? &*old : nullptr, now));
  CTXKIT_RETURN_IF_ERROR(internal::RecordGraphFormat(txn, dbs));
  CTXKIT_RETURN_IF_ERROR(
      internal::TxnPut(txn, dbs.meta, meta_id, internal::EncodeDigest(r)));
  call.Done();
  return r;
}

absl::StatusOr<std::vector<std::string>> ContextGraph::Impl::IdsOf(
    const Transaction& txn, const std::vector<uint64_t>& seqs) const {
  std::vector<std::string> ids;
  for (uint64_t seq : seqs) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<ContextRecord> ctx,
                            ReadIfExists(txn, seq));
    if (ctx) ids.push_back(std::move(ctx->id));
  }
  return ids;
}

absl::StatusOr<MetaSummary> ContextGraph::Impl::PublicMeta(
    const Transaction& txn, std::string_view meta_id,
    const DigestRecord& r) const {
  MetaSummary m;
  m.id = std::string(meta_id);
  m.summary = r.text;
  CTXKIT_ASSIGN_OR_RETURN(m.context_ids, IdsOf(txn, r.seqs));
  m.created_at = r.created_at;
  m.updated_at = r.updated_at;
  m.version = r.version;
  m.shared_code_blocks = r.code_blocks;
  return m;
}

StatusOr<ContextHierarchy> ContextGraph::Hierarchy(std::string_view id) const {
  absl::Status s = internal::CheckContextId("contextId", id);
  if (!s.ok()) return internal::ToPublic(s);
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto read = [&]() -> absl::StatusOr<ContextHierarchy> {
    const internal::GraphDbs& dbs = impl_->dbs;
    CTXKIT_ASSIGN_OR_RETURN(uint64_t seq,
                            impl_->Require(*txn, id, "contextId"));
    ContextHierarchy h;
    h.context_id = std::string(id);
    CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> ancestors,
                            internal::AncestorsOf(*txn, dbs, seq));
    CTXKIT_ASSIGN_OR_RETURN(h.ancestors, impl_->IdsOf(*txn, ancestors));
    if (!h.ancestors.empty()) h.parent = h.ancestors.front();
    h.depth = static_cast<int>(h.ancestors.size());
    CTXKIT_ASSIGN_OR_RETURN(std::vector<uint64_t> kids,
                            internal::ChildrenOf(*txn, dbs, seq));
    CTXKIT_ASSIGN_OR_RETURN(h.children, impl_->IdsOf(*txn, kids));
    absl::StatusOr<std::string_view> v =
        internal::TxnGet(*txn, dbs.hsum, internal::SeqKey(seq));
    if (v.ok()) {
      CTXKIT_ASSIGN_OR_RETURN(DigestRecord r, internal::DecodeDigest(*v));
      HierarchicalSummary& hs = h.hierarchical_summary.emplace();
      hs.parent_context_id = h.context_id;
      CTXKIT_ASSIGN_OR_RETURN(hs.child_context_ids, impl_->IdsOf(*txn, r.seqs));
      hs.summary = std::move(r.text);
      hs.last_updated = r.updated_at;
      hs.version = r.version;
      hs.code_blocks = std::move(r.code_blocks);
      hs.key_insights = std::move(r.key_insights);
      hs.importance_score = r.importance_score;
      hs.message_count = r.message_count;
    } else if (v.status().code() != absl::StatusCode::kNotFound) {
      return v.status();
    }
    return h;
  };
  return internal::ToPublic(read());
}

StatusOr<IdPage> ContextGraph::ListHierarchies(uint32_t limit,
                                               std::string_view cursor) const {
  absl::Status s = internal::CheckRange("limit", limit, 1,
                                        ContextGraphLimits::kMaxListLimit);
  if (!s.ok()) return internal::ToPublic(s);
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  // graph.kids holds one key per child: the page walks parents by seeking
  // past each one's children.
  auto list = [&]() -> absl::StatusOr<IdPage> {
    std::string bound;
    if (!cursor.empty() &&
        (cursor.size() > 64 ||
         !absl::WebSafeBase64Unescape(internal::AV(cursor), &bound) ||
         bound.size() != 8)) {
      return absl::InvalidArgumentError(
          "cursor is not one that ListHierarchies returned");
    }
    IdPage page;
    CTXKIT_ASSIGN_OR_RETURN(Cursor c,
                            internal::TxnNewCursor(*txn, impl_->dbs.kids));
    uint64_t next =
        bound.empty() ? 0 : internal::ReadBigEndian64(bound.data()) + 1;
    std::vector<uint64_t> parents;
    for (c.Seek(internal::SeqKey(next)); c.Valid() && parents.size() < limit;
         c.Seek(internal::SeqKey(next))) {
      if (c.key().size() != 16) {
        return absl::DataLossError(
            "context graph record is corrupt: a child link key is not 16 "
            "bytes");
      }
      const uint64_t parent = internal::ReadBigEndian64(c.key().data());
      parents.push_back(parent);
      if (parent == UINT64_MAX) break;
      next = parent + 1;
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(c));
    CTXKIT_ASSIGN_OR_RETURN(page.ids, impl_->IdsOf(*txn, parents));
    if (c.Valid() && !parents.empty()) {
      page.next_cursor = absl::WebSafeBase64Escape(
          internal::AV(internal::SeqKey(parents.back())));
    }
    return page;
  };
  return internal::ToPublic(list());
}

StatusOr<MetaSummary> ContextGraph::CreateMetaSummary(
    std::string_view meta_id, const std::vector<std::string>& context_ids) {
  internal::GraphCall call(*impl_, "");  // its meta summary's call only
  absl::Status s = internal::CheckText("metaId", meta_id,
                                       ContextGraphLimits::kMaxMetaIdBytes);
  if (s.ok() && context_ids.empty()) {
    s = absl::InvalidArgumentError("contextIds must name at least one context");
  }
  if (s.ok() && context_ids.size() > ContextGraphLimits::kMaxMetaContexts) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "contextIds holds %d ids; the limit is %d", context_ids.size(),
        ContextGraphLimits::kMaxMetaContexts));
  }
  for (size_t i = 0; s.ok() && i < context_ids.size(); ++i) {
    s = internal::CheckContextId(absl::StrFormat("contextIds[%d]", i),
                                 context_ids[i]);
  }
  if (!s.ok()) return internal::ToPublic(s);
  MetaSummary result;
  s = internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        internal::GraphCall::Restart();
        std::vector<uint64_t> seqs;
        absl::flat_hash_set<uint64_t> seen;
        for (size_t i = 0; i < context_ids.size(); ++i) {
          CTXKIT_ASSIGN_OR_RETURN(
              uint64_t seq,
              impl_->Require(txn, context_ids[i],
                             absl::StrFormat("contextIds[%d]", i)));
          if (seen.insert(seq).second) seqs.push_back(seq);
        }
        CTXKIT_ASSIGN_OR_RETURN(
            DigestRecord r, impl_->WriteMeta(txn, meta_id, seqs, impl_->Now()));
        CTXKIT_ASSIGN_OR_RETURN(result, impl_->PublicMeta(txn, meta_id, r));
        return absl::OkStatus();
      });
  if (!s.ok()) return internal::ToPublic(s);
  return call.Done(std::move(result));
}

StatusOr<MetaSummary> ContextGraph::GetMetaSummary(
    std::string_view meta_id) const {
  absl::Status s = internal::CheckText("metaId", meta_id,
                                       ContextGraphLimits::kMaxMetaIdBytes);
  if (!s.ok()) return internal::ToPublic(s);
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  auto read = [&]() -> absl::StatusOr<MetaSummary> {
    absl::StatusOr<std::string_view> v =
        internal::TxnGet(*txn, impl_->dbs.meta, meta_id);
    if (!v.ok()) {
      if (v.status().code() == absl::StatusCode::kNotFound) {
        return absl::NotFoundError(
            absl::StrFormat("metaId '%s' is not a meta summary", meta_id));
      }
      return v.status();
    }
    CTXKIT_ASSIGN_OR_RETURN(DigestRecord r, internal::DecodeDigest(*v));
    return impl_->PublicMeta(*txn, meta_id, r);
  };
  return internal::ToPublic(read());
}

StatusOr<IdPage> ContextGraph::ListMetaSummaries(
    uint32_t limit, std::string_view cursor) const {
  absl::Status s = internal::CheckRange("limit", limit, 1,
                                        ContextGraphLimits::kMaxListLimit);
  if (!s.ok()) return internal::ToPublic(s);
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*impl_->store);
  if (!txn.ok()) return internal::ToPublic(txn.status());
  return internal::ToPublic(PageKeys(
      *txn, impl_->dbs.meta, limit, cursor,
      [](std::string_view key) -> absl::StatusOr<std::optional<std::string>> {
        return std::string(key);
      }));
}

}  // namespace ctxkit
