// MessageCountToJson (message_count.h): the count-messages document.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/message_count.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"

namespace ctxkit {

StatusOr<std::string> MessageCountToJson(
    const MessageCount& count, std::optional<std::string_view> model) {
  internal::JsonWriter w;
  w.BeginObject().Key("schema_version").Int(1).Key("model");
  if (model.has_value()) {
    w.String(*model);
  } else {
    w.Null();
  }
  w.Key("total").Uint(count.total).Key("messages").BeginArray();
  for (size_t n : count.messages) w.Uint(n);
  w.EndArray()
      .Key("system")
      .Uint(count.system)
      .Key("tools")
      .Uint(count.tools)
      .Key("reply_priming")
      .Uint(count.reply_priming)
      .Key("encoding")
      .String(count.encoding)
      .Key("method")
      .String(count.method == CountMethod::kTokenizer ? "tokenizer"
                                                      : "heuristic")
      .Key("exact")
      .Bool(count.exact)
      .EndObject();
  return internal::ToPublic(std::move(w).Finish());
}

}  // namespace ctxkit
