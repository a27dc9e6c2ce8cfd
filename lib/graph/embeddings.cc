// ContextGraph's embedder and vectors: installing an embedder, the host's
// vectors, and embedding a summary as it is written (vectors.h stores
// them).

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/graph/graph_impl.h"
#include "lib/graph/graph_records.h"
#include "lib/graph/vectors.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

std::shared_ptr<Embedder> ContextGraph::Impl::CurrentEmbedder() const {
  std::lock_guard lock(embedder_mu);
  return embedder;
}

absl::Status ContextGraph::Impl::CheckEmbedderFits(const Transaction& txn,
                                                   const Embedder& e) const {
  CTXKIT_RETURN_IF_ERROR(internal::CheckEmbedder(e));
  CTXKIT_ASSIGN_OR_RETURN(std::optional<internal::VectorSpace> space,
                          internal::ReadVectorSpace(txn, vec_dbs));
  return internal::CheckSameSpace(space, e.model(), e.dims());
}

absl::Status ContextGraph::Impl::EmbedSummary(
    WriteTransaction& txn, uint64_t seq, const internal::SummaryRecord& record,
    std::string* error) const {
  const std::shared_ptr<Embedder> e = CurrentEmbedder();
  if (!e) return absl::OkStatus();
  // What the summary says it is about: its text (at most
  // max_summary_tokens) and its key insights (at most kMaxKeyInsights), so
  // the embedder's work per write is bounded whatever the context's size.
  std::string text = record.text;
  for (const std::string& insight : record.key_insights) {
    text += '\n';
    text += insight;
  }
  std::vector<float> v;
  absl::Status embedded = internal::EmbedText(*e, text, v);
  if (embedded.ok()) {
    embedded = internal::PutVector(txn, vec_dbs, seq, v, e->model());
    // Only a refusal of the vector (another process recorded another
    // space) is the embedder's; the store's errors are the write's.
    if (!embedded.ok() &&
        embedded.code() != absl::StatusCode::kFailedPrecondition &&
        embedded.code() != absl::StatusCode::kInvalidArgument) {
      return embedded;
    }
  }
  if (embedded.ok()) return absl::OkStatus();
  CTXKIT_RETURN_IF_ERROR(internal::DropVector(txn, vec_dbs, seq).status());
  if (error != nullptr) *error = std::string(embedded.message());
  return absl::OkStatus();
}

Status ContextGraph::SetEmbedder(std::shared_ptr<Embedder> embedder) {
  if (embedder) {
    absl::StatusOr<ReadTransaction> txn =
        internal::StoreBeginRead(*impl_->store);
    if (!txn.ok()) return internal::ToPublic(txn.status());
    const absl::Status s = impl_->CheckEmbedderFits(*txn, *embedder);
    if (!s.ok()) return internal::ToPublic(s);
  }
  std::lock_guard lock(impl_->embedder_mu);
  impl_->embedder = std::move(embedder);
  return Status();
}

Status ContextGraph::SetEmbedding(std::string_view id,
                                  std::span<const float> vector) {
  absl::Status s = internal::CheckContextId("contextId", id);
  if (s.ok()) s = internal::CheckVector("vector", vector);
  if (!s.ok()) return internal::ToPublic(s);
  const std::shared_ptr<Embedder> e = impl_->CurrentEmbedder();
  s = internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        CTXKIT_ASSIGN_OR_RETURN(uint64_t seq,
                                impl_->Require(txn, id, "contextId"));
        CTXKIT_ASSIGN_OR_RETURN(std::optional<internal::VectorSpace> space,
                                internal::ReadVectorSpace(txn, impl_->vec_dbs));
        std::string model(internal::kHostVectorModel);
        if (e) {
          model = std::string(e->model());
        } else if (space) {
          model = space->model;
        }
        const uint32_t dims = e ? e->dims() : space ? space->dims : 0;
        if (dims != 0 && vector.size() != dims) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "vector has %d dims; the graph's vectors (model '%s') have %d",
              vector.size(), model, dims));
        }
        CTXKIT_RETURN_IF_ERROR(internal::RecordGraphFormat(txn, impl_->dbs));
        return internal::PutVector(txn, impl_->vec_dbs, seq, vector, model);
      });
  return internal::ToPublic(s);
}

Status ContextGraph::ResetEmbeddings() {
  return internal::ToPublic(internal::StoreUpdate(
      *impl_->store, [&](WriteTransaction& txn) -> absl::Status {
        return internal::DropAllVectors(txn, impl_->vec_dbs);
      }));
}

}  // namespace ctxkit
