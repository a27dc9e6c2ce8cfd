// Reading HTTP header values: the case and white space rules of RFC 9110
// that the server's checks (Authorization, Accept, Origin, Host) need.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HTTP_HEADERS_H_
#define CTXKIT_PROGRAMS_CTXKIT_HTTP_HEADERS_H_

#include <string_view>

namespace ctxkit::http {

// ASCII case-insensitive equality (header names, auth schemes, media types).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Whether `needle` occurs in `haystack`, ASCII case ignored.
bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle);

// `text` without leading and trailing spaces, tabs, CRs and LFs. The result
// views `text`.
std::string_view Trim(std::string_view text);

// The host of an Origin header value ("http://localhost:5173" ->
// "localhost", "http://[::1]:80" -> "::1"); empty when it has none. The
// result views `origin`.
std::string_view OriginHost(std::string_view origin);

// The host of a Host header value ("localhost:6789" -> "localhost",
// "[::1]:80" -> "::1", "example.com" -> "example.com"); empty when it has
// none or the brackets do not close. The result views `value`.
std::string_view HostOfHostHeader(std::string_view value);

}  // namespace ctxkit::http

#endif  // CTXKIT_PROGRAMS_CTXKIT_HTTP_HEADERS_H_
