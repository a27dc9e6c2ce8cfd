// The compact JSON writer of the program's own documents (the library
// writes its records with its own ...ToJson functions; the program wraps
// them in envelopes and writes the few documents that are its own).

#ifndef CTXKIT_PROGRAMS_CTXKIT_HOST_JSON_OUT_H_
#define CTXKIT_PROGRAMS_CTXKIT_HOST_JSON_OUT_H_

#include <cstdint>
#include <string>
#include <string_view>

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

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_HOST_JSON_OUT_H_
