// Helpers shared by ctxkit's C++ unit tests.

#ifndef CTXKIT_TESTS_UNIT_TEST_UTIL_H_
#define CTXKIT_TESTS_UNIT_TEST_UTIL_H_

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/status.h"

namespace ctxkit::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents when
// this object is destroyed.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl =
        std::string(base && *base ? base : "/tmp") + "/ctxkit-test-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The value of `v`; the test stops (REQUIRE) with its status when it holds
// none.
template <typename T>
T Must(StatusOr<T> v) {
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  return std::move(v).value();
}

// Whether `part` occurs in `text` (std::string_view::contains is C++23).
inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// Calls fn(line_number, fields) for each line of the tab-separated table
// at `path` that is neither empty nor a comment (starting with '#'); the
// fields are split at every tab, and nothing in them is unescaped. Fails
// the test when the file cannot be read.
template <typename Fn>
void ForEachTableRow(const std::string& path, Fn&& fn) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open ", path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
      const size_t tab = line.find('\t', start);
      fields.push_back(line.substr(
          start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    fn(number, std::move(fields));
  }
}

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_UNIT_TEST_UTIL_H_
