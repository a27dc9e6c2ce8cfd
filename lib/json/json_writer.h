// JsonWriter: the one writer ctxkit uses for every JSON document it emits
// (compaction results, records, statistics, ...).
//
// It streams compact JSON into a single string. Misuse never produces
// malformed output: the first failing call records an error, every later call
// is ignored, and Finish() returns that error instead of the text. So a
// document can be written as one fluent chain and checked once:
//
//   JsonWriter writer;
//   writer.BeginObject().Key("schema_version").Int(1)
//         .Key("name").String(name).EndObject();
//   absl::StatusOr<std::string> json = std::move(writer).Finish();
//
// Errors:
//   INVALID_ARGUMENT  the data cannot be represented: a string or key that is
//                     not valid UTF-8, a NaN or infinite double. The message
//                     names the value's path, e.g.
//                       JSON string at "databases[2].name" is not valid
//                       UTF-8: invalid byte 0xFF at offset 3 (...)
//                     (keys appear in the path as escaped in the output).
//   INTERNAL          the calls do not describe a single JSON value (a value
//                     where an object key is required, Key() outside an
//                     object, EndArray() closing an object, two top-level
//                     values, Finish() with open containers or no value).
//                     These are bugs in the calling ctxkit code.
//
// Output: no whitespace; strings escape '"', '\\', every control character
// U+0000..U+001F (as \b \f \n \r \t where JSON has a short form, otherwise
// \u00XX), U+007F as \u007f and U+2028 / U+2029 as \u2028 / \u2029, so the
// text is also safe to embed in JavaScript. Other characters are copied
// through as UTF-8, or with Options::ascii_only written as \uXXXX escapes
// (characters above U+FFFF as UTF-16 surrogate pairs) so that the output is
// pure ASCII. Hex digits in escapes are lower case.
//
// Thread safety: a JsonWriter is not synchronized; use it from one thread at a
// time. Distinct writers are independent.

#ifndef CTXKIT_LIB_JSON_JSON_WRITER_H_
#define CTXKIT_LIB_JSON_JSON_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ctxkit::internal {

class JsonWriter {
 public:
  struct Options {
    // Write every non-ASCII character as a \u escape, for consumers that
    // mishandle raw UTF-8. Output grows by up to 3x for non-ASCII text.
    bool ascii_only = false;
  };

  // Two constructors rather than a defaulted argument: Clang cannot use
  // Options' member initializers inside the class that nests it.
  JsonWriter();
  explicit JsonWriter(Options options);

  // Movable so that builders can return writers; not copyable because a copy
  // of a half-written document is never what was meant.
  JsonWriter(JsonWriter&&) noexcept = default;
  JsonWriter& operator=(JsonWriter&&) noexcept = default;
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  ~JsonWriter() = default;

  // Containers. Each Begin must be matched by the End of the same kind.
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();

  // Writes the key of the next member of the innermost object; the next call
  // must write that member's value. `key` must be valid UTF-8; it is copied.
  JsonWriter& Key(std::string_view key);

  // Values: in an array, the next element; in an object, the value of the
  // preceding Key(); outside any container, the document itself (exactly
  // one). String() requires valid UTF-8 (NUL characters are fine) and copies
  // its argument.
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Uint(uint64_t value);
  // The shortest text that parses back to exactly `value`; integral values
  // keep a ".0" (and -0.0 its sign) so readers still see a floating-point
  // number. NaN and infinities are INVALID_ARGUMENT.
  JsonWriter& Double(double value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // Copies `json` as the next value. It must be exactly one JSON value that
  // ctxkit itself wrote (e.g. a message this writer's rules minified
  // earlier): it is not validated, which is why this exists — re-parsing
  // every message of a 10,000-message history to copy it costs as much as
  // compacting it. Empty `json` is INTERNAL.
  JsonWriter& TrustedValue(std::string_view json);

  // OK, or the first error; later calls do not change it. The reference is
  // valid until the writer is modified, moved from or destroyed.
  const absl::Status& status() const { return status_; }

  // The document, or the first error. Also fails (INTERNAL) if a container
  // is still open or nothing was written. Consumes the writer.
  absl::StatusOr<std::string> Finish() &&;

 private:
  struct Frame {
    bool is_object;
    // An object's key has been written and its value has not begun.
    bool key_pending = false;
    // Members or elements begun so far; doubles as "needs a comma".
    size_t count = 0;
    // Where the last key sits in out_, escaped and without quotes: kept as
    // offsets so that naming the path in an error costs nothing until an
    // error actually happens.
    size_t key_begin = 0;
    size_t key_end = 0;
  };

  // Whether a value of `kind` may start here; if not, records the INTERNAL
  // error. Has no other effect, so that a value can still be rejected
  // (invalid UTF-8, NaN) before anything is written.
  bool ValueAllowed(const char* kind);
  // Writes the separator before an allowed value and accounts for it.
  void StartValue();
  template <typename Integer>
  JsonWriter& WriteInteger(Integer value);
  void BeginContainer(bool is_object);
  void EndContainer(bool is_object);
  void WriteEscaped(std::string_view text);
  void WriteCodeUnitEscape(uint32_t unit);
  void Reserve(size_t extra);

  // The path ("a[2].b") of the innermost container, and with
  // `include_current` also of the value being written in it.
  std::string Path(bool include_current) const;
  // Path() quoted for a message, or "the top level" when empty.
  std::string DescribePath(bool include_current) const;
  void Fail(absl::Status status);
  void Misuse(const std::string& what);

  Options options_;
  std::string out_;
  std::vector<Frame> stack_;
  bool wrote_root_ = false;
  absl::Status status_;
};

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_JSON_JSON_WRITER_H_
