// The context graph's vectors (CG-8): where they are stored, the int8 scan
// cache every query reads, and the checks of what goes in.
//
//   graph.vecf  BE64 seq -> float32[dims], little-endian: the master copy
//               as given (rescoring, Verify, rebuilding the scan copy)
//   graph.vec   BE64 seq -> float32 scale + int8[dims]: the unit vector
//               quantized (component = int8 * scale); one row per context
//               rather than the spec's blocks of 1,024, because queries scan
//               the in-memory copy (VectorIndex) and LMDB is read only when
//               it is built or brought up to date
//   graph.vecmeta "space"            -> lp model + BE32 dims: the space every
//                                       stored vector is in (absent: none)
//                 'L' + BE64 change  -> BE64 seq: the context whose vector
//                                       changed at that change number (seq
//                                       0: all of them, ResetEmbeddings);
//                                       the newest kVectorLogKeep kept
//
// The change log is how a VectorIndex in any process (several may share
// the store) learns what another one wrote: it applies the changes after
// the one it was built at, and rebuilds when they were trimmed.

#ifndef CTXKIT_LIB_GRAPH_VECTORS_H_
#define CTXKIT_LIB_GRAPH_VECTORS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/context_graph.h"
#include "ctxkit/store.h"

namespace ctxkit::internal {

inline constexpr uint64_t kVectorLogKeep = 4096;
// The model recorded by SetEmbedding with no embedder installed.
inline constexpr std::string_view kHostVectorModel = "host";

struct VectorDbs {
  Database vec, vecf, meta;
};
// Opens (creating on a writable store) the vector sub-databases. A
// read-only store made before vectors lacks them (NOT_FOUND): the graph
// keeps invalid handles then, which every read here takes as no vectors.
absl::StatusOr<VectorDbs> OpenVectorDbs(Store& store);

struct VectorSpace {
  std::string model;
  uint32_t dims = 0;
};
// The recorded space, or nullopt when no vector was ever stored (or since
// ResetEmbeddings).
absl::StatusOr<std::optional<VectorSpace>> ReadVectorSpace(
    const Transaction& txn, const VectorDbs& dbs);

// INVALID_ARGUMENT naming `embedder` for dims or model out of range.
absl::Status CheckEmbedder(const Embedder& embedder);
// FAILED_PRECONDITION when `space` is recorded and is not `model`/`dims`.
absl::Status CheckSameSpace(const std::optional<VectorSpace>& space,
                            std::string_view model, uint32_t dims);
// INVALID_ARGUMENT naming `field` for NaN, infinity or an all-zero vector.
absl::Status CheckVector(std::string_view field, std::span<const float> v);

// Stores context `seq`'s vector `v` (checked, in space model/dims, which
// it records when none is) in both copies and logs the change.
absl::Status PutVector(WriteTransaction& txn, const VectorDbs& dbs,
                       uint64_t seq, std::span<const float> v,
                       std::string_view model);
// Deletes context `seq`'s vector, if it has one, logging the change.
// Whether it had one.
absl::StatusOr<bool> DropVector(WriteTransaction& txn, const VectorDbs& dbs,
                                uint64_t seq);
// Deletes every vector and the recorded space.
absl::Status DropAllVectors(WriteTransaction& txn, const VectorDbs& dbs);

// `text` embedded by `embedder` into `out` (resized to its dims), checked:
// the embedder's error, or INTERNAL naming it for a vector CheckVector
// refuses.
absl::Status EmbedText(Embedder& embedder, std::string_view text,
                       std::vector<float>& out);

// Context `seq`'s float vector, or nullopt when it has none; DATA_LOSS for
// a row that is not whole floats.
absl::StatusOr<std::optional<std::vector<float>>> ReadVector(
    const Transaction& txn, const VectorDbs& dbs, uint64_t seq);

// The cosine of two vectors of the same dims (0 when either is zero).
double Cosine(std::span<const float> a, std::span<const float> b);

// What graph.vec holds for vector `v` (not zero): the scale, then its unit
// vector's components divided by it and rounded to int8 (scale = the
// largest magnitude / 127, so no component clips).
std::string QuantizeRow(std::span<const float> v);

// The int8 scan's kernels: for each of `n` rows of `dims` int8 components
// (row r at rows + r * dims), the dot product with query `q`, exact in
// 32 bits, times scales[r], into out[r]. `q`'s components must be in
// -127..127 (QuantizeRow's); rows may hold any int8. Every kernel gives
// the same floats bit for bit (the sum is an exact integer before the one
// multiplication), so which one runs never changes a result. The scan is
// the whole cost of a vector query over many rows. Pure; thread-safe.
using ScanKernel = void (*)(const int8_t* q, const int8_t* rows,
                            const float* scales, size_t n, size_t dims,
                            float* out);
// The plain loop, for any CPU.
void ScanRowsPortable(const int8_t* q, const int8_t* rows, const float* scales,
                      size_t n, size_t dims, float* out);
struct NamedScanKernel {
  std::string_view name;
  ScanKernel scan = nullptr;
};
// The kernels this CPU runs, checked at run time (the build targets
// generic x86-64): "portable" first, the faster ones after it; Search uses
// the last. Tests compare each with the portable one.
std::vector<NamedScanKernel> ScanKernels();

struct VectorHit {
  uint64_t seq = 0;
  double cosine = 0;
};

// The in-memory int8 copy of graph.vec that queries scan. Thread-safe:
// Search brings it up to date under an exclusive lock (a change-log read
// when nothing changed), then scans under a shared one. It may be newer
// than a query's snapshot (another thread brought it forward): Search
// rescoring reads each candidate's float vector in the query's own
// snapshot and drops those it does not hold.
class VectorIndex {
 public:
  // The `limit` contexts whose vectors are most similar to `query` (as
  // cosines, best first; ties by lower seq) among those `accept` takes:
  // an exact int8 scan picks 4 * limit candidates, rescored with the float
  // copies. `query` must have the space's dims (INVALID_ARGUMENT naming
  // text otherwise). Nothing when no vector is stored.
  absl::StatusOr<std::vector<VectorHit>> Search(
      const Transaction& txn, const VectorDbs& dbs,
      std::span<const float> query, size_t limit,
      const std::function<bool(uint64_t)>& accept);
  // The number of vectors as of `txn` (after bringing the copy up to date).
  absl::StatusOr<size_t> Size(const Transaction& txn, const VectorDbs& dbs);

 private:
  absl::Status Sync(const Transaction& txn, const VectorDbs& dbs);
  absl::Status Rebuild(const Transaction& txn, const VectorDbs& dbs,
                       uint64_t change);
  absl::Status Apply(const Transaction& txn, const VectorDbs& dbs,
                     uint64_t seq);

  std::shared_mutex mu_;
  bool loaded_ = false;
  uint64_t change_ = 0;  // the newest change applied
  uint32_t dims_ = 0;
  std::vector<uint64_t> seqs_;
  std::vector<float> scales_;
  // seqs_.size() * dims_; Rebuild asks for huge pages (AdviseHugePages).
  std::vector<int8_t> rows_;
  absl::flat_hash_map<uint64_t, size_t> row_of_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_GRAPH_VECTORS_H_
