// The context graph's vector storage and int8 scan (vectors.h).

#include "lib/graph/vectors.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/context_graph.h"
#include "lib/base/field_check.h"
#include "lib/base/key_codec.h"
#include "lib/graph/graph_records.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"

namespace ctxkit {

Embedder::~Embedder() = default;

namespace internal {

// The float rows are stored as the host's floats; every platform ctxkit
// builds on is little-endian, which the layout documents.
static_assert(std::endian::native == std::endian::little,
              "graph.vecf stores little-endian floats");

namespace {

constexpr std::string_view kSpaceKey = "space";
constexpr char kLogTag = 'L';

std::string LogKey(uint64_t change) {
  std::string key(1, kLogTag);
  AppendBigEndian64(&key, change);
  return key;
}

// The newest change number in `txn` (0: none yet).
absl::StatusOr<uint64_t> LastChange(const Transaction& txn,
                                    const VectorDbs& dbs) {
  if (!dbs.meta.valid()) return 0;  // a read-only store made before vectors
  CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.meta));
  cursor.Seek(std::string(1, kLogTag + 1));
  if (cursor.Valid()) {
    cursor.Prev();
  } else {
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
    cursor.SeekToLast();
  }
  CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  if (!cursor.Valid() || cursor.key().size() != 9 ||
      cursor.key()[0] != kLogTag) {
    return 0;
  }
  return ReadBigEndian64(cursor.key().data() + 1);
}

// Logs that context `seq`'s vector changed (0: all of them), trimming the
// log to its newest kVectorLogKeep changes.
absl::Status LogChange(WriteTransaction& txn, const VectorDbs& dbs,
                       uint64_t seq) {
  CTXKIT_ASSIGN_OR_RETURN(uint64_t last, LastChange(txn, dbs));
  const uint64_t change = last + 1;
  std::string value;
  AppendBigEndian64(&value, seq);
  CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.meta, LogKey(change), value));
  if (change > kVectorLogKeep) {
    CTXKIT_RETURN_IF_ERROR(
        TxnDelete(txn, dbs.meta, LogKey(change - kVectorLogKeep)).status());
  }
  return absl::OkStatus();
}

double Norm(std::span<const float> v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  return std::sqrt(sum);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CTXKIT_VECTORS_AVX2 1
// About 3 KiB ahead at 384 dims: far enough to hide a memory access, near
// enough to stay in L1.
constexpr size_t kScanPrefetchRows = 8;
// ScanRowsPortable's AVX2 form. vpmaddubsw multiplies unsigned by signed
// bytes, so each row byte b and query byte q go in as |b| and q * sign(b):
// the same product, and exact for every b (|-128| is 128 as an unsigned
// byte) and every q of -127..127 (the query's QuantizeRow); a pair's sum is
// at most 2 * 128 * 127 = 32512, so the 16-bit step never saturates. 32
// bytes take five instructions, where widening both sides to 16 bits first
// (the compiler's vectorization of the portable loop) takes twice as many
// on the one shuffle port. It also prefetches the row kScanPrefetchRows
// ahead: the rows are read once per query, 38 MB at 100k x 384, and the
// hardware prefetcher stops at each 4 KiB page, so without it every page
// starts with a wait on memory (a quarter of the scan's time measured).
__attribute__((target("avx2"))) inline __m256i DotChunkAvx2(const int8_t* q,
                                                            const int8_t* b,
                                                            __m256i ones) {
  const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  const __m256i vq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  return _mm256_madd_epi16(
      _mm256_maddubs_epi16(_mm256_abs_epi8(vb), _mm256_sign_epi8(vq, vb)),
      ones);
}

__attribute__((target("avx2"))) void ScanRowsAvx2(const int8_t* q,
                                                  const int8_t* rows,
                                                  const float* scales, size_t n,
                                                  size_t dims, float* out) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (size_t r = 0; r < n; ++r) {
    const int8_t* b = rows + r * dims;
    if (r + kScanPrefetchRows < n) {
      const char* ahead =
          reinterpret_cast<const char*>(b + kScanPrefetchRows * dims);
      for (size_t at = 0; at < dims; at += 64) {
        _mm_prefetch(ahead + at, _MM_HINT_T0);
      }
    }
    // Two accumulators, so that consecutive chunks do not wait on each
    // other's add.
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 64 <= dims; i += 64) {
      acc0 = _mm256_add_epi32(acc0, DotChunkAvx2(q + i, b + i, ones));
      acc1 = _mm256_add_epi32(acc1, DotChunkAvx2(q + i + 32, b + i + 32, ones));
    }
    if (i + 32 <= dims) {
      acc0 = _mm256_add_epi32(acc0, DotChunkAvx2(q + i, b + i, ones));
      i += 32;
    }
    const __m256i acc = _mm256_add_epi32(acc0, acc1);
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc),
                              _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    int32_t sum = _mm_cvtsi128_si32(s);
    for (; i < dims; ++i) {
      sum += static_cast<int16_t>(q[i]) * static_cast<int16_t>(b[i]);
    }
    out[r] = static_cast<float>(sum) * scales[r];
  }
}
#endif

