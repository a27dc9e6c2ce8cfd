// ctxkit::Tokenizer: the public face of Encoding, and the per-process cache
// of built-in tokenizers.

#include "ctxkit/tokenizer.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "lib/json/utf8.h"
#include "lib/status/status_internal.h"
#include "lib/tokenizer/builtin_encodings.h"
#include "lib/tokenizer/encoding.h"
#include "lib/tokenizer/tiktoken_file.h"
#include "lib/tokenizer/tokenizer_internal.h"
#include "lib/unicode/normalize.h"

namespace ctxkit::internal {

std::shared_ptr<const Tokenizer> TokenizerAccess::Make(
    std::unique_ptr<const Encoding> encoding) {
  return std::shared_ptr<const Tokenizer>(new Tokenizer(std::move(encoding)));
}

absl::StatusOr<std::shared_ptr<const Tokenizer>> TokenizerForEncoding(
    std::string_view name) {
  // Built once per process, on first use, then shared: an encoding is
  // immutable and costs megabytes.
  static std::mutex* mu = new std::mutex;
  static auto* cache =
      new std::map<std::string, std::shared_ptr<const Tokenizer>, std::less<>>;
  std::lock_guard lock(*mu);
  if (auto it = cache->find(name); it != cache->end()) return it->second;
  auto encoding = BuildBuiltinEncoding(name);
  if (!encoding.ok()) return encoding.status();
  std::shared_ptr<const Tokenizer> tokenizer =
      TokenizerAccess::Make(std::move(*encoding));
  cache->emplace(std::string(name), tokenizer);
  return tokenizer;
}

absl::StatusOr<size_t> TokenizerCount(const Tokenizer& tokenizer,
                                      std::string_view text,
                                      const EncodeOptions& options) {
  return TokenizerAccess::EncodingOf(tokenizer).Count(text, options);
}

absl::StatusOr<size_t> TokenizerCountOrdinary(const Tokenizer& tokenizer,
                                              std::string_view text) {
  EncodeOptions options;
  options.disallowed_special = SpecialTokenSet::None();
  return TokenizerCount(tokenizer, text, options);
}

absl::StatusOr<Truncation> TokenizerTruncate(const Tokenizer& tokenizer,
                                             std::string_view text,
                                             size_t max_tokens,
                                             const EncodeOptions& options) {
  if (!IsValidUtf8(text)) return ValidateUtf8(text, "text");
  const Encoding& encoding = TokenizerAccess::EncodingOf(tokenizer);
  // The tokens are those of the normalized text (the text itself unless the
  // encoding normalizes); `stretches` maps its offsets back to `text`.
  std::string storage;
  std::vector<unicode::NfkcStretch> stretches;
  const std::string_view normalized =
      encoding.Normalize(text, &storage, &stretches);
  std::vector<uint32_t> ids;
  // Normalizing again inside Encode changes nothing (NFKC is idempotent).
  // Only the first max_tokens + 1 ids matter (the last one says whether
  // anything is cut off), so the encoding stops there.
  if (absl::Status s =
          encoding.EncodePrefix(normalized, options, max_tokens, &ids);
      !s.ok()) {
    return s;
  }
  if (ids.size() <= max_tokens) return Truncation{text, ids.size(), false};
  // Decoding the ids gives back the normalized text, so the first k tokens
  // are a prefix of it; find the largest k <= max_tokens ending on a
  // character, and outside every stretch that normalization rewrote, where
  // the prefix lines up with a prefix of `text`.
  size_t bytes = 0;
  size_t tokens = 0;
  size_t end = 0;
  size_t s = 0;  // the first stretch that does not end before `end`
  for (size_t k = 0; k < max_tokens; ++k) {
    end += encoding.TokenBytes(ids[k])->size();
    const bool boundary =
        end == normalized.size() ||
        (static_cast<unsigned char>(normalized[end]) & 0xC0) != 0x80;
    if (!boundary) continue;
    while (s < stretches.size() && stretches[s].output_end < end) ++s;
    size_t input_end = end;
    if (s < stretches.size() && end > stretches[s].output_begin) {
      if (end != stretches[s].output_end) continue;  // inside a stretch
      input_end = stretches[s].input_end;
    } else if (s > 0) {
      input_end =
          end - stretches[s - 1].output_end + stretches[s - 1].input_end;
    }
    bytes = input_end;
    tokens = k + 1;
  }
  return Truncation{text.substr(0, bytes), tokens, true};
}

}  // namespace ctxkit::internal

