// Debian 12 builds Abseil with ABSL_OPTION_USE_STD_STRING_VIEW 0 (and vcpkg
// or Conan builds may differ), so absl::string_view may be a distinct type
// that std::string_view does not convert to. absl::StrCat, StrJoin and the
// escaping functions take absl::string_view, so std::string_view arguments go
// through this adapter. absl::StrFormat accepts std::string_view directly.

#ifndef CTXKIT_LIB_BASE_ABSL_STRING_VIEW_H_
#define CTXKIT_LIB_BASE_ABSL_STRING_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace ctxkit::internal {

inline absl::string_view AV(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_BASE_ABSL_STRING_VIEW_H_
