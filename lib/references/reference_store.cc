// ReferenceStore: validation, token counting and the public types over the
// storage and search functions of index.h and search.h.

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/references.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/base/ids.h"
#include "lib/base/key_codec.h"
#include "lib/references/index.h"
#include "lib/references/search.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"
#include "lib/tokenizer/tokenizer_internal.h"

namespace ctxkit {

using internal::RecordView;
using internal::ReferenceDbs;

namespace {

constexpr size_t kMaxModelBytes = 256;

// A UUID-shaped id, lower-cased; INVALID_ARGUMENT naming `field` otherwise.
absl::StatusOr<std::string> CheckId(std::string_view field,
                                    std::string_view id) {
  if (id.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must not be empty", field));
  }
  if (!internal::IsUuid(id)) {
    // Do not echo the value: it may be anything, including invalid UTF-8.
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be a UUID like 550e8400-e29b-41d4-a716-446655440000 (got %d "
        "bytes that are not one)",
        field, id.size()));
  }
  std::string lower(id);
  absl::AsciiStrToLower(&lower);
  return lower;
}

absl::Status ConversationExists(const Transaction& txn, const ReferenceDbs& dbs,
                                std::string_view conversation_id) {
  absl::StatusOr<std::string_view> found =
      internal::TxnGet(txn, dbs.conversations, conversation_id);
  if (found.ok()) return absl::OkStatus();
  if (found.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(
        absl::StrFormat("conversation %s not found", conversation_id));
  }
  return found.status();
}

ReferenceStats PublicStats(const internal::IndexStats& s) {
  ReferenceStats out;
  out.total_references = s.count;
  out.total_tokens = s.total_tokens;
  for (size_t i = 0; i < internal::kReferenceTypeCount; ++i) {
    if (s.by_type[i] != 0) {
      out.by_type[std::string(internal::kReferenceTypeNames[i])] = s.by_type[i];
    }
  }
  return out;
}

Reference PublicReference(std::string_view id, const RecordView& r,
                          bool include_content) {
  Reference out;
  out.id = std::string(id);
  out.conversation_id = std::string(r.conversation_id);
  out.type = std::string(internal::kReferenceTypeNames[r.type]);
  out.title = std::string(r.title);
  if (include_content) out.content = std::string(r.content);
  out.preview =
      internal::MakePreview(r.content, ReferenceLimits::kPreviewChars);
  out.tokens = r.tokens;
  out.created_at = r.created_at;
  out.metadata = std::string(r.metadata);
  return out;
}

absl::StatusOr<RecordView> ReadRecord(const Transaction& txn,
                                      const ReferenceDbs& dbs,
                                      std::string_view id) {
  absl::StatusOr<std::string_view> bytes =
      internal::TxnGet(txn, dbs.records, id);
  if (!bytes.ok()) {
    if (bytes.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrFormat("reference %s not found", id));
    }
    return bytes.status();
  }
  return internal::DecodeRecord(*bytes, id);
}

}  // namespace

struct ReferenceStore::Impl {
  Store* store = nullptr;
  ReferenceDbs dbs;
  ReferenceStoreOptions options;

  absl::StatusOr<Reference> Add(const NewReference& in);
  absl::StatusOr<Reference> Get(std::string_view id) const;
  absl::StatusOr<ReferenceList> List(const ListReferencesOptions& o) const;
  absl::StatusOr<ReferenceStats> Stats(std::string_view conversation_id) const;
  absl::Status Delete(std::string_view id);
  absl::StatusOr<ReferenceSearchResults> Search(
      const SearchReferencesOptions& o) const;
};

