// StoreCheckReport as a JSON document (schema_version 1), for the C API and
// `ctxkit store check --json`.

#include <utility>

#include "ctxkit/store_check.h"
#include "lib/json/json_writer.h"
#include "lib/json/utf8.h"

namespace ctxkit {

std::string StoreCheckReportToJson(const StoreCheckReport& report) {
  internal::JsonWriter w;
  w.BeginObject();
  w.Key("schema_version").Int(1);
  w.Key("path").String(internal::ReplaceInvalidUtf8(report.path));
  w.Key("transaction_id").Uint(report.transaction_id);
  w.Key("page_size").Uint(report.page_size);
  w.Key("pages").Uint(report.pages);
  w.Key("used_pages").Uint(report.used_pages);
  w.Key("free_pages").Uint(report.free_pages);
  w.Key("unaccounted_pages").Uint(report.unaccounted_pages);
  w.Key("trees").BeginArray();
  for (const StoreCheckTree& t : report.trees) {
    w.BeginObject();
    w.Key("name").String(internal::ReplaceInvalidUtf8(t.name));
    w.Key("entries").Uint(t.entries);
    w.Key("branch_pages").Uint(t.branch_pages);
    w.Key("leaf_pages").Uint(t.leaf_pages);
    w.Key("overflow_pages").Uint(t.overflow_pages);
    w.Key("depth").Uint(t.depth);
    w.EndObject();
  }
  w.EndArray();
  w.Key("conversations").Uint(report.conversations);
  w.Key("messages").Uint(report.messages);
  w.Key("references").Uint(report.references);
  w.Key("cache_entries").Uint(report.cache_entries);
  w.Key("contexts").Uint(report.contexts);
  w.Key("relationships").Uint(report.relationships);
  w.EndObject();
  return std::move(w).Finish().value();
}

}  // namespace ctxkit
