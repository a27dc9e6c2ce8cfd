// StoreInfo as a JSON document (schema_version 1), for the C API and the
// `ctxkit store info --json` command.

#include <utility>

#include "ctxkit/store.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"

namespace ctxkit {

StatusOr<std::string> StoreInfoToJson(const StoreInfo& info) {
  internal::JsonWriter w;
  w.BeginObject();
  w.Key("schema_version").Int(1);
  w.Key("path").String(info.path);
  w.Key("format_version").Uint(info.format_version);
  w.Key("read_only").Bool(info.read_only);
  w.Key("map_size").Uint(info.map_size);
  w.Key("max_map_size").Uint(info.max_map_size);
  w.Key("page_size").Uint(info.page_size);
  w.Key("used_pages").Uint(info.used_pages);
  w.Key("used_bytes").Uint(info.used_pages * info.page_size);
  w.Key("last_transaction_id").Uint(info.last_transaction_id);
  w.Key("max_readers").Uint(info.max_readers);
  w.Key("readers_in_use").Uint(info.readers_in_use);
  w.Key("databases").BeginArray();
  for (const DatabaseInfo& db : info.databases) {
    w.BeginObject();
    w.Key("name").String(db.name);
    w.Key("entries").Uint(db.entries);
    w.Key("pages").Uint(db.pages);
    w.Key("depth").Uint(db.depth);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return internal::ToPublic(std::move(w).Finish());
}

}  // namespace ctxkit
