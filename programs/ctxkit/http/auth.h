// Bearer-token authentication of `ctxkit serve`: the token file and the
// comparison of what a client sends against it.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HTTP_AUTH_H_
#define CTXKIT_PROGRAMS_CTXKIT_HTTP_AUTH_H_

#include <string>
#include <string_view>

#include "ctxkit/status.h"

namespace ctxkit::http {

// The bearer token of a token file: its first line, surrounding white space
// removed. NOT_FOUND / PERMISSION_DENIED when unreadable, INVALID_ARGUMENT
// when that line is empty. Reads at most 64 KiB.
StatusOr<std::string> ReadTokenFile(const std::string& path);

// Whether `given` equals `expected`, in a time that depends on the length
// of `expected` only, so that response times do not tell an attacker how
// much of a guess matched.
bool ConstantTimeEquals(std::string_view given, std::string_view expected);

}  // namespace ctxkit::http

#endif  // CTXKIT_PROGRAMS_CTXKIT_HTTP_AUTH_H_
