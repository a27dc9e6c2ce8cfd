#include "lib/json/json_copy.h"

#include "absl/status/statusor.h"
#include "lib/json/json_reader.h"
#include "simdjson.h"

namespace ctxkit::internal {

void Replay(JsonWriter& writer, simdjson::dom::element value) {
  using Type = simdjson::dom::element_type;
  switch (value.type()) {
    case Type::OBJECT: {
      // Named locals: iterating the temporaries directly draws GCC 12's
      // false -Wdangling-pointer at -O2.
      const simdjson::dom::object object = value.get_object().value_unsafe();
      writer.BeginObject();
      for (auto field : object) {
        writer.Key(field.key);
        Replay(writer, field.value);
      }
      writer.EndObject();
      return;
    }
    case Type::ARRAY: {
      const simdjson::dom::array array = value.get_array().value_unsafe();
      writer.BeginArray();
      for (simdjson::dom::element item : array) Replay(writer, item);
      writer.EndArray();
      return;
    }
    case Type::STRING:
      writer.String(value.get_string().value_unsafe());
      return;
    case Type::INT64:
      writer.Int(value.get_int64().value_unsafe());
      return;
    case Type::UINT64:
      writer.Uint(value.get_uint64().value_unsafe());
      return;
    case Type::DOUBLE:
      writer.Double(value.get_double().value_unsafe());
      return;
    case Type::BOOL:
      writer.Bool(value.get_bool().value_unsafe());
      return;
    case Type::NULL_VALUE:
      writer.Null();
      return;
  }
}

absl::Status WriteJsonValue(JsonWriter& writer, std::string_view json_text,
                            std::string_view what) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      ParseJson(parser, json_text, what);
  if (!root.ok()) return root.status();
  Replay(writer, *root);
  return writer.status();
}

}  // namespace ctxkit::internal
