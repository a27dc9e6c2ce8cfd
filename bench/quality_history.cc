// History's JSON helpers, for bench/compaction_quality (quality_history.h).

#include "bench/quality_history.h"

#include <simdjson.h>

#include <string>
#include <string_view>

namespace ctxkit::bench {
namespace {

void CollectStrings(simdjson::dom::element e, std::string* out) {
  switch (e.type()) {
    case simdjson::dom::element_type::STRING: {
      std::string_view s;
      if (e.get_string().get(s) == simdjson::SUCCESS) {
        out->append(s);
        out->push_back('\n');
      }
      break;
    }
    case simdjson::dom::element_type::ARRAY: {
      simdjson::dom::array array;
      if (e.get_array().get(array) != simdjson::SUCCESS) break;
      for (simdjson::dom::element child : array) CollectStrings(child, out);
      break;
    }
    case simdjson::dom::element_type::OBJECT: {
      simdjson::dom::object object;
      if (e.get_object().get(object) != simdjson::SUCCESS) break;
      for (simdjson::dom::key_value_pair field : object) {
        CollectStrings(field.value, out);
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

std::string History::MessagesJson() const {
  size_t size = 2;
  for (const std::string& m : messages) size += m.size() + 1;
  std::string out;
  out.reserve(size);
  out.push_back('[');
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += messages[i];
  }
  out.push_back(']');
  return out;
}

bool AppendDecodedStrings(std::string_view json, std::string* out,
                          std::string* error) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto e = parser.parse(json.data(), json.size()).get(doc);
      e != simdjson::SUCCESS) {
    *error = simdjson::error_message(e);
    return false;
  }
  CollectStrings(doc, out);
  return true;
}

}  // namespace ctxkit::bench