absl::StatusOr<Reference> ReferenceStore::Impl::Add(const NewReference& in) {
  // Validate everything before counting or writing.
  std::string conversation_id;
  if (!in.conversation_id.empty()) {
    CTXKIT_ASSIGN_OR_RETURN(conversation_id,
                            CheckId("conversation_id", in.conversation_id));
  }
  CTXKIT_RETURN_IF_ERROR(internal::CheckText("type", in.type, 64));
  const int type = internal::ReferenceTypeIndex(in.type);
  if (type < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "type must be one of file, url, code, note, document (got \"%s\")",
        in.type));
  }
  CTXKIT_RETURN_IF_ERROR(
      internal::CheckText("title", in.title, ReferenceLimits::kMaxTitleBytes));
  CTXKIT_RETURN_IF_ERROR(internal::CheckText(
      "content", in.content, ReferenceLimits::kMaxContentBytes));
  if (!in.metadata.empty()) {  // empty stands for "{}"
    CTXKIT_RETURN_IF_ERROR(internal::CheckJsonObject(
        "metadata", in.metadata, ReferenceLimits::kMaxMetadataBytes));
  }

  absl::StatusOr<TokenCount> count = internal::RegistryCountTokens(
      ModelRegistry::Default(), options.model, in.content);
  CTXKIT_RETURN_IF_ERROR(count.status());
  const internal::AnalyzedDocument doc =
      internal::AnalyzeDocument(in.title, in.content);
  const std::string id = internal::NewUuid();
  RecordView record;
  record.created_at = internal::NowMillis(options.clock);
  record.tokens = count->tokens;
  record.length = doc.length;
  record.type = static_cast<uint8_t>(type);
  record.conversation_id = conversation_id;
  record.title = in.title;
  record.content = in.content;
  record.metadata = in.metadata.empty() ? std::string_view("{}")
                                        : std::string_view(in.metadata);

  CTXKIT_RETURN_IF_ERROR(
      internal::StoreUpdate(*store, [&](WriteTransaction& txn) {
        if (!conversation_id.empty()) {
          CTXKIT_RETURN_IF_ERROR(ConversationExists(txn, dbs, conversation_id));
        }
        return internal::AddReferenceInTxn(txn, dbs, id, record, doc).status();
      }));
  Reference out = PublicReference(id, record, /*include_content=*/true);
  return out;
}

absl::StatusOr<Reference> ReferenceStore::Impl::Get(std::string_view id) const {
  CTXKIT_ASSIGN_OR_RETURN(std::string key, CheckId("reference_id", id));
  CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn,
                          internal::StoreBeginRead(*store));
  CTXKIT_ASSIGN_OR_RETURN(RecordView r, ReadRecord(txn, dbs, key));
  return PublicReference(key, r, /*include_content=*/true);
}

absl::StatusOr<ReferenceList> ReferenceStore::Impl::List(
    const ListReferencesOptions& o) const {
  std::string conversation_id;
  if (!o.conversation_id.empty()) {
    CTXKIT_ASSIGN_OR_RETURN(conversation_id,
                            CheckId("conversation_id", o.conversation_id));
  }
  CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn,
                          internal::StoreBeginRead(*store));
  ReferenceList out;
  std::vector<std::string> ids;
  if (!conversation_id.empty()) {
    CTXKIT_RETURN_IF_ERROR(ConversationExists(txn, dbs, conversation_id));
    CTXKIT_ASSIGN_OR_RETURN(
        ids, internal::ConversationReferenceIds(txn, dbs, conversation_id));
  } else {
    CTXKIT_ASSIGN_OR_RETURN(Cursor c, internal::TxnNewCursor(txn, dbs.by_seq));
    for (c.SeekToFirst(); c.Valid(); c.Next()) ids.emplace_back(c.value());
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(c));
  }
  out.references.reserve(ids.size());
  for (const std::string& id : ids) {
    CTXKIT_ASSIGN_OR_RETURN(RecordView r, ReadRecord(txn, dbs, id));
    out.references.push_back(PublicReference(id, r, o.include_content));
  }
  CTXKIT_ASSIGN_OR_RETURN(
      internal::IndexStats stats,
      internal::ReadStats(
          txn, dbs,
          conversation_id.empty()
              ? std::string("all")
              : internal::ConversationStatsKey(conversation_id)));
  out.stats = PublicStats(stats);
  return out;
}

absl::StatusOr<ReferenceStats> ReferenceStore::Impl::Stats(
    std::string_view conversation_id) const {
  std::string key = "all";
  if (!conversation_id.empty()) {
    CTXKIT_ASSIGN_OR_RETURN(std::string id,
                            CheckId("conversation_id", conversation_id));
    key = internal::ConversationStatsKey(id);
  }
  CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn,
                          internal::StoreBeginRead(*store));
  CTXKIT_ASSIGN_OR_RETURN(internal::IndexStats stats,
                          internal::ReadStats(txn, dbs, key));
  return PublicStats(stats);
}

