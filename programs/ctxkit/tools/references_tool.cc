// track_references (seed 000): add, get, list, delete and search over the
// library's ReferenceStore (BM25 search). Each answer is the library's
// document for the result (references.h, the bytes the C ABI returns and
// `ctxkit ref` prints) in seed 000's envelope (record_json.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ctxkit/references.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"
#include "programs/ctxkit/tools/arguments.h"
#include "programs/ctxkit/tools/record_json.h"
#include "simdjson.h"

namespace ctxkit::tools {

namespace {

using mcp::ToolOutput;
using mcp::ToolStatusError;
using mcp::ToolValidationError;

constexpr std::string_view kInputSchema = R"({
  "type": "object",
  "properties": {
    "action": {
      "type": "string",
      "enum": ["add", "get", "list", "delete", "search"],
      "description": "What to do."
    },
    "conversation_id": {
      "type": "string", "minLength": 1,
      "description": "add: the conversation the reference belongs to (required). list, search: only this conversation's references."
    },
    "reference_id": {
      "type": "string", "minLength": 1,
      "description": "get, delete: the reference (required)."
    },
    "type": {
      "type": "string", "enum": ["file", "url", "code", "note", "document"],
      "description": "add: the kind of reference (default note)."
    },
    "title": {"type": "string", "minLength": 1, "description": "add: its title (required)."},
    "content": {"type": "string", "minLength": 1, "description": "add: its content (required)."},
    "metadata": {"type": "object", "description": "add: any JSON object stored with it."},
    "search_query": {
      "type": "string", "minLength": 1,
      "description": "search: the words to look for (required)."
    },
    "limit": {
      "type": "integer", "minimum": 1, "maximum": 100, "default": 10,
      "description": "search: at most this many results, best first."
    },
    "include_content": {
      "type": "boolean", "default": false,
      "description": "list: include each reference's content and metadata."
    }
  },
  "required": ["action"],
  "additionalProperties": false
})";

// A reference object as references.h's writers write it.
constexpr std::string_view kReferenceSchema = R"({
  "type": "object",
  "properties": {
    "id": {"type": "string"},
    "conversation_id": {"type": ["string", "null"]},
    "type": {"type": "string", "enum": ["file", "url", "code", "note", "document"]},
    "title": {"type": "string"},
    "content": {"type": "string"},
    "preview": {"type": "string"},
    "tokens": {"type": "integer", "minimum": 0},
    "created_at": {"type": "integer"},
    "metadata": {"type": "object"}
  },
  "required": ["id", "type", "title", "tokens", "created_at"]
})";

std::string OutputSchema() {
  const std::string reference(kReferenceSchema);
  return R"({
  "type": "object",
  "properties": {
    "success": {"type": "boolean"},
    "schema_version": {"type": "integer"},
    "reference": )" +
         reference + R"(,
    "references": {"type": "array", "items": )" +
         reference + R"(},
    "statistics": {
      "type": "object",
      "properties": {
        "total_references": {"type": "integer", "minimum": 0},
        "total_tokens": {"type": "integer", "minimum": 0},
        "by_type": {"type": "object"}
      }
    },
    "results": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string"},
          "type": {"type": "string"},
          "title": {"type": "string"},
          "preview": {"type": "string"},
          "highlights": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "integer", "minimum": 0},
                      "minItems": 2, "maxItems": 2}
          },
          "tokens": {"type": "integer", "minimum": 0},
          "relevance": {"type": "number", "minimum": 0, "maximum": 1}
        },
        "required": ["id", "type", "title", "preview", "highlights", "tokens",
                     "relevance"]
      }
    },
    "total": {"type": "integer", "minimum": 0},
    "total_matches": {"type": "integer", "minimum": 0},
    "deleted": {"type": "boolean"},
    "id": {"type": "string"},
    "message": {"type": "string"},
    "error": {"type": "string"},
    "details": {"type": "array"}
  },
  "required": ["success"]
})";
}

ToolOutput Add(simdjson::dom::object args, mcp::RequestContext& ctx) {
  NewReference reference;
  const auto conversation = StringArg(args, "conversation_id");
  if (!conversation.has_value()) {
    return ToolValidationError("conversation_id", "Required");
  }
  const auto title = StringArg(args, "title");
  if (!title.has_value()) return ToolValidationError("title", "Required");
  const auto content = StringArg(args, "content");
  if (!content.has_value()) return ToolValidationError("content", "Required");
  reference.conversation_id = *conversation;
  reference.title = *title;
  reference.content = *content;
  reference.type = StringArg(args, "type").value_or("note");
  if (auto metadata = Arg(args, "metadata")) {
    reference.metadata = ElementJson(*metadata);
  }
  auto added = ctx.services().references->Add(reference);
  if (!added.ok()) {
    // The only thing Add looks up is the conversation.
    return LibraryError(
        added.status(), "Conversation",
        {"conversation_id", "type", "title", "content", "metadata"});
  }
  // Without the content: it was just given, echoing it back is noise.
  auto document = ReferenceToJson(*added, false);
  if (!document.ok()) return ToolStatusError(document.status(), "Reference");
  return Success(
      program::WithSuccess(*document, "Reference added successfully"));
}

