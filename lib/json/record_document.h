// The frame of the stores' public JSON documents (the ...ToJson functions of
// conversations.h, references.h and cache.h): one object that opens with
// "schema_version": 1, so that a reader can tell a later format apart.
//
// Thread safety: as JsonWriter's.

#ifndef CTXKIT_LIB_JSON_RECORD_DOCUMENT_H_
#define CTXKIT_LIB_JSON_RECORD_DOCUMENT_H_

#include <string>
#include <utility>

#include "ctxkit/status.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"

namespace ctxkit::internal {

// A writer with the document's object begun and its schema_version written.
inline JsonWriter BeginRecordDocument() {
  JsonWriter writer;
  writer.BeginObject().Key("schema_version").Int(1);
  return writer;
}

// Ends the object BeginRecordDocument() began: the document, or the writer's
// first error.
inline StatusOr<std::string> EndRecordDocument(JsonWriter writer) {
  writer.EndObject();
  return ToPublic(std::move(writer).Finish());
}

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_JSON_RECORD_DOCUMENT_H_