// Asks Linux to back [data, data + bytes) with 2 MiB pages where it can
// (transparent huge pages in "madvise" mode, Debian's default, give them
// only to memory so marked). The scan reads its rows end to end on every
// query: with 4 KiB pages that is a TLB miss every 4 KiB, about 9,400 at
// 100k x 384, and the scan measured a fifth faster with huge pages. Only
// advice: the memory may stay in small pages, which changes nothing but
// speed. Called before the memory is first written, so that the page
// faults already take huge pages.
void AdviseHugePages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) {
    // Its failure (a kernel without THP) leaves small pages: ignored.
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

// The kernel Search uses: the fastest of ScanKernels, chosen once.
ScanKernel ChosenScanKernel() {
  static const ScanKernel chosen = ScanKernels().back().scan;
  return chosen;
}

}  // namespace

void ScanRowsPortable(const int8_t* q, const int8_t* rows, const float* scales,
                      size_t n, size_t dims, float* out) {
  for (size_t r = 0; r < n; ++r) {
    const int8_t* b = rows + r * dims;
    int32_t sum = 0;
    for (size_t i = 0; i < dims; ++i) {
      sum += static_cast<int16_t>(q[i]) * static_cast<int16_t>(b[i]);
    }
    out[r] = static_cast<float>(sum) * scales[r];
  }
}

std::vector<NamedScanKernel> ScanKernels() {
  std::vector<NamedScanKernel> kernels = {{"portable", &ScanRowsPortable}};
#ifdef CTXKIT_VECTORS_AVX2
  if (__builtin_cpu_supports("avx2"))
    kernels.push_back({"avx2", &ScanRowsAvx2});
#endif
  return kernels;
}

absl::StatusOr<VectorDbs> OpenVectorDbs(Store& store) {
  VectorDbs dbs;
  CTXKIT_ASSIGN_OR_RETURN(dbs.vec, StoreOpenDatabase(store, "graph.vec"));
  CTXKIT_ASSIGN_OR_RETURN(dbs.vecf, StoreOpenDatabase(store, "graph.vecf"));
  CTXKIT_ASSIGN_OR_RETURN(dbs.meta, StoreOpenDatabase(store, "graph.vecmeta"));
  return dbs;
}

absl::StatusOr<std::optional<VectorSpace>> ReadVectorSpace(
    const Transaction& txn, const VectorDbs& dbs) {
  if (!dbs.meta.valid()) return std::nullopt;
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.meta, kSpaceKey);
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return v.status();
  }
  if (v->size() < 5) {
    return absl::DataLossError(
        "context graph record is corrupt: the vector space record is short");
  }
  VectorSpace space;
  space.dims = ReadBigEndian32(v->data());
  space.model = std::string(v->substr(4));
  return space;
}

absl::Status CheckEmbedder(const Embedder& embedder) {
  const uint32_t dims = embedder.dims();
  if (dims < 1 || dims > kMaxEmbeddingDims) {
    return absl::InvalidArgumentError(
        absl::StrFormat("embedder dims is %d; it must be between 1 and %d",
                        dims, kMaxEmbeddingDims));
  }
  return CheckText("embedder model", embedder.model(), kMaxEmbeddingModelBytes);
}

absl::Status CheckSameSpace(const std::optional<VectorSpace>& space,
                            std::string_view model, uint32_t dims) {
  if (!space || (space->model == model && space->dims == dims)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "the graph's vectors are from model '%s' with %d dims, not '%s' with "
      "%d; vectors of two models cannot be compared (ResetEmbeddings drops "
      "them)",
      space->model, space->dims, model, dims));
}

