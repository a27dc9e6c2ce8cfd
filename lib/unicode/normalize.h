// Unicode 16.0 NFKC normalization (Unicode Standard Annex #15), for
// encodings whose reference tokenizer normalizes its input first (the legacy
// Claude vocabulary of @anthropic-ai/tokenizer runs text.normalize("NFKC")).
//
// The tables are generated from the Unicode Character Database by
// lib/unicode/generate_normalization.mjs and checked against every line of
// Unicode's NormalizationTest.txt (tests/unicode/normalize_test.cc). NFKC
// here is the plain algorithm: it does not apply the Stream-Safe Text Format,
// so a run of any number of combining marks is reordered and composed as one.
//
// Cost: text that passes the quick check (all of ASCII, and most text in any
// script: ideographs, kana, Hangul syllables, precomposed Latin) is only
// scanned, 8 bytes at a time while it is ASCII. Only the stretches around
// characters that may change (compatibility characters, combining marks out
// of order, characters that may compose with the previous one) go through
// decomposition, reordering and composition.
//
// Input contract: the text is valid UTF-8 (lib/json/utf8.h); ctxkit validates
// text before it gets here. Invalid input is memory-safe and deterministic
// but not an error: each byte that does not start a well-formed sequence
// passes through unchanged and separates what comes before it from what
// comes after it (nothing composes across it).
//
// Thread safety: everything here is pure and reads only constant tables.

#ifndef CTXKIT_LIB_UNICODE_NORMALIZE_H_
#define CTXKIT_LIB_UNICODE_NORMALIZE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::internal::unicode {

// Returns whether `utf8` is certainly in NFKC by UAX #15's quick check: every
// character has NFKC_Quick_Check=Yes and the combining marks between starters
// are in canonical order. false means "not, or maybe not": NfkcNormalize
// decides. Does not allocate.
bool IsNfkcQuickCheckYes(std::string_view utf8);

// Returns NFKC(utf8). When the quick check passes this is a copy of `utf8`.
std::string NfkcNormalize(std::string_view utf8);

// A stretch of the input that NFKC rewrote, and what it became.
// NfkcNormalizeView reports them in order; they do not overlap. Outside them
// input and output are the same bytes: an input offset p before the first
// stretch is output offset p, and after stretch s it is
// p - s.input_end + s.output_end.
//
// Every character boundary of the input outside the stretches, and every
// stretch's two ends, is a place where input and output line up: NFKC of the
// input up to there is exactly the output up to the corresponding offset.
// (Inside a stretch that need not hold: "e" U+0301 becomes one character.)
struct NfkcStretch {
  size_t input_begin;
  size_t input_end;
  size_t output_begin;
  size_t output_end;
};

// Returns a view of NFKC(utf8) without copying when possible: `utf8` itself
// when the quick check passes (then *storage is left untouched), otherwise
// *storage, which is overwritten with NFKC(utf8). The view is valid while
// both `utf8` and *storage are alive and unchanged. `storage` must not be
// null and must not alias `utf8`. When `stretches` is not null it is
// cleared and receives the stretches that went through full normalization
// (possibly some that came out unchanged), so callers can map offsets of the
// output back to the input.
std::string_view NfkcNormalizeView(
    std::string_view utf8, std::string* storage,
    std::vector<NfkcStretch>* stretches = nullptr);

// Returns NFKC(utf8) computed by the full algorithm over the whole text, with
// no quick check and no segmentation: the reference that tests compare
// NfkcNormalize with, and a baseline for benchmarks. Precondition: `utf8` is
// valid UTF-8 (unlike the functions above, invalid input is undefined
// behaviour here).
std::string NfkcNormalizeWithoutQuickCheck(std::string_view utf8);

}  // namespace ctxkit::internal::unicode

#endif  // CTXKIT_LIB_UNICODE_NORMALIZE_H_
