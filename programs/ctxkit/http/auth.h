// Bearer-token authentication of `ctxkit serve`: the token file and the
// comparison of what a client sends against it.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HTTP_AUTH_H_
#define CTXKIT_PROGRAMS_CTXKIT_HTTP_AUTH_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "ctxkit/status.h"

namespace ctxkit::http {

// The shortest token a token file may hold: 32 bytes of a random token
// cannot be guessed over the network, a short password can.
inline constexpr size_t kMinTokenBytes = 32;

// The bearer token of a token file: its first line, surrounding white space
// removed. Errors name the file and the rule: NOT_FOUND / PERMISSION_DENIED
// when unreadable; FAILED_PRECONDITION when it is a symbolic link (the
// link, or what it points to, could be changed by someone else), not a
// regular file, or writable by its group or others (anyone who can write
// it chooses the token); INVALID_ARGUMENT when that line is empty or
// shorter than kMinTokenBytes. Reads at most 64 KiB.
StatusOr<std::string> ReadTokenFile(const std::string& path);

// Whether `given` equals `expected`, in a time that depends on the length
// of `expected` only, so that response times do not tell an attacker how
// much of a guess matched.
bool ConstantTimeEquals(std::string_view given, std::string_view expected);

}  // namespace ctxkit::http

#endif  // CTXKIT_PROGRAMS_CTXKIT_HTTP_AUTH_H_