absl::Status CheckVector(std::string_view field, std::span<const float> v) {
  if (v.empty() || v.size() > kMaxEmbeddingDims) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has %d dims; it must have 1..%d", field, v.size(),
                        kMaxEmbeddingDims));
  }
  bool nonzero = false;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s[%d] is %g; it must be finite", field, i, v[i]));
    }
    nonzero = nonzero || v[i] != 0;
  }
  if (!nonzero) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is all zeros; it has no direction", field));
  }
  // Finite components can still overflow the norm's square.
  if (!std::isfinite(Norm(v))) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is too long to normalize", field));
  }
  return absl::OkStatus();
}

std::string QuantizeRow(std::span<const float> v) {
  const double norm = Norm(v);
  double max = 0;
  for (float x : v) max = std::max(max, std::fabs(x / norm));
  const float scale = static_cast<float>(max / 127.0);
  std::string row(sizeof(float) + v.size(), '\0');
  std::memcpy(row.data(), &scale, sizeof(float));
  for (size_t i = 0; i < v.size(); ++i) {
    const double q = scale > 0 ? std::nearbyint(v[i] / norm / scale) : 0;
    row[sizeof(float) + i] =
        static_cast<char>(static_cast<int8_t>(std::clamp(q, -127.0, 127.0)));
  }
  return row;
}

absl::Status PutVector(WriteTransaction& txn, const VectorDbs& dbs,
                       uint64_t seq, std::span<const float> v,
                       std::string_view model) {
  CTXKIT_RETURN_IF_ERROR(CheckVector("vector", v));
  CTXKIT_ASSIGN_OR_RETURN(std::optional<VectorSpace> space,
                          ReadVectorSpace(txn, dbs));
  CTXKIT_RETURN_IF_ERROR(
      CheckSameSpace(space, model, static_cast<uint32_t>(v.size())));
  if (!space) {
    std::string record;
    AppendBigEndian32(&record, static_cast<uint32_t>(v.size()));
    record += model;
    CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.meta, kSpaceKey, record));
  }
  const std::string key = SeqKey(seq);
  CTXKIT_RETURN_IF_ERROR(
      TxnPut(txn, dbs.vecf, key,
             std::string_view(reinterpret_cast<const char*>(v.data()),
                              v.size() * sizeof(float))));
  CTXKIT_RETURN_IF_ERROR(TxnPut(txn, dbs.vec, key, QuantizeRow(v)));
  return LogChange(txn, dbs, seq);
}

absl::StatusOr<bool> DropVector(WriteTransaction& txn, const VectorDbs& dbs,
                                uint64_t seq) {
  const std::string key = SeqKey(seq);
  CTXKIT_ASSIGN_OR_RETURN(bool had_float, TxnDelete(txn, dbs.vecf, key));
  CTXKIT_ASSIGN_OR_RETURN(bool had_row, TxnDelete(txn, dbs.vec, key));
  if (!had_float && !had_row) return false;
  CTXKIT_RETURN_IF_ERROR(LogChange(txn, dbs, seq));
  return true;
}

absl::Status DropAllVectors(WriteTransaction& txn, const VectorDbs& dbs) {
  CTXKIT_RETURN_IF_ERROR(TxnClear(txn, dbs.vec));
  CTXKIT_RETURN_IF_ERROR(TxnClear(txn, dbs.vecf));
  CTXKIT_RETURN_IF_ERROR(TxnDelete(txn, dbs.meta, kSpaceKey).status());
  return LogChange(txn, dbs, 0);
}

