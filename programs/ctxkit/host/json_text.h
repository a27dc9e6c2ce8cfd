// The little JSON the program itself reads and writes: one JSON Lines input
// line holding a text (parsed with simdjson, which the program links as the
// library does), and quoted strings for its own --json output.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_JSON_TEXT_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_JSON_TEXT_H_

#include <string>
#include <string_view>

#include "ctxkit/status.h"

namespace ctxkit::program {

// The text of one JSON Lines line: the line is either a JSON string, or a
// JSON object whose member "text" is a string (other members may be any
// JSON values and are ignored). Escapes are decoded; \u escapes must form
// valid UTF-16 (a lone surrogate is an error, since the text must become
// UTF-8), and the line must be valid UTF-8 (RFC 8259). INVALID_ARGUMENT
// naming the problem otherwise, also for a duplicate "text", a missing
// "text" or trailing data; nesting deeper than 512 is refused.
// Thread-safe (a parser per thread, kept between calls).
StatusOr<std::string> ParseJsonLineText(std::string_view line);

// `text` as a JSON string literal with quotes: '"', '\\' and control
// characters escaped; bytes that are not UTF-8 become \ufffd, so the output
// is always valid JSON.
std::string JsonQuote(std::string_view text);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_JSON_TEXT_H_
