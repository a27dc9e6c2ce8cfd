// The C API's tokenizer sections (c.h, "Tokenizer" and "Tokenizers from
// files"): translation to ctxkit::Tokenizer.

#include "ctxkit/tokenizer.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capi/c_internal.h"
#include "ctxkit/c.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/status.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"

// Handles share the per-process cached tokenizer; the handle itself only
// holds a reference, so freeing it never frees the tokenizer under another.
struct ctxkit_tokenizer {
  std::shared_ptr<const ctxkit::Tokenizer> tokenizer;
};

namespace {

using ctxkit::StatusCode;
// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

constexpr uint32_t kKnownEncodeFlags = CTXKIT_ENCODE_ALLOW_SPECIAL |
                                       CTXKIT_ENCODE_SPECIAL_AS_TEXT |
                                       CTXKIT_ENCODE_REPLACE_INVALID_UTF8;

// The EncodeOptions that `flags` stand for, or INVALID_ARGUMENT.
ctxkit::Status OptionsFromFlags(uint32_t flags, ctxkit::EncodeOptions* out) {
  if ((flags & ~kKnownEncodeFlags) != 0) {
    return ctxkit::Status(
        StatusCode::kInvalidArgument, "unknown encode flags 0x" + [&] {
          static const char kHex[] = "0123456789abcdef";
          std::string hex;
          uint32_t bits = flags & ~kKnownEncodeFlags;
          do {
            hex.insert(hex.begin(), kHex[bits & 0xF]);
            bits >>= 4;
          } while (bits != 0);
          return hex;
        }());
  }
  const bool allow = (flags & CTXKIT_ENCODE_ALLOW_SPECIAL) != 0;
  const bool as_text = (flags & CTXKIT_ENCODE_SPECIAL_AS_TEXT) != 0;
  if (allow && as_text) {
    return ctxkit::Status(StatusCode::kInvalidArgument,
                          "CTXKIT_ENCODE_ALLOW_SPECIAL and "
                          "CTXKIT_ENCODE_SPECIAL_AS_TEXT exclude each other");
  }
  if (allow) out->allowed_special = ctxkit::SpecialTokenSet::All();
  if (as_text) out->disallowed_special = ctxkit::SpecialTokenSet::None();
  out->replace_invalid_utf8 = (flags & CTXKIT_ENCODE_REPLACE_INVALID_UTF8) != 0;
  return ctxkit::Status();
}

// The checks ctxkit_tokenizer_count and ctxkit_tokenizer_encode share:
// clears *out_count, then INVALID_ARGUMENT (returned) unless `tokenizer` and
// `out_count` are set and `text` is set or empty; -1 means "go on".
int StartCount(const ctxkit_tokenizer* tokenizer, const char* text, size_t len,
               size_t* out_count, char** out_error) {
  if (out_count != nullptr) *out_count = 0;
  if (tokenizer == nullptr || out_count == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "tokenizer and out_count must not be NULL");
  }
  return CheckArgs({{"text", text, len}}, out_error);
}

// Hands a finished JSON document (or the writer's error) to the caller.
int ReturnJson(ctxkit::internal::JsonWriter writer, char** out_json,
               size_t* out_json_len, char** out_error) {
  return ReturnResult(std::move(writer).Finish(), out_json, out_json_len,
                      out_error);
}

// The decode calls differ only in the method they call.
template <typename DecodeFn>
int DecodeInto(const ctxkit_tokenizer* tokenizer, const uint32_t* ids, size_t n,
               char** out_text, size_t* out_text_len, char** out_error,
               DecodeFn decode) {
  if (out_text != nullptr) *out_text = nullptr;
  if (out_text_len != nullptr) *out_text_len = 0;
  if (tokenizer == nullptr || out_text == nullptr || out_text_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "tokenizer, out_text and out_text_len must not be NULL");
  }
  if (ids == nullptr && n != 0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "ids is NULL with a non-zero count");
  }
  return Guard(out_error, [&] {
    const std::span<const uint32_t> span =
        ids == nullptr ? std::span<const uint32_t>()
                       : std::span<const uint32_t>(ids, n);
    return ReturnResult(decode(*tokenizer->tokenizer, span), out_text,
                        out_text_len, out_error);
  });
}

