// What the record commands (conv, ref, cache, optimize, stats) share: a
// compact JSON writer for their output, their content inputs (--content,
// --file or - for standard input) and number flags.
//
// The program uses the public API only, and the library exposes no JSON
// writer, so documents the library has no ...ToJson() for are written here.
// Every command prints exactly one JSON document on one line.

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_RECORD_COMMON_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_RECORD_COMMON_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "ctxkit/status.h"
#include "programs/ctxkit/cli/cli.h"

namespace ctxkit::program {

// Builds one compact JSON document. Commas are placed automatically; the
// caller nests Begin/End correctly (not checked: the program's own code is
// the only caller). Strings go through JsonQuote, so the output is valid
// UTF-8 JSON whatever bytes they hold.
class JsonOut {
 public:
  JsonOut& BeginObject();
  JsonOut& EndObject();
  JsonOut& BeginArray();
  JsonOut& EndArray();
  JsonOut& Key(std::string_view key);
  JsonOut& String(std::string_view value);
  JsonOut& Uint(uint64_t value);
  JsonOut& Int(int64_t value);
  // Shortest decimal that reads back as `value`; null for NaN/infinity.
  JsonOut& Double(double value);
  JsonOut& Bool(bool value);
  JsonOut& Null();
  // A JSON document that is already valid (the library's ...ToJson output,
  // metadata the library validated), minified so the line stays one line.
  JsonOut& Raw(std::string_view json);

  const std::string& str() const { return text_; }

 private:
  void Separate();

  std::string text_;
  bool need_comma_ = false;
};

// `json` (valid JSON) without whitespace outside strings.
std::string MinifyJson(std::string_view json);

// Flags shared by the content-taking commands.
extern const Flag kContentFlag;   // --content TEXT
extern const Flag kFileFlag;      // --file PATH

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

// The value of number flag `flag` (digits only, checked by the parser) as
// an int64, or nullopt when not given. INVALID_ARGUMENT naming `field` when
// it does not fit.
StatusOr<std::optional<int64_t>> NumberFlag(const Args& args,
                                            const Flag& flag,
                                            std::string_view field);

// Writes `document` and a newline to `out`.
Status PrintDocument(const StatusOr<std::string>& document, std::ostream& out);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_RECORD_COMMON_H_
