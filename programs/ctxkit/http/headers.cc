#include "programs/ctxkit/http/headers.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace ctxkit::http {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return absl::ascii_tolower(x) == absl::ascii_tolower(y);
         });
}

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (EqualsIgnoreCase(haystack.substr(i, needle.size()), needle)) {
      return true;
    }
  }
  return false;
}

std::string_view Trim(std::string_view text) {
  const auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
  };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::string_view OriginHost(std::string_view origin) {
  const size_t scheme = origin.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = origin.substr(scheme + 3);
  rest = rest.substr(0, rest.find('/'));
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return {};
    return rest.substr(1, close - 1);
  }
  return rest.substr(0, rest.find(':'));
}

std::string_view HostOfHostHeader(std::string_view value) {
  value = Trim(value);
  if (!value.empty() && value.front() == '[') {
    const size_t close = value.find(']');
    if (close == std::string_view::npos) return {};
    return value.substr(1, close - 1);
  }
  return value.substr(0, value.find(':'));
}

}  // namespace ctxkit::http
