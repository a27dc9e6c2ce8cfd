#include "lib/tokenizer/embedded_vocabularies.h"

#include <array>
#include <cstdint>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

// The data files are pulled in by the assembler's .incbin, which costs
// nothing at build time, unlike converting megabytes to a C array. CMake
// passes the absolute directory of the data (CTXKIT_VOCAB_DATA_DIR) and lists
// the files as OBJECT_DEPENDS of this source, because the compiler's
// dependency output does not know about files the assembler includes.
//
// Each blob gets a hidden symbol (never exported from libctxkit.so, reached
// PC-relative, so -fPIC, shared and static builds all work) and a hidden
// 4-byte size beside it, which avoids subtracting pointers to two distinct
// objects in C++. The names do not start with "ctxkit_", which the shared
// library's version script exports. ELF targets only (GNU as syntax, which
// GCC and Clang's integrated assembler both accept, on x86-64 and AArch64).
#ifndef CTXKIT_VOCAB_DATA_DIR
#error "CTXKIT_VOCAB_DATA_DIR must name the directory of the .ctxvocab files"
#endif

// clang-format off
#define CTXKIT_EMBED_VOCABULARY(sym, file)                                 \
  asm(".pushsection .rodata.ctxkit_vocabularies,\"a\",%progbits\n"         \
      ".balign 16\n"                                                        \
      ".globl " #sym "\n"                                                   \
      ".hidden " #sym "\n"                                                  \
      ".type " #sym ",%object\n" #sym ":\n"                                 \
      ".incbin \"" CTXKIT_VOCAB_DATA_DIR "/" file "\"\n"                    \
      ".L" #sym "_end:\n"                                                   \
      ".size " #sym ", .L" #sym "_end - " #sym "\n"                         \
      ".balign 4\n"                                                         \
      ".globl " #sym "_size\n"                                              \
      ".hidden " #sym "_size\n"                                             \
      ".type " #sym "_size,%object\n" #sym "_size:\n"                       \
      ".4byte .L" #sym "_end - " #sym "\n"                                  \
      ".size " #sym "_size, 4\n"                                            \
      ".popsection\n");                                                     \
  extern "C" __attribute__((visibility("hidden"))) const char sym[];        \
  extern "C" __attribute__((visibility("hidden"))) const uint32_t sym##_size
// clang-format on

CTXKIT_EMBED_VOCABULARY(CtxkitVocabulary_r50k_base, "r50k_base.ctxvocab");
CTXKIT_EMBED_VOCABULARY(CtxkitVocabulary_p50k_base, "p50k_base.ctxvocab");
CTXKIT_EMBED_VOCABULARY(CtxkitVocabulary_cl100k_base, "cl100k_base.ctxvocab");
CTXKIT_EMBED_VOCABULARY(CtxkitVocabulary_o200k_base, "o200k_base.ctxvocab");
CTXKIT_EMBED_VOCABULARY(CtxkitVocabulary_claude, "claude.ctxvocab");

namespace ctxkit::internal {
namespace {

struct Embedded {
  std::string_view name;
  const char* data;
  const uint32_t* size;
};

constexpr size_t kCount = 5;

const std::array<Embedded, kCount>& Table() {
  static const std::array<Embedded, kCount> table = {{
      {"r50k_base", CtxkitVocabulary_r50k_base,
       &CtxkitVocabulary_r50k_base_size},
      {"p50k_base", CtxkitVocabulary_p50k_base,
       &CtxkitVocabulary_p50k_base_size},
      {"cl100k_base", CtxkitVocabulary_cl100k_base,
       &CtxkitVocabulary_cl100k_base_size},
      {"o200k_base", CtxkitVocabulary_o200k_base,
       &CtxkitVocabulary_o200k_base_size},
      {"claude", CtxkitVocabulary_claude, &CtxkitVocabulary_claude_size},
  }};
  return table;
}

constexpr std::array<std::string_view, kCount> kNames = {
    "r50k_base", "p50k_base", "cl100k_base", "o200k_base", "claude"};

}  // namespace

std::span<const std::string_view> EmbeddedVocabularyNames() { return kNames; }

std::string_view EmbeddedVocabularyData(std::string_view name) {
  for (const Embedded& e : Table()) {
    if (e.name == name) return std::string_view(e.data, *e.size);
  }
  return {};
}

absl::StatusOr<const Vocabulary*> EmbeddedVocabulary(std::string_view name) {
  struct Cached {
    std::once_flag once;
    // Deliberately leaked: shared by every tokenizer until the process ends.
    const absl::StatusOr<Vocabulary>* vocabulary = nullptr;
  };
  static std::array<Cached, kCount> cache;
  for (size_t i = 0; i < kCount; ++i) {
    if (kNames[i] != name) continue;
    Cached& c = cache[i];
    std::call_once(c.once, [&c, name] {
      c.vocabulary = new absl::StatusOr<Vocabulary>(
          Vocabulary::FromStaticCompact(EmbeddedVocabularyData(name)));
    });
    if (!c.vocabulary->ok()) return c.vocabulary->status();
    return &**c.vocabulary;
  }
  return absl::NotFoundError(absl::StrFormat(
      "no built-in vocabulary is named \"%s\" (built in: r50k_base, "
      "p50k_base, cl100k_base, o200k_base, claude)",
      name));
}

}  // namespace ctxkit::internal