ToolOutput Get(std::string_view id, mcp::RequestContext& ctx) {
  auto reference = ctx.services().references->Get(id);
  if (!reference.ok()) return ToolStatusError(reference.status(), "Reference");
  auto document = ReferenceToJson(*reference, true);
  if (!document.ok()) return ToolStatusError(document.status(), "Reference");
  return Success(program::WithSuccess(*document));
}

ToolOutput List(simdjson::dom::object args, mcp::RequestContext& ctx) {
  ListReferencesOptions options;
  options.conversation_id = StringArg(args, "conversation_id").value_or("");
  options.include_content = BoolArg(args, "include_content").value_or(false);
  auto list = ctx.services().references->List(options);
  if (!list.ok()) {
    return LibraryError(list.status(), "Conversation", {"conversation_id"});
  }
  auto document = ReferenceListToJson(*list, options.include_content);
  if (!document.ok()) return ToolStatusError(document.status(), "Reference");
  return Success(program::WithSuccess(*document));
}

ToolOutput Delete(std::string_view id, mcp::RequestContext& ctx) {
  if (Status deleted = ctx.services().references->Delete(id); !deleted.ok()) {
    return ToolStatusError(deleted, "Reference");
  }
  return Success(program::WithSuccess(program::DeletedReferenceJson(id),
                                      "Reference deleted successfully"));
}

ToolOutput Search(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const auto query = StringArg(args, "search_query");
  if (!query.has_value()) {
    return ToolValidationError("search_query", "Required");
  }
  SearchReferencesOptions options;
  options.query = *query;
  const int64_t limit =
      IntArg(args, "limit").value_or(ReferenceLimits::kDefaultSearchLimit);
  if (limit < 1 || limit > ReferenceLimits::kMaxSearchLimit) {
    return ToolValidationError(
        "limit", "Must be between 1 and " +
                     std::to_string(ReferenceLimits::kMaxSearchLimit));
  }
  options.limit = static_cast<uint32_t>(limit);
  options.conversation_id = StringArg(args, "conversation_id").value_or("");
  auto results = ctx.services().references->Search(options);
  if (!results.ok()) {
    if (results.status().code() == StatusCode::kInvalidArgument &&
        results.status().message().rfind("query", 0) == 0) {
      // The library names its field "query"; the tool's is search_query.
      return ToolValidationError("search_query", results.status().message());
    }
    return LibraryError(results.status(), "Conversation",
                        {"conversation_id", "limit"});
  }
  auto document = ReferenceSearchResultsToJson(*results);
  if (!document.ok()) return ToolStatusError(document.status(), "Reference");
  return Success(program::WithSuccess(*document));
}

ToolOutput Handle(simdjson::dom::object args, mcp::RequestContext& ctx) {
  const std::string_view action = StringArg(args, "action").value_or("");
  if (action == "add") return Add(args, ctx);
  if (action == "list") return List(args, ctx);
  if (action == "search") return Search(args, ctx);
  if (action != "get" && action != "delete") {
    return ToolValidationError(
        "action",
        "Invalid enum value. Expected 'add' | 'get' | 'list' | 'delete' | "
        "'search', received '" +
            std::string(action) + "'");
  }
  const auto id = StringArg(args, "reference_id");
  if (!id.has_value()) return ToolValidationError("reference_id", "Required");
  if (action == "get") return Get(*id, ctx);
  return Delete(*id, ctx);
}

}  // namespace

const mcp::ToolSpec& TrackReferencesTool() {
  static const std::string* const kOutputSchema =
      new std::string(OutputSchema());
  static const mcp::ToolSpec kSpec{
      .name = "track_references",
      .title = "Track references",
      .description =
          "Track and manage reference materials (files, URLs, code snippets, "
          "notes) with token counting. Actions: add (conversation_id, type, "
          "title, content, metadata), get (reference_id), list "
          "(conversation_id optional), delete (reference_id), search "
          "(search_query: BM25 ranking over titles and content; relevance "
          "0..1, 0.7+ on topic, below 0.3 incidental; preview = "
          "best-matching passage, "
          "highlights = [start,end) code points of the query terms in it). "
          "Keeping material here instead of in the chat saves its "
          "tokens until it is needed.",
      .input_schema = kInputSchema,
      .output_schema = *kOutputSchema,
      .handler = &Handle,
      .read_only = false,
      .destructive = true,
      .idempotent = false,
  };
  return kSpec;
}

}  // namespace ctxkit::tools