absl::Status EmbedText(Embedder& embedder, std::string_view text,
                       std::vector<float>& out) {
  out.assign(embedder.dims(), 0.0f);
  const std::string_view texts[] = {text};
  const absl::Status s = ToAbsl(embedder.Embed(texts, out));
  if (!s.ok()) {
    return absl::Status(
        s.code(), absl::StrFormat("embedder '%s' failed: %s", embedder.model(),
                                  s.message()));
  }
  const absl::Status checked = CheckVector("the embedding", out);
  if (!checked.ok()) {
    return absl::InternalError(
        absl::StrFormat("embedder '%s' returned a bad vector: %s",
                        embedder.model(), checked.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::vector<float>>> ReadVector(
    const Transaction& txn, const VectorDbs& dbs, uint64_t seq) {
  if (!dbs.vecf.valid()) return std::nullopt;
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.vecf, SeqKey(seq));
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    return v.status();
  }
  if (v->empty() || v->size() % sizeof(float) != 0) {
    return absl::DataLossError(absl::StrFormat(
        "context graph record is corrupt: context %d's vector is %d bytes", seq,
        v->size()));
  }
  std::vector<float> out(v->size() / sizeof(float));
  std::memcpy(out.data(), v->data(), v->size());
  return out;
}

double Cosine(std::span<const float> a, std::span<const float> b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0 || nb == 0) return 0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

// ---- VectorIndex ----

absl::Status VectorIndex::Rebuild(const Transaction& txn, const VectorDbs& dbs,
                                  uint64_t change) {
  CTXKIT_ASSIGN_OR_RETURN(std::optional<VectorSpace> space,
                          ReadVectorSpace(txn, dbs));
  seqs_.clear();
  scales_.clear();
  rows_.clear();
  row_of_.clear();
  dims_ = space ? space->dims : 0;
  if (space) {
    CTXKIT_ASSIGN_OR_RETURN(uint64_t n, TxnCount(txn, dbs.vec));
    seqs_.reserve(n);
    scales_.reserve(n);
    rows_.reserve(n * dims_);
    AdviseHugePages(rows_.data(), rows_.capacity());
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.vec));
    for (cursor.SeekToFirst(); cursor.Valid(); cursor.Next()) {
      const std::string_view k = cursor.key();
      const std::string_view v = cursor.value();
      if (k.size() != 8 || v.size() != sizeof(float) + dims_) {
        return absl::DataLossError(
            "context graph record is corrupt: a vector scan row does not "
            "match the recorded dims (run Verify)");
      }
      const uint64_t seq = ReadBigEndian64(k.data());
      float scale;
      std::memcpy(&scale, v.data(), sizeof(float));
      row_of_[seq] = seqs_.size();
      seqs_.push_back(seq);
      scales_.push_back(scale);
      const auto* q = reinterpret_cast<const int8_t*>(v.data() + sizeof(float));
      rows_.insert(rows_.end(), q, q + dims_);
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  }
  loaded_ = true;
  change_ = change;
  return absl::OkStatus();
}

absl::Status VectorIndex::Apply(const Transaction& txn, const VectorDbs& dbs,
                                uint64_t seq) {
  absl::StatusOr<std::string_view> v = TxnGet(txn, dbs.vec, SeqKey(seq));
  if (!v.ok() && v.status().code() != absl::StatusCode::kNotFound) {
    return v.status();
  }
  auto at = row_of_.find(seq);
  if (!v.ok()) {
    if (at == row_of_.end()) return absl::OkStatus();
    // Swap the last row into its place.
    const size_t i = at->second, last = seqs_.size() - 1;
    if (i != last) {
      seqs_[i] = seqs_[last];
      scales_[i] = scales_[last];
      std::memcpy(&rows_[i * dims_], &rows_[last * dims_], dims_);
      row_of_[seqs_[i]] = i;
    }
    row_of_.erase(seq);
    seqs_.pop_back();
    scales_.pop_back();
    rows_.resize(seqs_.size() * dims_);
    return absl::OkStatus();
  }
  if (dims_ == 0) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<VectorSpace> space,
                            ReadVectorSpace(txn, dbs));
    if (space) dims_ = space->dims;
  }
  if (v->size() != sizeof(float) + dims_) {
    return absl::DataLossError(
        "context graph record is corrupt: a vector scan row does not match "
        "the recorded dims (run Verify)");
  }
  size_t i;
  if (at == row_of_.end()) {
    i = seqs_.size();
    row_of_[seq] = i;
    seqs_.push_back(seq);
    scales_.push_back(0);
    rows_.resize(seqs_.size() * dims_);
  } else {
    i = at->second;
  }
  std::memcpy(&scales_[i], v->data(), sizeof(float));
  std::memcpy(&rows_[i * dims_], v->data() + sizeof(float), dims_);
  return absl::OkStatus();
}

