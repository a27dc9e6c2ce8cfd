// Strict UTF-8 validation, shared by everything in ctxkit that accepts or
// emits text: ctxkit promises UTF-8 on every string it hands out, so it checks
// every string it takes in.
//
// "Valid" means well-formed UTF-8 as defined by RFC 3629 and Unicode's table
// of well-formed byte sequences: no overlong forms, no surrogate code points
// (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences, no stray
// continuation bytes, and never the bytes 0xC0, 0xC1 or 0xF5..0xFF. The NUL
// character U+0000 is valid. This is the rule simdjson applies to documents it
// parses, so text that passes here is also accepted inside JSON strings.
//
// Thread safety: all functions are pure and may be called concurrently.

#ifndef CTXKIT_LIB_JSON_UTF8_H_
#define CTXKIT_LIB_JSON_UTF8_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ctxkit::internal {

// Returns whether `s` is well-formed UTF-8 (see above). The empty string is
// valid. Runs at memory speed for long inputs and does not allocate.
bool IsValidUtf8(std::string_view s);

// Returns OK if `s` is well-formed UTF-8. Otherwise returns INVALID_ARGUMENT
// with a message naming `what` (the caller's name for the text, such as
// "message.content") and the first offending byte, e.g.
//   message.content is not valid UTF-8: invalid byte 0xC3 at offset 17
//   (truncated sequence)
// The offset is that of the first byte of the first ill-formed sequence.
// Neither `s` nor `what` is retained.
absl::Status ValidateUtf8(std::string_view s, std::string_view what);

// `s` with each maximal subpart of an ill-formed sequence replaced by U+FFFD
// (Unicode's recommended practice; what Python's errors="replace" does), so
// the result is valid UTF-8. Valid text comes back unchanged.
std::string ReplaceInvalidUtf8(std::string_view s);

// Appends the UTF-8 encoding of `cp` (1 to 4 bytes) to *out. `cp` must be a
// Unicode scalar value (at most U+10FFFF, not a surrogate): callers that
// decode untrusted escapes replace others with U+FFFD first.
void AppendUtf8(char32_t cp, std::string* out);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_JSON_UTF8_H_
