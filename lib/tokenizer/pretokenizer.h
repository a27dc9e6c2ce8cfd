// Pre-tokenization: the split of text into the pieces that BPE then encodes
// one at a time. Each encoding splits with a regular expression; these are
// hand-written scanners that give exactly the pieces that tiktoken (Rust
// fancy-regex: leftmost-first alternation, greedy quantifiers with
// backtracking, a find-all loop) gives, with \p{...} and \s (= White_Space)
// taken from the Unicode 16.0 tables in lib/unicode/unicode.h. They run in
// time linear in the input, never allocate, and never backtrack.
//
// Thread safety: all functions are pure and may be called concurrently.

#ifndef CTXKIT_LIB_TOKENIZER_PRETOKENIZER_H_
#define CTXKIT_LIB_TOKENIZER_PRETOKENIZER_H_

#include <cstddef>
#include <string_view>
#include <vector>

namespace ctxkit::internal {

// The pre-tokenization patterns, as in tiktoken's openai_public.py, one
// alternative per line (\s is White_Space; contractions under (?i:) match by
// simple case folding, so 'ſ (U+017F) is a contraction and 'K (U+212A KELVIN
// SIGN) is none, as K is not among the letters).
enum class PretokenPattern {
  // r50k_base, p50k_base, p50k_edit, gpt2 and the legacy Claude encoding:
  //   's|'t|'re|'ve|'m|'ll|'d
  //   | ?\p{L}+
  //   | ?\p{N}+
  //   | ?[^\s\p{L}\p{N}]+
  //   |\s+(?!\S)
  //   |\s+
  kGpt2,
  // cl100k_base and Llama 3:
  //   (?i:'s|'t|'re|'ve|'m|'ll|'d)
  //   |[^\r\n\p{L}\p{N}]?\p{L}+
  //   |\p{N}{1,3}
  //   | ?[^\s\p{L}\p{N}]+[\r\n]*
  //   |\s*[\r\n]+
  //   |\s+(?!\S)
  //   |\s+
  kCl100k,
  // o200k_base and o200k_harmony:
  //   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
  //       (?i:'s|'t|'re|'ve|'m|'ll|'d)?
  //   |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
  //       (?i:'s|'t|'re|'ve|'m|'ll|'d)?
  //   |\p{N}{1,3}
  //   | ?[^\s\p{L}\p{N}]+[\r\n/]*
  //   |\s*[\r\n]+
  //   |\s+(?!\S)
  //   |\s+
  kO200k,
};

// Returns the end (a byte offset into `text`, > pos) of the piece that starts
// at byte `pos`: the match the pattern's find-all loop reports there. Every
// character belongs to some piece, so pieces tile the text and the next piece
// starts at the returned offset.
// Preconditions (not checked): `text` is valid UTF-8, pos < text.size(), and
// `pos` is the first byte of a character (0 or a previous return value).
size_t NextPiece(PretokenPattern pattern, std::string_view text, size_t pos);

// Calls fn(std::string_view piece) for each piece of `text` in order. The
// pieces view `text`. Same precondition on `text` as NextPiece.
template <typename Fn>
void ForEachPiece(PretokenPattern pattern, std::string_view text, Fn&& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = NextPiece(pattern, text, pos);
    fn(text.substr(pos, end - pos));
    pos = end;
  }
}

// Returns all pieces of `text`, viewing `text` (valid while it is). Same
// precondition as NextPiece; allocates, so hot paths use ForEachPiece.
std::vector<std::string_view> SplitIntoPieces(PretokenPattern pattern,
                                              std::string_view text);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_TOKENIZER_PRETOKENIZER_H_