absl::Status VectorIndex::Sync(const Transaction& txn, const VectorDbs& dbs) {
  CTXKIT_ASSIGN_OR_RETURN(uint64_t last, LastChange(txn, dbs));
  if (loaded_ && last <= change_) return absl::OkStatus();
  if (!loaded_) return Rebuild(txn, dbs, last);
  // The changes after change_, unless some were trimmed.
  std::vector<uint64_t> changed;
  {
    CTXKIT_ASSIGN_OR_RETURN(Cursor cursor, TxnNewCursor(txn, dbs.meta));
    cursor.Seek(LogKey(change_ + 1));
    if (!cursor.Valid() || cursor.key() != LogKey(change_ + 1)) {
      CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
      return Rebuild(txn, dbs, last);
    }
    for (; cursor.Valid() && cursor.key().size() == 9 &&
           cursor.key()[0] == kLogTag;
         cursor.Next()) {
      if (cursor.value().size() != 8) {
        return absl::DataLossError(
            "context graph record is corrupt: a vector change entry is not 8 "
            "bytes");
      }
      const uint64_t seq = ReadBigEndian64(cursor.value().data());
      if (seq == 0) return Rebuild(txn, dbs, last);
      changed.push_back(seq);
    }
    CTXKIT_RETURN_IF_ERROR(CursorStatus(cursor));
  }
  for (uint64_t seq : changed) {
    const absl::Status s = Apply(txn, dbs, seq);
    if (!s.ok()) {
      loaded_ = false;  // half applied: rebuild next time
      return s;
    }
  }
  change_ = last;
  return absl::OkStatus();
}

absl::StatusOr<size_t> VectorIndex::Size(const Transaction& txn,
                                         const VectorDbs& dbs) {
  std::unique_lock lock(mu_);
  CTXKIT_RETURN_IF_ERROR(Sync(txn, dbs));
  return seqs_.size();
}

absl::StatusOr<std::vector<VectorHit>> VectorIndex::Search(
    const Transaction& txn, const VectorDbs& dbs, std::span<const float> query,
    size_t limit, const std::function<bool(uint64_t)>& accept) {
  {
    std::unique_lock lock(mu_);
    CTXKIT_RETURN_IF_ERROR(Sync(txn, dbs));
  }
  std::shared_lock lock(mu_);
  if (seqs_.empty()) return std::vector<VectorHit>();
  if (query.size() != dims_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "text's embedding has %d dims; the graph's vectors have %d",
        query.size(), dims_));
  }
  const std::string q = QuantizeRow(query);
  const auto* qrow = reinterpret_cast<const int8_t*>(q.data() + sizeof(float));
  // The exact int8 scan. Scores are in int8 units times the row's scale
  // (the query's is common to all rows and left out).
  const size_t n = seqs_.size();
  // Reused by the thread's next query: a fresh buffer of 4 bytes a row
  // costs page faults on every query.
  thread_local std::vector<float> scores;
  scores.resize(n);
  ChosenScanKernel()(qrow, rows_.data(), scales_.data(), n, dims_,
                     scores.data());
  // The best `take` rows by int8 score (ties: lower seq), by a heap over
  // one pass; then those accept takes, until 4 * limit are, taking more
  // rows while it refuses some.
  auto better = [&](uint32_t a, uint32_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return seqs_[a] < seqs_[b];
  };
  const size_t want = 4 * limit;
  std::vector<uint64_t> candidates;
  std::vector<uint32_t> top;
  for (size_t take = std::min(n, want), skip = 0; candidates.size() < want;
       skip = take, take = std::min(n, take * 4)) {
    top.clear();
    for (uint32_t i = 0; i < n; ++i) {
      if (top.size() < take) {
        top.push_back(i);
        std::push_heap(top.begin(), top.end(), better);
      } else if (better(i, top.front())) {
        std::pop_heap(top.begin(), top.end(), better);
        top.back() = i;
        std::push_heap(top.begin(), top.end(), better);
      }
    }
    std::sort_heap(top.begin(), top.end(), better);
    for (size_t i = skip; i < top.size() && candidates.size() < want; ++i) {
      if (accept(seqs_[top[i]])) candidates.push_back(seqs_[top[i]]);
    }
    if (take == n) break;
  }
  lock.unlock();
  // Float rescoring, in the query's own snapshot.
  std::vector<VectorHit> hits;
  for (uint64_t seq : candidates) {
    CTXKIT_ASSIGN_OR_RETURN(std::optional<std::vector<float>> v,
                            ReadVector(txn, dbs, seq));
    if (!v || v->size() != query.size()) continue;
    hits.push_back({seq, Cosine(query, *v)});
  }
  std::sort(hits.begin(), hits.end(),
            [](const VectorHit& a, const VectorHit& b) {
              if (a.cosine != b.cosine) return a.cosine > b.cosine;
              return a.seq < b.seq;
            });
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}

}  // namespace internal
}  // namespace ctxkit
