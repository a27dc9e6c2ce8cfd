// What the record commands (conv, ref, cache, optimize, stats) share: their
// content inputs (--content, --file or - for standard input), number flags,
// and printing a document. Every command prints exactly one JSON document on
// one line.

#ifndef CTXKIT_PROGRAMS_CTXKIT_CLI_RECORD_FLAGS_H_
#define CTXKIT_PROGRAMS_CTXKIT_CLI_RECORD_FLAGS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "ctxkit/status.h"
#include "programs/ctxkit/cli/cli.h"

namespace ctxkit::program {

// Flags shared by the content-taking commands.
extern const Flag kContentFlag;  // --content TEXT
extern const Flag kFileFlag;     // --file PATH

// The content of a command: --content TEXT, --file PATH, or the positional
// argument at `stdin_index` being "-" (standard input). Exactly one may be
// given: INVALID_ARGUMENT naming `field` when none or several are (nullopt
// when none is given and `optional` is true). Reads at most `max_bytes` + 1
// bytes, so oversized input reaches the library, which names the field and
// its limit, without reading unbounded input into memory.
StatusOr<std::optional<std::string>> ReadContent(const Args& args,
                                                 size_t stdin_index,
                                                 std::string_view field,
                                                 size_t max_bytes,
                                                 bool optional = false);

// The value of number flag `flag` (digits, after a '-' for a
// library_range flag; checked by the parser) as an int64, or nullopt when
// not given. INVALID_ARGUMENT naming `field` when it does not fit.
StatusOr<std::optional<int64_t>> NumberFlag(const Args& args, const Flag& flag,
                                            std::string_view field);

// NumberFlag for a library parameter of type uint32_t that the library
// checks against [min, max]: a value the type cannot hold (negative, or
// above 2^32 - 1) never reaches the library, so it gets the library's own
// message from here ("limit is -1; it must be between 1 and 1000").
StatusOr<std::optional<uint32_t>> Uint32NumberFlag(const Args& args,
                                                   const Flag& flag,
                                                   std::string_view field,
                                                   uint32_t min, uint32_t max);

// Writes `document` and a newline to `out`.
Status PrintDocument(const StatusOr<std::string>& document, std::ostream& out);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_CLI_RECORD_FLAGS_H_
