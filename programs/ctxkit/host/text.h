// Small text helpers shared by the program's commands.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_TEXT_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_TEXT_H_

#include <chrono>
#include <cstdint>
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

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_TEXT_H_
