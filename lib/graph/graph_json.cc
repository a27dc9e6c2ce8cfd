// The writers of graph_json.h.

#include "lib/graph/graph_json.h"

#include <utility>

#include "lib/json/json_copy.h"

namespace ctxkit::graph {
namespace {

void Strings(JsonWriter& w, const std::vector<std::string>& values) {
  w.BeginArray();
  for (const std::string& v : values) w.String(v);
  w.EndArray();
}

// A time the record leaves unset (0) is null.
void TimeOrNull(JsonWriter& w, int64_t ms) {
  if (ms == 0) {
    w.Null();
  } else {
    w.Int(ms);
  }
}

void CodeBlocks(JsonWriter& w, const std::vector<CodeBlock>& blocks) {
  w.BeginArray();
  for (const CodeBlock& b : blocks) {
    w.BeginObject()
        .Key("language")
        .String(b.language)
        .Key("code")
        .String(b.code)
        .Key("importance")
        .Double(b.importance)
        .EndObject();
  }
  w.EndArray();
}

// Stored JSON (edge metadata) as a value; text the graph wrote is always
// one object, so the null stands only for a record damaged on disk.
void StoredObject(JsonWriter& w, std::string_view json) {
  if (json.empty() || !internal::WriteJsonValue(w, json, "metadata").ok()) {
    w.Null();
  }
}

void WriteImportance(JsonWriter& w, Importance importance) {
  w.Key("importance")
      .Double(ImportanceValue(importance))
      .Key("importanceLevel")
      .String(ImportanceName(importance));
}

template <typename Fields>
absl::StatusOr<std::string> Document(Fields fields) {
  return SuccessDocument(std::move(fields));
}

}  // namespace

void WriteAddResultFields(JsonWriter& w, const AddGraphMessagesResult& r) {
  w.Key("contextId")
      .String(r.context_id)
      .Key("conversationId")
      .String(r.conversation_id)
      .Key("created")
      .Bool(r.created);
  if (!r.messages.empty()) {
    const GraphMessageAdded& last = r.messages.back();
    w.Key("messageId").String(last.message_id).Key("seq").Uint(last.seq);
    w.Key("tokens").Uint(last.tokens);
    WriteImportance(w, last.importance);
    w.Key("tags");
    Strings(w, last.tags);
  }
  w.Key("messages").BeginArray();
  for (const GraphMessageAdded& m : r.messages) {
    w.BeginObject()
        .Key("messageId")
        .String(m.message_id)
        .Key("seq")
        .Uint(m.seq)
        .Key("tokens")
        .Uint(m.tokens);
    WriteImportance(w, m.importance);
    w.Key("tags");
    Strings(w, m.tags);
    w.EndObject();
  }
  w.EndArray().Key("summarized").Bool(r.summarized);
  if (r.summarized) w.Key("summaryVersion").Uint(r.summary_version);
  w.Key("linked");
  Strings(w, r.linked);
  w.Key("archived");
  Strings(w, r.cleaned);
  // Why the automatic summary has no vector (the embedder failed); only
  // when it failed.
  if (!r.embedding_error.empty()) {
    w.Key("embeddingError").String(r.embedding_error);
  }
}

absl::StatusOr<std::string> AddResultJson(const AddGraphMessagesResult& r) {
  return Document([&](JsonWriter& w) {
    w.Key("message").String("Message added to context: " + r.context_id);
    WriteAddResultFields(w, r);
  });
}

void WriteSummaryFields(JsonWriter& w, const ContextSummary& s) {
  w.Key("contextId")
      .String(s.context_id)
      .Key("summary")
      .String(s.summary)
      .Key("codeBlocks");
  CodeBlocks(w, s.code_blocks);
  w.Key("keyInsights");
  Strings(w, s.key_insights);
  w.Key("importanceScore")
      .Double(s.importance_score)
      .Key("messageCount")
      .Uint(s.message_count)
      .Key("version")
      .Uint(s.version)
      .Key("createdAt")
      .Int(s.created_at)
      .Key("lastUpdated")
      .Int(s.last_updated)
      .Key("tokensUsed")
      .Uint(s.tokens_used)
      .Key("tokenLimit")
      .Uint(s.token_limit)
      .Key("summarizer")
      .String(s.summarizer)
      .Key("relatedContexts");
  Strings(w, s.related_contexts);
  if (!s.embedding_error.empty()) {
    w.Key("embeddingError").String(s.embedding_error);
  }
}

void WriteSummary(JsonWriter& w, const ContextSummary& s) {
  w.BeginObject();
  WriteSummaryFields(w, s);
  w.EndObject();
}

absl::StatusOr<std::string> SummaryJson(const ContextSummary& s) {
  return Document([&](JsonWriter& w) { WriteSummaryFields(w, s); });
}

void WriteMessages(JsonWriter& w, const std::vector<GraphMessageView>& m) {
  w.BeginArray();
  for (const GraphMessageView& v : m) {
    w.BeginObject()
        .Key("role")
        .String(MessageRoleName(v.role))
        .Key("content")
        .String(v.content)
        .Key("timestamp")
        .Int(v.timestamp);
    WriteImportance(w, v.importance);
    w.Key("tags");
    Strings(w, v.tags);
    w.Key("seq").Uint(v.seq).Key("tokens").Uint(v.tokens).EndObject();
  }
  w.EndArray();
}

void WriteDetailFields(JsonWriter& w, const ContextDetail& d,
                       const ContextHierarchy* hierarchy) {
  w.Key("contextId").String(d.context.context_id).Key("messages");
  WriteMessages(w, d.messages);
  w.Key("hasSummary").Bool(d.summary.has_value()).Key("summary");
  if (d.summary.has_value()) {
    WriteSummary(w, *d.summary);
  } else {
    w.Null();
  }
  w.Key("messageCount")
      .Uint(d.context.message_count)
      .Key("totalTokens")
      .Uint(d.context.total_tokens)
      .Key("parentContextId");
  if (hierarchy != nullptr && hierarchy->parent.has_value()) {
    w.String(*hierarchy->parent);
  } else {
    w.Null();
  }
  w.Key("childContextIds");
  Strings(w, hierarchy != nullptr ? hierarchy->children
                                  : std::vector<std::string>{});
  w.Key("conversationId")
      .String(d.context.conversation_id)
      .Key("createdAt")
      .Int(d.context.created_at)
      .Key("lastActivityAt")
      .Int(d.context.last_activity_at)
      .Key("archived")
      .Bool(d.context.archived)
      .Key("messagesSinceSummary")
      .Uint(d.messages_since_summary)
      .Key("tokensSinceSummary")
      .Uint(d.tokens_since_summary)
      .Key("highSinceSummary")
      .Uint(d.high_since_summary);
  if (!d.summary_history.empty()) {
    w.Key("summaryHistory").BeginArray();
    for (const ContextSummary& s : d.summary_history) WriteSummary(w, s);
    w.EndArray();
  }
}

absl::StatusOr<std::string> DetailJson(const ContextDetail& d,
                                       const ContextHierarchy* hierarchy) {
  return Document([&](JsonWriter& w) { WriteDetailFields(w, d, hierarchy); });
}

void WriteRelationshipFields(JsonWriter& w, const Relationship& r) {
  w.Key("sourceContextId")
      .String(r.source)
      .Key("targetContextId")
      .String(r.target)
      .Key("relationshipType")
      .String(r.type)
      .Key("weight")
      .Double(r.weight)
      .Key("metadata");
  StoredObject(w, r.metadata);
  w.Key("createdAt")
      .Int(r.created_at)
      .Key("updatedAt")
      .Int(r.updated_at)
      .Key("validAt")
      .Int(r.valid_at)
      .Key("invalidAt");
  TimeOrNull(w, r.invalid_at);
  w.Key("expiredAt");
  TimeOrNull(w, r.expired_at);
}

void WriteRelationship(JsonWriter& w, const Relationship& r) {
  w.BeginObject();
  WriteRelationshipFields(w, r);
  w.EndObject();
}

absl::StatusOr<std::string> RelationshipJson(const Relationship& r) {
  return Document([&](JsonWriter& w) { WriteRelationshipFields(w, r); });
}

void WriteUpsertFields(JsonWriter& w, const RelationshipUpsert& u) {
  WriteRelationshipFields(w, u.relationship);
  w.Key("created").Bool(u.created);
}

absl::StatusOr<std::string> UpsertJson(const RelationshipUpsert& u) {
  return Document([&](JsonWriter& w) { WriteUpsertFields(w, u); });
}

namespace {

const char* DirectionName(EdgeDirection d) {
  switch (d) {
    case EdgeDirection::kOutgoing:
      return "outgoing";
    case EdgeDirection::kIncoming:
      return "incoming";
    case EdgeDirection::kBoth:
      break;
  }
  return "both";
}

}  // namespace

void WriteRelatedFields(JsonWriter& w, const RelatedResult& r,
                        bool with_edges) {
  if (with_edges) {
    w.Key("edges").BeginArray();
    for (const RelatedEdge& e : r.edges) {
      const Relationship& rel = e.relationship;
      w.BeginObject()
          .Key("contextId")
          .String(e.context_id)
          .Key("direction")
          .String(DirectionName(e.direction))
          .Key("type")
          .String(rel.type)
          .Key("weight")
          .Double(rel.weight)
          .Key("createdAt")
          .Int(rel.created_at)
          .Key("updatedAt")
          .Int(rel.updated_at)
          .Key("validAt")
          .Int(rel.valid_at)
          .Key("invalidAt");
      TimeOrNull(w, rel.invalid_at);
      w.Key("expiredAt");
      TimeOrNull(w, rel.expired_at);
      w.Key("metadata");
      StoredObject(w, rel.metadata);
      w.EndObject();
    }
    w.EndArray();
  } else {
    w.Key("contextIds");
    Strings(w, r.context_ids);
  }
  w.Key("total").Uint(r.total);
}

absl::StatusOr<std::string> RelatedJson(const RelatedResult& r,
                                        bool with_edges) {
  return Document([&](JsonWriter& w) { WriteRelatedFields(w, r, with_edges); });
}

void WritePathFields(JsonWriter& w, const PathResult& p) {
  w.Key("found").Bool(p.found).Key("path");
  Strings(w, p.path);
  w.Key("edges").BeginArray();
  for (const Relationship& e : p.edges) WriteRelationship(w, e);
  w.EndArray().Key("totalWeight").Double(p.total_weight).Key("reason");
  if (p.reason.empty()) {
    w.Null();
  } else {
    w.String(p.reason);
  }
}

absl::StatusOr<std::string> PathJson(const PathResult& p) {
  return Document([&](JsonWriter& w) { WritePathFields(w, p); });
}

void WriteSimilarContexts(JsonWriter& w,
                          const std::vector<SimilarContext>& contexts) {
  w.BeginArray();
  for (const SimilarContext& c : contexts) {
    w.BeginObject()
        .Key("contextId")
        .String(c.context_id)
        .Key("similarity")
        .Double(c.similarity)
        .Key("score")
        .Double(c.score)
        .Key("method")
        .String(c.method)
        .Key("signals")
        .BeginObject()
        .Key("bm25")
        .Double(c.signals.bm25)
        .Key("tfidf")
        .Double(c.signals.tfidf)
        .EndObject()
        .EndObject();
  }
  w.EndArray();
}

void WriteSimilarFields(JsonWriter& w, const SimilarResult& r) {
  w.Key("method").String(r.method);
  // Why the vector or hybrid method asked for fell back to keyword.
  if (!r.fallback_reason.empty()) {
    w.Key("fallbackReason").String(r.fallback_reason);
  }
  w.Key("contexts");
  WriteSimilarContexts(w, r.contexts);
}

absl::StatusOr<std::string> SimilarJson(const SimilarResult& r) {
  return Document([&](JsonWriter& w) { WriteSimilarFields(w, r); });
}

void WriteCleanupFields(JsonWriter& w, const CleanupResult& r) {
  w.Key("cleanedContexts");
  Strings(w, r.cleaned_contexts);
  w.Key("kept").BeginArray();
  for (const KeptContext& k : r.kept) {
    w.BeginObject().Key("contextId").String(k.context_id).Key("reasons");
    Strings(w, k.reasons);
    w.EndObject();
  }
  w.EndArray();
}

absl::StatusOr<std::string> CleanupJson(const CleanupResult& r) {
  return Document([&](JsonWriter& w) { WriteCleanupFields(w, r); });
}

void WriteHierarchicalSummary(JsonWriter& w, const HierarchicalSummary& s) {
  w.BeginObject()
      .Key("parentContextId")
      .String(s.parent_context_id)
      .Key("childContextIds");
  Strings(w, s.child_context_ids);
  w.Key("summary")
      .String(s.summary)
      .Key("lastUpdated")
      .Int(s.last_updated)
      .Key("version")
      .Uint(s.version)
      .Key("hierarchyLevel")
      .Int(s.hierarchy_level)
      .Key("codeBlocks");
  CodeBlocks(w, s.code_blocks);
  w.Key("keyInsights");
  Strings(w, s.key_insights);
  w.Key("importanceScore")
      .Double(s.importance_score)
      .Key("messageCount")
      .Uint(s.message_count)
      .EndObject();
}

void WriteHierarchyFields(JsonWriter& w, const ContextHierarchy& h) {
  w.Key("contextId").String(h.context_id).Key("parent");
  if (h.parent.has_value()) {
    w.String(*h.parent);
  } else {
    w.Null();
  }
  w.Key("children");
  Strings(w, h.children);
  w.Key("ancestors");
  Strings(w, h.ancestors);
  w.Key("depth").Int(h.depth).Key("hierarchicalSummary");
  if (h.hierarchical_summary.has_value()) {
    WriteHierarchicalSummary(w, *h.hierarchical_summary);
  } else {
    w.Null();
  }
}

absl::StatusOr<std::string> HierarchyJson(const ContextHierarchy& h) {
  return Document([&](JsonWriter& w) { WriteHierarchyFields(w, h); });
}

void WriteMetaSummary(JsonWriter& w, const MetaSummary& m) {
  w.BeginObject().Key("id").String(m.id).Key("summary").String(m.summary);
  w.Key("contextIds");
  Strings(w, m.context_ids);
  w.Key("createdAt")
      .Int(m.created_at)
      .Key("updatedAt")
      .Int(m.updated_at)
      .Key("version")
      .Uint(m.version)
      .Key("hierarchyLevel")
      .Int(m.hierarchy_level)
      .Key("sharedCodeBlocks");
  CodeBlocks(w, m.shared_code_blocks);
  w.EndObject();
}

absl::StatusOr<std::string> MetaSummaryJson(const MetaSummary& m) {
  return Document([&](JsonWriter& w) {
    w.Key("metaSummary");
    WriteMetaSummary(w, m);
  });
}

namespace {

void Cursor(JsonWriter& w, const std::string& cursor) {
  w.Key("nextCursor");
  if (cursor.empty()) {
    w.Null();
  } else {
    w.String(cursor);
  }
}

}  // namespace

absl::StatusOr<std::string> IdPageJson(const IdPage& page) {
  return Document([&](JsonWriter& w) {
    w.Key("ids");
    Strings(w, page.ids);
    Cursor(w, page.next_cursor);
  });
}

void WriteContextInfo(JsonWriter& w, const ContextInfo& c) {
  w.BeginObject()
      .Key("contextId")
      .String(c.context_id)
      .Key("conversationId")
      .String(c.conversation_id)
      .Key("createdAt")
      .Int(c.created_at)
      .Key("lastActivityAt")
      .Int(c.last_activity_at)
      .Key("messageCount")
      .Uint(c.message_count)
      .Key("totalTokens")
      .Uint(c.total_tokens)
      .Key("archived")
      .Bool(c.archived)
      .EndObject();
}

absl::StatusOr<std::string> ContextPageJson(const ContextPage& page) {
  return Document([&](JsonWriter& w) {
    w.Key("contexts").BeginArray();
    for (const ContextInfo& c : page.contexts) WriteContextInfo(w, c);
    w.EndArray();
    Cursor(w, page.next_cursor);
  });
}

absl::StatusOr<std::string> VerifyJson(const GraphVerifyReport& r) {
  return Document([&](JsonWriter& w) {
    w.Key("ok")
        .Bool(r.ok)
        .Key("contexts")
        .Uint(r.contexts)
        .Key("messages")
        .Uint(r.messages)
        .Key("edges")
        .Uint(r.edges)
        .Key("problems");
    Strings(w, r.problems);
  });
}

}  // namespace ctxkit::graph