// specials_json, {"text": id, ...}, as the pairs FromTiktokenFile takes.
ctxkit::Status ParseSpecials(
    std::string_view json, std::vector<std::pair<std::string, uint32_t>>* out) {
  if (json.empty()) return ctxkit::Status();
  simdjson::dom::parser parser;
  auto root = ctxkit::internal::ParseJson(parser, json, "specials_json");
  if (!root.ok()) return ctxkit::internal::ToPublic(root.status());
  auto object = ctxkit::internal::AsObject(*root, "specials_json");
  if (!object.ok()) return ctxkit::internal::ToPublic(object.status());
  for (auto field : *object) {
    const std::string_view text = field.key;
    auto id = ctxkit::internal::AsUint64(
        field.value, ctxkit::internal::JsonPath("specials_json", text));
    if (!id.ok()) return ctxkit::internal::ToPublic(id.status());
    if (*id > UINT32_MAX) {
      return ctxkit::Status(StatusCode::kInvalidArgument,
                            "specials_json: the id of special token '" +
                                std::string(text) + "' is too large");
    }
    out->emplace_back(std::string(text), static_cast<uint32_t>(*id));
  }
  return ctxkit::Status();
}

}  // namespace

extern "C" {

int ctxkit_tokenizer_create_for_encoding(const char* name, size_t name_len,
                                         ctxkit_tokenizer** out,
                                         char** out_error) {
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out is NULL");
  }
  *out = nullptr;
  if (int rc = CheckArgs({{"name", name, name_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto tokenizer = ctxkit::Tokenizer::ForEncoding(View(name, name_len));
    if (!tokenizer.ok()) return Report(tokenizer.status(), out_error);
    *out = new ctxkit_tokenizer{std::move(*tokenizer)};
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_create_for_model(const char* model, size_t model_len,
                                      ctxkit_tokenizer** out, int* out_exact,
                                      char** out_error) {
  if (out_exact != nullptr) *out_exact = 0;
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out is NULL");
  }
  *out = nullptr;
  if (int rc = CheckArgs({{"model", model, model_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    const ctxkit::ModelRegistry& registry = ctxkit::ModelRegistry::Default();
    const std::string_view name = View(model, model_len);
    auto info = registry.Find(name);
    if (!info.ok()) return Report(info.status(), out_error);
    auto tokenizer = registry.TokenizerFor(name);
    if (!tokenizer.ok()) return Report(tokenizer.status(), out_error);
    *out = new ctxkit_tokenizer{std::move(*tokenizer)};
    if (out_exact != nullptr) *out_exact = info->exact ? 1 : 0;
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_create_from_tiktoken_file(
    const char* path, size_t path_len, const char* name, size_t name_len,
    int pattern, const char* specials_json, size_t specials_json_len,
    ctxkit_tokenizer** out, char** out_error) {
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out is NULL");
  }
  *out = nullptr;
  if ((path == nullptr && path_len != 0) ||
      (name == nullptr && name_len != 0) ||
      (specials_json == nullptr && specials_json_len != 0)) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "a string is NULL with a non-zero length");
  }
  ctxkit::PretokenizerPattern cc_pattern;
  switch (pattern) {
    case CTXKIT_PATTERN_GPT2:
      cc_pattern = ctxkit::PretokenizerPattern::kGpt2;
      break;
    case CTXKIT_PATTERN_CL100K:
      cc_pattern = ctxkit::PretokenizerPattern::kCl100k;
      break;
    case CTXKIT_PATTERN_O200K:
      cc_pattern = ctxkit::PretokenizerPattern::kO200k;
      break;
    default:
      return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                  "unknown pattern " + std::to_string(pattern) +
                      " (expected a CTXKIT_PATTERN_* value)");
  }
  return Guard(out_error, [&] {
    std::vector<std::pair<std::string, uint32_t>> specials;
    if (auto s =
            ParseSpecials(View(specials_json, specials_json_len), &specials);
        !s.ok()) {
      return Report(s, out_error);
    }
    auto tokenizer = ctxkit::Tokenizer::FromTiktokenFile(
        std::string(View(path, path_len)), std::string(View(name, name_len)),
        cc_pattern, std::move(specials));
    if (!tokenizer.ok()) return Report(tokenizer.status(), out_error);
    *out = new ctxkit_tokenizer{std::move(*tokenizer)};
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_create_llama3(const char* path, size_t path_len,
                                   ctxkit_tokenizer** out, char** out_error) {
  if (out == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "out is NULL");
  }
  *out = nullptr;
  if (int rc = CheckArgs({{"path", path, path_len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    auto tokenizer =
        ctxkit::Tokenizer::Llama3FromFile(std::string(View(path, path_len)));
    if (!tokenizer.ok()) return Report(tokenizer.status(), out_error);
    *out = new ctxkit_tokenizer{std::move(*tokenizer)};
    return Ok(out_error);
  });
}

void ctxkit_tokenizer_free(ctxkit_tokenizer* tokenizer) { delete tokenizer; }

const char* ctxkit_tokenizer_name(const ctxkit_tokenizer* tokenizer) {
  return tokenizer == nullptr ? nullptr : tokenizer->tokenizer->name().c_str();
}

uint32_t ctxkit_tokenizer_vocabulary_size(const ctxkit_tokenizer* tokenizer) {
  return tokenizer == nullptr ? 0 : tokenizer->tokenizer->vocabulary_size();
}

int ctxkit_tokenizer_encodings_json(char** out_json, size_t* out_json_len,
                                    char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (out_json == nullptr || out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "out_json and out_json_len must not be NULL");
  }
  return Guard(out_error, [&] {
    ctxkit::internal::JsonWriter writer;
    writer.BeginObject().Key("schema_version").Int(1).Key("encodings");
    writer.BeginArray();
    for (const std::string& name : ctxkit::Tokenizer::EncodingNames()) {
      writer.String(name);
    }
    writer.EndArray().EndObject();
    return ReturnJson(std::move(writer), out_json, out_json_len, out_error);
  });
}

int ctxkit_tokenizer_count(const ctxkit_tokenizer* tokenizer, const char* text,
                           size_t len, uint32_t flags, size_t* out_count,
                           char** out_error) {
  if (int rc = StartCount(tokenizer, text, len, out_count, out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::EncodeOptions options;
    if (auto s = OptionsFromFlags(flags, &options); !s.ok()) {
      return Report(s, out_error);
    }
    auto count = tokenizer->tokenizer->Count(View(text, len), options);
    if (!count.ok()) return Report(count.status(), out_error);
    *out_count = *count;
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_encode(const ctxkit_tokenizer* tokenizer, const char* text,
                            size_t len, uint32_t flags, uint32_t* ids,
                            size_t capacity, size_t* out_count,
                            char** out_error) {
  if (int rc = StartCount(tokenizer, text, len, out_count, out_error);
      rc >= 0) {
    return rc;
  }
  if (ids == nullptr && capacity != 0) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "ids is NULL with a non-zero capacity");
  }
  return Guard(out_error, [&] {
    ctxkit::EncodeOptions options;
    if (auto s = OptionsFromFlags(flags, &options); !s.ok()) {
      return Report(s, out_error);
    }
    auto encoded = tokenizer->tokenizer->Encode(View(text, len), options);
    if (!encoded.ok()) return Report(encoded.status(), out_error);
    const std::vector<uint32_t>& result = *encoded;
    if (result.size() > capacity) {
      *out_count = result.size();
      return Fail(out_error, CTXKIT_OUT_OF_RANGE,
                  "the text is " + std::to_string(result.size()) +
                      " tokens but the buffer holds " +
                      std::to_string(capacity));
    }
    if (!result.empty()) {
      std::memcpy(ids, result.data(), result.size() * sizeof(uint32_t));
    }
    *out_count = result.size();
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_decode(const ctxkit_tokenizer* tokenizer,
                            const uint32_t* ids, size_t n, char** out_text,
                            size_t* out_text_len, char** out_error) {
  return DecodeInto(
      tokenizer, ids, n, out_text, out_text_len, out_error,
      [](const ctxkit::Tokenizer& t, std::span<const uint32_t> span) {
        return t.Decode(span);
      });
}

int ctxkit_tokenizer_decode_utf8(const ctxkit_tokenizer* tokenizer,
                                 const uint32_t* ids, size_t n, char** out_text,
                                 size_t* out_text_len, char** out_error) {
  return DecodeInto(
      tokenizer, ids, n, out_text, out_text_len, out_error,
      [](const ctxkit::Tokenizer& t, std::span<const uint32_t> span) {
        return t.DecodeUtf8(span);
      });
}

int ctxkit_tokenizer_token_bytes(const ctxkit_tokenizer* tokenizer, uint32_t id,
                                 const char** out_bytes, size_t* out_bytes_len,
                                 char** out_error) {
  if (out_bytes != nullptr) *out_bytes = nullptr;
  if (out_bytes_len != nullptr) *out_bytes_len = 0;
  if (tokenizer == nullptr || out_bytes == nullptr ||
      out_bytes_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "tokenizer, out_bytes and out_bytes_len must not be NULL");
  }
  return Guard(out_error, [&] {
    auto bytes = tokenizer->tokenizer->TokenBytes(id);
    if (!bytes.ok()) return Report(bytes.status(), out_error);
    *out_bytes = bytes->data();
    *out_bytes_len = bytes->size();
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_truncate(const ctxkit_tokenizer* tokenizer,
                              const char* text, size_t len, size_t max_tokens,
                              uint32_t flags, size_t* out_prefix_len,
                              size_t* out_prefix_tokens, char** out_error) {
  if (out_prefix_len != nullptr) *out_prefix_len = 0;
  if (out_prefix_tokens != nullptr) *out_prefix_tokens = 0;
  if (tokenizer == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "tokenizer is NULL");
  }
  if (int rc = CheckArgs({{"text", text, len}}, out_error); rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::EncodeOptions options;
    if (auto s = OptionsFromFlags(flags, &options); !s.ok()) {
      return Report(s, out_error);
    }
    const std::string_view input = View(text, len);
    auto cut = tokenizer->tokenizer->Truncate(input, max_tokens, options);
    if (!cut.ok()) return Report(cut.status(), out_error);
    if (out_prefix_len != nullptr) *out_prefix_len = cut->text.size();
    if (out_prefix_tokens != nullptr) *out_prefix_tokens = cut->tokens;
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_count_many(const ctxkit_tokenizer* tokenizer,
                                const char* const* texts, const size_t* lens,
                                size_t n, unsigned threads, uint32_t flags,
                                size_t* out_counts, char** out_error) {
  if (out_counts != nullptr) std::fill(out_counts, out_counts + n, size_t{0});
  if (tokenizer == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT, "tokenizer is NULL");
  }
  if (n != 0 &&
      (texts == nullptr || lens == nullptr || out_counts == nullptr)) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "texts, lens and out_counts must not be NULL when n is not 0");
  }
  for (size_t i = 0; i < n; ++i) {
    if (texts[i] == nullptr && lens[i] != 0) {
      return Fail(
          out_error, CTXKIT_INVALID_ARGUMENT,
          "texts[" + std::to_string(i) + "] is NULL with a non-zero length");
    }
  }
  return Guard(out_error, [&] {
    ctxkit::EncodeOptions options;
    if (auto s = OptionsFromFlags(flags, &options); !s.ok()) {
      return Report(s, out_error);
    }
    std::vector<std::string_view> views(n);
    for (size_t i = 0; i < n; ++i) views[i] = View(texts[i], lens[i]);
    auto counts = tokenizer->tokenizer->CountMany(views, threads, options);
    if (!counts.ok()) return Report(counts.status(), out_error);
    std::copy(counts->begin(), counts->end(), out_counts);
    return Ok(out_error);
  });
}

int ctxkit_tokenizer_special_tokens_json(const ctxkit_tokenizer* tokenizer,
                                         char** out_json, size_t* out_json_len,
                                         char** out_error) {
  if (out_json != nullptr) *out_json = nullptr;
  if (out_json_len != nullptr) *out_json_len = 0;
  if (tokenizer == nullptr || out_json == nullptr || out_json_len == nullptr) {
    return Fail(out_error, CTXKIT_INVALID_ARGUMENT,
                "tokenizer, out_json and out_json_len must not be NULL");
  }
  return Guard(out_error, [&] {
    ctxkit::internal::JsonWriter writer;
    writer.BeginObject().Key("schema_version").Int(1);
    writer.Key("encoding").String(tokenizer->tokenizer->name());
    writer.Key("special_tokens").BeginArray();
    for (const auto& [text, id] : tokenizer->tokenizer->SpecialTokens()) {
      writer.BeginObject().Key("text").String(text).Key("id").Uint(id);
      writer.EndObject();
    }
    writer.EndArray().EndObject();
    return ReturnJson(std::move(writer), out_json, out_json_len, out_error);
  });
}

size_t ctxkit_tokens_estimate(const char* text, size_t len) {
  return text == nullptr ? 0
                         : ctxkit::EstimateTokens(std::string_view(text, len));
}

}  // extern "C"