absl::Status ReferenceStore::Impl::Delete(std::string_view id) {
  CTXKIT_ASSIGN_OR_RETURN(std::string key, CheckId("reference_id", id));
  return internal::StoreUpdate(*store, [&](WriteTransaction& txn) {
    CTXKIT_ASSIGN_OR_RETURN(bool deleted,
                            internal::DeleteReferenceInTxn(txn, dbs, key));
    if (!deleted) {
      return absl::NotFoundError(
          absl::StrFormat("reference %s not found", key));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<ReferenceSearchResults> ReferenceStore::Impl::Search(
    const SearchReferencesOptions& o) const {
  CTXKIT_RETURN_IF_ERROR(
      internal::CheckText("query", o.query, ReferenceLimits::kMaxQueryBytes));
  CTXKIT_RETURN_IF_ERROR(internal::CheckRange(
      "limit", o.limit, 1, ReferenceLimits::kMaxSearchLimit));
  std::string conversation_id;
  if (!o.conversation_id.empty()) {
    CTXKIT_ASSIGN_OR_RETURN(conversation_id,
                            CheckId("conversation_id", o.conversation_id));
  }
  const std::vector<std::string> terms = internal::QueryTerms(o.query);
  if (terms.empty()) {
    return absl::InvalidArgumentError(
        "query has no searchable terms (it needs a letter or a digit)");
  }
  if (terms.size() > ReferenceLimits::kMaxQueryTerms) {
    return absl::InvalidArgumentError(
        absl::StrFormat("query has %d distinct terms; the limit is %d",
                        terms.size(), ReferenceLimits::kMaxQueryTerms));
  }
  CTXKIT_ASSIGN_OR_RETURN(ReadTransaction txn,
                          internal::StoreBeginRead(*store));
  if (!conversation_id.empty()) {
    CTXKIT_RETURN_IF_ERROR(ConversationExists(txn, dbs, conversation_id));
  }
  CTXKIT_ASSIGN_OR_RETURN(
      internal::IndexSearchResult found,
      internal::SearchIndex(txn, dbs, terms, o.limit, conversation_id));
  ReferenceSearchResults out;
  out.total_matches = found.total_matches;
  out.results.reserve(found.hits.size());
  const double best_score = found.hits.empty() ? 0 : found.hits[0].score;
  for (const internal::ScoredReference& hit : found.hits) {
    std::string seq_key;
    internal::AppendBigEndian32(&seq_key, hit.seq);
    CTXKIT_ASSIGN_OR_RETURN(std::string_view id,
                            internal::TxnGet(txn, dbs.by_seq, seq_key));
    const std::string id_copy(id);
    CTXKIT_ASSIGN_OR_RETURN(RecordView r, ReadRecord(txn, dbs, id_copy));
    ReferenceSearchResult result;
    result.id = id_copy;
    result.conversation_id = std::string(r.conversation_id);
    result.type = std::string(internal::kReferenceTypeNames[r.type]);
    result.title = std::string(r.title);
    const std::vector<internal::QueryMatch> matches =
        internal::FindQueryMatches(r.content, terms);
    internal::SearchPreview preview = internal::MakeSearchPreview(
        r.content, matches, found.idf, ReferenceLimits::kPreviewChars);
    result.preview = std::move(preview.text);
    for (const auto& [begin, end] : preview.highlights) {
      result.highlights.push_back({begin, end});
    }
    const internal::RelevanceEvidence evidence = internal::GatherEvidence(
        r.title, terms, found.idf, matches, hit, best_score);
    result.relevance = internal::Relevance(evidence);
    result.tokens = r.tokens;
    result.created_at = r.created_at;
    result.score = hit.score;
    out.results.push_back(std::move(result));
  }
  return out;
}

ReferenceStore::ReferenceStore(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ReferenceStore::~ReferenceStore() = default;

StatusOr<std::unique_ptr<ReferenceStore>> ReferenceStore::Open(
    Store& store, ReferenceStoreOptions options) {
  absl::Status model =
      internal::CheckText("model", options.model, kMaxModelBytes);
  if (!model.ok()) return internal::ToPublic(model);
  absl::StatusOr<ReferenceDbs> dbs = internal::OpenReferenceDbs(store);
  if (!dbs.ok()) return internal::ToPublic(dbs.status());
  auto impl = std::make_unique<Impl>();
  impl->store = &store;
  impl->dbs = *dbs;
  impl->options = std::move(options);
  return std::unique_ptr<ReferenceStore>(new ReferenceStore(std::move(impl)));
}

StatusOr<Reference> ReferenceStore::Add(const NewReference& reference) {
  return internal::ToPublic(impl_->Add(reference));
}
StatusOr<Reference> ReferenceStore::Get(std::string_view id) const {
  return internal::ToPublic(impl_->Get(id));
}
StatusOr<ReferenceList> ReferenceStore::List(
    const ListReferencesOptions& options) const {
  return internal::ToPublic(impl_->List(options));
}
StatusOr<ReferenceStats> ReferenceStore::Stats(
    std::string_view conversation_id) const {
  return internal::ToPublic(impl_->Stats(conversation_id));
}
Status ReferenceStore::Delete(std::string_view id) {
  return internal::ToPublic(impl_->Delete(id));
}
StatusOr<ReferenceSearchResults> ReferenceStore::Search(
    const SearchReferencesOptions& options) const {
  return internal::ToPublic(impl_->Search(options));
}

}  // namespace ctxkit