namespace ctxkit {

using internal::ToPublic;

StatusOr<std::shared_ptr<const Tokenizer>> Tokenizer::ForEncoding(
    std::string_view name) {
  return ToPublic(internal::TokenizerForEncoding(name));
}

std::vector<std::string> Tokenizer::EncodingNames() {
  return internal::BuiltinEncodingNames();
}

StatusOr<std::shared_ptr<const Tokenizer>> Tokenizer::FromTiktokenFile(
    const std::string& path, std::string name, PretokenizerPattern pattern,
    std::vector<std::pair<std::string, uint32_t>> special_tokens) {
  internal::PretokenPattern internal_pattern =
      internal::PretokenPattern::kCl100k;
  switch (pattern) {
    case PretokenizerPattern::kGpt2:
      internal_pattern = internal::PretokenPattern::kGpt2;
      break;
    case PretokenizerPattern::kCl100k:
      internal_pattern = internal::PretokenPattern::kCl100k;
      break;
    case PretokenizerPattern::kO200k:
      internal_pattern = internal::PretokenPattern::kO200k;
      break;
    default:
      return Status(StatusCode::kInvalidArgument,
                    "unknown pre-tokenizer pattern " +
                        std::to_string(static_cast<int>(pattern)));
  }
  std::vector<internal::SpecialToken> specials;
  specials.reserve(special_tokens.size());
  for (auto& [text, id] : special_tokens) {
    specials.push_back({std::move(text), id});
  }
  auto encoding = internal::LoadTiktokenEncoding(
      path, std::move(name), internal_pattern, std::move(specials));
  if (!encoding.ok()) return ToPublic(encoding.status());
  return std::shared_ptr<const Tokenizer>(new Tokenizer(std::move(*encoding)));
}

StatusOr<std::shared_ptr<const Tokenizer>> Tokenizer::Llama3FromFile(
    const std::string& path) {
  auto encoding = internal::LoadLlama3Encoding(path);
  if (!encoding.ok()) return ToPublic(encoding.status());
  return std::shared_ptr<const Tokenizer>(new Tokenizer(std::move(*encoding)));
}

Tokenizer::Tokenizer(std::unique_ptr<const internal::Encoding> encoding)
    : encoding_(std::move(encoding)) {}

Tokenizer::~Tokenizer() = default;

const std::string& Tokenizer::name() const { return encoding_->name(); }

uint32_t Tokenizer::vocabulary_size() const {
  return encoding_->vocabulary_size();
}

StatusOr<std::vector<uint32_t>> Tokenizer::Encode(
    std::string_view text, const EncodeOptions& options) const {
  std::vector<uint32_t> ids;
  absl::Status status = encoding_->Encode(text, options, &ids);
  if (!status.ok()) return ToPublic(status);
  return ids;
}

StatusOr<size_t> Tokenizer::EncodeInto(std::string_view text,
                                       std::span<uint32_t> ids,
                                       const EncodeOptions& options) const {
  auto needed = encoding_->EncodeInto(text, options, ids);
  if (!needed.ok()) return ToPublic(needed.status());
  if (*needed > ids.size()) {
    return Status(
        StatusCode::kOutOfRange,
        absl::StrFormat("the text is %u tokens, but the buffer holds %u",
                        *needed, ids.size()));
  }
  return *needed;
}

StatusOr<std::vector<uint32_t>> Tokenizer::EncodeOrdinary(
    std::string_view text) const {
  EncodeOptions options;
  options.disallowed_special = SpecialTokenSet::None();
  return Encode(text, options);
}

StatusOr<size_t> Tokenizer::Count(std::string_view text,
                                  const EncodeOptions& options) const {
  return ToPublic(internal::TokenizerCount(*this, text, options));
}

StatusOr<size_t> Tokenizer::CountOrdinary(std::string_view text) const {
  return ToPublic(internal::TokenizerCountOrdinary(*this, text));
}

std::vector<std::pair<std::string, uint32_t>> Tokenizer::SpecialTokens() const {
  std::vector<std::pair<std::string, uint32_t>> tokens;
  tokens.reserve(encoding_->specials().size());
  for (const internal::SpecialToken& special : encoding_->specials()) {
    tokens.emplace_back(special.text, special.rank);
  }
  return tokens;
}

StatusOr<std::vector<size_t>> Tokenizer::CountMany(
    std::span<const std::string_view> texts, unsigned threads,
    const EncodeOptions& options) const {
  std::vector<size_t> counts(texts.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Starting a thread costs tens of microseconds, as much as counting a few
  // kilobytes: give each extra thread at least kBytesPerThread of text.
  constexpr size_t kBytesPerThread = 64 * 1024;
  size_t total_bytes = 0;
  for (std::string_view text : texts) total_bytes += text.size();
  threads = static_cast<unsigned>(std::clamp<size_t>(
      std::min<size_t>(threads, total_bytes / kBytesPerThread), 1,
      std::max<size_t>(texts.size(), 1)));
  // Texts are handed out one at a time, so a few long texts do not leave
  // the other threads idle.
  std::atomic<size_t> next{0};
  std::atomic<size_t> first_error{texts.size()};
  std::mutex error_mu;
  absl::Status error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < texts.size();) {
      if (first_error.load() < i) return;
      absl::StatusOr<size_t> n = encoding_->Count(texts[i], options);
      if (n.ok()) {
        counts[i] = *n;
        continue;
      }
      std::lock_guard lock(error_mu);
      if (i < first_error.load()) {
        first_error.store(i);
        error = absl::Status(
            n.status().code(),
            absl::StrFormat("texts[%u]: %s", i, n.status().message()));
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (!error.ok()) return ToPublic(error);
  return counts;
}

StatusOr<Truncation> Tokenizer::Truncate(std::string_view text,
                                         size_t max_tokens,
                                         const EncodeOptions& options) const {
  return ToPublic(
      internal::TokenizerTruncate(*this, text, max_tokens, options));
}

StatusOr<std::string> Tokenizer::Decode(std::span<const uint32_t> ids) const {
  return ToPublic(encoding_->Decode(ids));
}

StatusOr<std::string> Tokenizer::DecodeUtf8(
    std::span<const uint32_t> ids) const {
  auto bytes = encoding_->Decode(ids);
  if (!bytes.ok()) return ToPublic(bytes.status());
  if (internal::IsValidUtf8(*bytes)) return std::move(*bytes);
  return internal::ReplaceInvalidUtf8(*bytes);
}

StatusOr<std::string_view> Tokenizer::TokenBytes(uint32_t id) const {
  return ToPublic(encoding_->TokenBytes(id));
}

}  // namespace ctxkit
