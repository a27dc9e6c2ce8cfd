// The public writers of ReferenceStore's results (references.h, "JSON
// documents").

#include <string>
#include <string_view>
#include <utility>

#include "ctxkit/references.h"
#include "lib/json/json_copy.h"
#include "lib/json/json_writer.h"
#include "lib/json/record_document.h"
#include "lib/status/status_internal.h"

namespace ctxkit {
namespace {

using internal::BeginRecordDocument;
using internal::EndRecordDocument;
using internal::JsonWriter;
using internal::ToPublic;

absl::Status WriteReference(JsonWriter& w, const Reference& reference,
                            bool include_content) {
  w.BeginObject().Key("id").String(reference.id).Key("conversation_id");
  if (reference.conversation_id.empty()) {
    w.Null();
  } else {
    w.String(reference.conversation_id);
  }
  w.Key("type").String(reference.type).Key("title").String(reference.title);
  if (include_content) {
    w.Key("content").String(reference.content);
  } else {
    w.Key("preview").String(reference.preview);
  }
  w.Key("tokens")
      .Uint(reference.tokens)
      .Key("created_at")
      .Int(reference.created_at);
  if (include_content) {
    w.Key("metadata");
    // Validated as a JSON object when it was stored; copied, not trusted,
    // because a store may hold records another build wrote.
    if (auto s = internal::WriteJsonValue(
            w,
            reference.metadata.empty() ? std::string_view("{}")
                                       : std::string_view(reference.metadata),
            "metadata");
        !s.ok()) {
      return s;
    }
  }
  w.EndObject();
  return w.status();
}

void WriteStats(JsonWriter& w, const ReferenceStats& stats) {
  w.Key("total_references")
      .Uint(stats.total_references)
      .Key("total_tokens")
      .Uint(stats.total_tokens)
      .Key("by_type")
      .BeginObject();
  for (const auto& [type, n] : stats.by_type) w.Key(type).Uint(n);
  w.EndObject();
}

}  // namespace

StatusOr<std::string> ReferenceToJson(const Reference& reference,
                                      bool include_content) {
  JsonWriter w = BeginRecordDocument();
  w.Key("reference");
  if (auto s = WriteReference(w, reference, include_content); !s.ok()) {
    return ToPublic(s);
  }
  return EndRecordDocument(std::move(w));
}

StatusOr<std::string> ReferenceListToJson(const ReferenceList& list,
                                          bool include_content) {
  JsonWriter w = BeginRecordDocument();
  w.Key("references").BeginArray();
  for (const Reference& reference : list.references) {
    if (auto s = WriteReference(w, reference, include_content); !s.ok()) {
      return ToPublic(s);
    }
  }
  w.EndArray().Key("total").Uint(list.references.size());
  w.Key("statistics").BeginObject();
  WriteStats(w, list.stats);
  w.EndObject();
  return EndRecordDocument(std::move(w));
}

StatusOr<std::string> ReferenceStatsToJson(const ReferenceStats& stats) {
  JsonWriter w = BeginRecordDocument();
  WriteStats(w, stats);
  return EndRecordDocument(std::move(w));
}

StatusOr<std::string> ReferenceSearchResultsToJson(
    const ReferenceSearchResults& results) {
  JsonWriter w = BeginRecordDocument();
  w.Key("results").BeginArray();
  for (const ReferenceSearchResult& r : results.results) {
    w.BeginObject()
        .Key("id")
        .String(r.id)
        .Key("type")
        .String(r.type)
        .Key("title")
        .String(r.title)
        .Key("preview")
        .String(r.preview)
        .Key("highlights")
        .BeginArray();
    // Byte offsets become code points, which every JSON reader can count.
    size_t byte = 0;
    size_t chars = 0;
    auto to_chars = [&](size_t target) {
      for (; byte < target && byte < r.preview.size(); ++byte) {
        if ((static_cast<unsigned char>(r.preview[byte]) & 0xC0) != 0x80) {
          ++chars;
        }
      }
      return chars;
    };
    for (const PreviewHighlight& h : r.highlights) {
      const size_t begin = to_chars(h.begin);
      const size_t end = to_chars(h.end);
      w.BeginArray().Uint(begin).Uint(end).EndArray();
    }
    w.EndArray()
        .Key("tokens")
        .Uint(r.tokens)
        .Key("relevance")
        .Double(r.relevance)
        .EndObject();
  }
  w.EndArray()
      .Key("total")
      .Uint(results.results.size())
      .Key("total_matches")
      .Uint(results.total_matches);
  return EndRecordDocument(std::move(w));
}

}  // namespace ctxkit
