// Copying stored JSON text (a record's metadata, a message's tool calls)
// into a document being written, as a value rather than as a string.

#ifndef CTXKIT_LIB_JSON_JSON_COPY_H_
#define CTXKIT_LIB_JSON_JSON_COPY_H_

#include <string_view>

#include "absl/status/status.h"
#include "lib/json/json_writer.h"
#include "simdjson.h"

namespace ctxkit::internal {

// Writes `value`, an element of a document already parsed, to `writer` as
// the next value: members in their order, duplicates kept, numbers as in
// WriteJsonValue(). For callers that hold the DOM anyway, such as those that
// rewrite one part of it and replay the rest. A failure (a string that is
// not valid UTF-8) is recorded in the writer, as for any of its calls. Reads
// `value` during the call only.
void Replay(JsonWriter& writer, simdjson::dom::element value);

// Parses `json_text` (one JSON value) and writes it to `writer` as the next
// value, through the writer's own calls, so the output keeps the writer's
// guarantees (escaping, ascii_only) whatever the stored text looked like.
// Numbers keep their type: integers stay integers, others become doubles
// written in shortest form. INVALID_ARGUMENT naming `what` when the text is
// not one valid JSON value; the writer is then unchanged. Not retained.
absl::Status WriteJsonValue(JsonWriter& writer, std::string_view json_text,
                            std::string_view what);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_JSON_JSON_COPY_H_
