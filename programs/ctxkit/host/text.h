// Small text helpers shared by the program's commands.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_TEXT_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_TEXT_H_

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ctxkit::program {

// `bytes` in binary units with at most one decimal: "512 B", "64 MiB",
// "1.5 GiB".
std::string FormatBytes(uint64_t bytes);

// A duration for people: "850 us", "2.31 ms", "1.20 s".
std::string FormatDuration(std::chrono::nanoseconds duration);

// `text` with control characters, DEL and bytes of invalid UTF-8 written as
// \xNN (and backslash as \\), so that names and arguments from anywhere can be
// printed to a terminal without garbling or steering it.
std::string Printable(std::string_view text);

// The end of an error naming what `given` (an unknown command, flag or
// setting) was most likely meant to be: "; did you mean 'max_tokens'?", or
// "" when no candidate is close. Close is a candidate that `given` begins
// (an abbreviation of 3 bytes or more) or one within two edits, or a third
// of its length for long names; an edit is an insertion, deletion,
// substitution or swap of two neighbours (the commonest typo).
std::string DidYouMean(std::string_view given,
                       std::span<const std::string_view> candidates);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_TEXT_H_
