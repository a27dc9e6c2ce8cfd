// ConversationStore over the Store: the Impl that runs each operation in
// one transaction, and the public methods that convert its statuses. The
// records are in conversation_records.h, the statistics in
// conversation_totals.h, the checks of callers' input in
// conversation_checks.h.

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "ctxkit/conversations.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "lib/base/absl_string_view.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/base/ids.h"
#include "lib/base/key_codec.h"
#include "lib/cache/delete_hook.h"
#include "lib/conversations/conversation_checks.h"
#include "lib/conversations/conversation_records.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/conversations/conversation_totals.h"
#include "lib/graph/delete_hook.h"
#include "lib/json/json_reader.h"
#include "lib/references/delete_hook.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/conversation_hook.h"
#include "lib/store/store_internal.h"
#include "lib/tokenizer/message_counter.h"
#include "lib/tokenizer/tokenizer_internal.h"
#include "simdjson.h"

namespace ctxkit {

// ---- ConversationStore::Impl ----

struct ConversationStore::Impl {
  Store* store = nullptr;
  ConversationOptions options;
  Database conversations;
  Database messages;
  Database message_ids;
  Database by_created;
  Database stats;
  Database compacted_views;  // may be invalid: see CompactedViewContext
  std::vector<std::unique_ptr<internal::ConversationDeleteHook>> hooks;

  static absl::StatusOr<std::unique_ptr<ConversationStore>> Open(
      Store& store, ConversationOptions options,
      std::vector<std::unique_ptr<internal::ConversationDeleteHook>> hooks) {
    auto impl = std::make_unique<Impl>();
    impl->store = &store;
    impl->options = std::move(options);
    impl->hooks = std::move(hooks);
    const std::pair<Database*, const char*> dbs[] = {
        {&impl->conversations, "conversations"},
        {&impl->messages, "conversations.messages"},
        {&impl->message_ids, "conversations.message_ids"},
        {&impl->by_created, "conversations.by_created"},
        {&impl->stats, "conversations.stats"},
    };
    for (const auto& [db, name] : dbs) {
      absl::StatusOr<Database> opened =
          internal::StoreOpenDatabase(store, name);
      CTXKIT_RETURN_IF_ERROR(opened.status());
      *db = *opened;
    }
    // Added after the others: a read-only store written before compacted
    // views existed lacks it and has no views (a writable open creates it).
    absl::StatusOr<Database> views =
        internal::StoreOpenDatabase(store, "conversations.compacted_views");
    if (views.ok()) {
      impl->compacted_views = *views;
    } else if (views.status().code() != absl::StatusCode::kNotFound) {
      return views.status();
    }
    return std::unique_ptr<ConversationStore>(
        new ConversationStore(std::move(impl)));
  }

  int64_t Now() const { return internal::NowMillis(options.clock); }

  // Reads and decodes conversation `id` in `txn`; NOT_FOUND naming it.
  absl::Status ReadConversation(const Transaction& txn, std::string_view id,
                                Conversation* c, uint64_t* next_seq) const {
    absl::StatusOr<std::string_view> v =
        internal::TxnGet(txn, conversations, id);
    if (!v.ok()) {
      if (v.status().code() == absl::StatusCode::kNotFound) {
        return internal::ConversationNotFound(id);
      }
      return v.status();
    }
    return internal::DecodeConversation(id, *v, c, next_seq);
  }

  absl::StatusOr<std::string> ModelOf(std::string_view id) const {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*store);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    Conversation c;
    uint64_t next_seq = 0;
    CTXKIT_RETURN_IF_ERROR(ReadConversation(*txn, id, &c, &next_seq));
    return c.model;
  }

  absl::Status Update(
      const std::function<absl::Status(WriteTransaction&)>& fn) {
    return internal::StoreUpdate(*store, fn);
  }

  // Calls `fn(key, view)` for each message of conversation `id`, in order.
  template <typename Fn>
  absl::Status ForEachMessage(const Transaction& txn, std::string_view id,
                              Fn&& fn) const {
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, messages);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    for (cursor->Seek(id);
         cursor->Valid() && cursor->key().substr(0, internal::kIdSize) == id;
         cursor->Next()) {
      CTXKIT_ASSIGN_OR_RETURN(
          internal::MessageView view,
          internal::DecodeMessage(cursor->key(), cursor->value()));
      CTXKIT_RETURN_IF_ERROR(fn(cursor->key(), view));
    }
    return internal::CursorStatus(*cursor);
  }

  // Sets the preview fields of `c` from its newest remaining message.
  absl::Status RefreshLastMessage(const Transaction& txn, Conversation* c,
                                  uint64_t next_seq) const {
    c->last_message.clear();
    c->last_message_at = 0;
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, messages);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    // `next_seq` is the last seq handed out: seek just past it.
    cursor->Seek(internal::MessageKey(c->id, next_seq + 1));
    if (cursor->Valid()) {
      cursor->Prev();
    } else {
      cursor->SeekToLast();
    }
    if (cursor->Valid() && cursor->key().size() == internal::kMessageKeySize &&
        cursor->key().substr(0, internal::kIdSize) == c->id) {
      CTXKIT_ASSIGN_OR_RETURN(
          internal::MessageView view,
          internal::DecodeMessage(cursor->key(), cursor->value()));
      CTXKIT_RETURN_IF_ERROR(internal::CheckMessageText(cursor->key(), view));
      c->last_message = internal::Preview(view.content);
      c->last_message_at = view.created_at;
    }
    return internal::CursorStatus(*cursor);
  }

  // A new conversation, checked and given its id and times, not yet
  // written.
  absl::StatusOr<Conversation> PrepareCreate(
      const NewConversation& conversation) const {
    CTXKIT_RETURN_IF_ERROR(internal::CheckTitle(conversation.title));
    CTXKIT_RETURN_IF_ERROR(internal::CheckText(
        "model", conversation.model, ConversationLimits::kMaxModelBytes));
    CTXKIT_RETURN_IF_ERROR(internal::CheckMetadata(conversation.metadata));
    Conversation c;
    c.id = internal::NewUuid(options.random);
    c.title = conversation.title;
    c.model = conversation.model;
    c.metadata = conversation.metadata;
    c.created_at = c.updated_at = Now();
    return c;
  }

  // Writes a conversation from PrepareCreate in `txn`.
  absl::Status WriteCreated(WriteTransaction& txn,
                            const Conversation& c) const {
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, conversations, c.id, internal::EncodeConversation(c, 0)));
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, by_created, internal::CreatedKey(c.created_at, c.id), {}));
    internal::StatsDelta delta;
    delta.AddConversation(c.model, 1);
    return delta.Apply(txn, stats);
  }

  absl::StatusOr<AddMessagesResult> Add(std::string_view conversation_id,
                                        const NewMessage* batch, size_t count,
                                        bool single) {
    CTXKIT_ASSIGN_OR_RETURN(
        const std::string id,
        internal::NormalizeId("conversation_id", conversation_id));
    CTXKIT_ASSIGN_OR_RETURN(const std::string model, ModelOf(id));
    CTXKIT_ASSIGN_OR_RETURN(internal::PreparedMessages prepared,
                            Prepare(model, batch, count, single));
    AddMessagesResult result;
    CTXKIT_RETURN_IF_ERROR(Update([&](WriteTransaction& txn) -> absl::Status {
      CTXKIT_ASSIGN_OR_RETURN(result, Append(txn, id, prepared));
      return absl::OkStatus();
    }));
    return result;
  }

  // Checks, counts (with `model`'s tokenizer) and encodes a batch: the work
  // that needs no transaction, done before the write begins.
  absl::StatusOr<internal::PreparedMessages> Prepare(std::string_view model,
                                                     const NewMessage* batch,
                                                     size_t count,
                                                     bool single) const {
    if (count == 0 || count > ConversationLimits::kMaxBatchMessages) {
      return absl::InvalidArgumentError(
          absl::StrFormat("messages holds %d messages; it must hold 1 to %d",
                          count, ConversationLimits::kMaxBatchMessages));
    }
    size_t total_bytes = 0;
    for (size_t i = 0; i < count; ++i) total_bytes += batch[i].content.size();
    if (total_bytes > ConversationLimits::kMaxBatchBytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("messages hold %d bytes of content; the limit is %d",
                          total_bytes, ConversationLimits::kMaxBatchBytes));
    }
    CTXKIT_ASSIGN_OR_RETURN(internal::ModelCounter counter,
                            internal::ModelCounter::For(model));
    simdjson::dom::parser parser;
    internal::PreparedMessages prepared;
    prepared.model = std::string(model);
    prepared.now = Now();
    prepared.messages.resize(count);
    prepared.values.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const NewMessage& m = batch[i];
      const std::string prefix =
          single ? std::string() : absl::StrFormat("messages[%d]", i);
      CTXKIT_ASSIGN_OR_RETURN(
          uint64_t tokens, internal::CheckAndCount(m, prefix, counter, parser));
      Message& out = prepared.messages[i];
      // Time-ordered: message_ids grows at its end, so a batch of 1,000
      // writes a few index pages, not 1,000 random ones.
      out.id = internal::NewTimeOrderedUuid(prepared.now, options.random);
      out.role = m.role;
      out.content = m.content;
      out.name = m.name;
      out.tool_calls = m.tool_calls;
      out.tool_call_id = m.tool_call_id;
      out.tokens = tokens;
      out.is_compressed = m.is_compressed;
      out.created_at = prepared.now;
      prepared.values[i] =
          internal::EncodeMessage(out.id, m, tokens, prepared.now);
    }
    prepared.preview = internal::Preview(batch[count - 1].content);
    return prepared;
  }

  // Appends a prepared batch to conversation `id` (normalized) in `txn`.
  // ABORTED when the conversation's model is no longer the one the batch
  // was counted with. Leaves `prepared` intact, so that a retried
  // transaction can append it again.
  absl::StatusOr<AddMessagesResult> Append(
      WriteTransaction& txn, const std::string& id,
      const internal::PreparedMessages& prepared) const {
    Conversation c;
    uint64_t next_seq = 0;
    CTXKIT_RETURN_IF_ERROR(ReadConversation(txn, id, &c, &next_seq));
    if (c.model != prepared.model) {
      return absl::AbortedError(absl::StrFormat(
          "conversation %s now uses model '%s'; its messages were counted for "
          "'%s': count them again",
          id, c.model, prepared.model));
    }
    AddMessagesResult result;
    result.messages = prepared.messages;
    internal::StatsDelta delta;
    std::string key = internal::MessageKey(id, 0);
    for (size_t i = 0; i < result.messages.size(); ++i) {
      Message& out = result.messages[i];
      out.conversation_id = id;
      out.seq = ++next_seq;
      key.resize(internal::kIdSize);
      internal::AppendBigEndian64(&key, out.seq);
      CTXKIT_RETURN_IF_ERROR(
          internal::TxnPut(txn, messages, key, prepared.values[i]));
      CTXKIT_RETURN_IF_ERROR(internal::TxnPut(txn, message_ids, out.id, key));
      ++c.message_count;
      internal::RoleTokens(c, out.role) += out.tokens;
      if (out.is_compressed) {
        ++c.compressed_count;
        c.compressed_tokens += out.tokens;
      }
      delta.AddMessage(c.model, out.role, out.tokens, out.is_compressed,
                       prepared.now, 1);
    }
    c.total_tokens =
        c.user_tokens + c.assistant_tokens + c.system_tokens + c.tool_tokens;
    c.last_message = prepared.preview;
    c.last_message_at = prepared.now;
    c.updated_at = prepared.now;
    CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
        txn, conversations, id, internal::EncodeConversation(c, next_seq)));
    CTXKIT_RETURN_IF_ERROR(delta.Apply(txn, stats));
    result.conversation = std::move(c);
    return result;
  }

  absl::StatusOr<ConversationDetail> Get(std::string_view raw_id,
                                         bool include_messages) const {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("id", raw_id));
    ConversationDetail detail;
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*store);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    uint64_t next_seq = 0;
    CTXKIT_RETURN_IF_ERROR(
        ReadConversation(*txn, id, &detail.conversation, &next_seq));
    // actual_tokens is CountMessagesForModel of the history as an OpenAI
    // message array, summed from the counts stored with each message (its
    // content and tool calls, by the same rules and tokenizer) plus the
    // framing: re-tokenizing every message on every read cost 25 times more.
    CTXKIT_ASSIGN_OR_RETURN(
        internal::CountingChoice choice,
        internal::ChooseCounting(detail.conversation.model, {},
                                 ModelRegistry::Default()));
    internal::MessageCounter counter(choice.tokenizer, MessageCountOptions{},
                                     choice.format);
    uint64_t total = static_cast<uint64_t>(counter.reply_priming());
    if (include_messages) {
      detail.messages.reserve(detail.conversation.message_count);
    }
    CTXKIT_RETURN_IF_ERROR(ForEachMessage(
        *txn, id,
        [&](std::string_view key,
            const internal::MessageView& view) -> absl::Status {
          std::optional<std::string_view> name, tool_call_id;
          if (view.flags & internal::kFlagName) name = view.name;
          if (view.flags & internal::kFlagToolCallId) {
            tool_call_id = view.tool_call_id;
          }
          CTXKIT_ASSIGN_OR_RETURN(
              int64_t framing,
              counter.Framing(MessageRoleName(view.role), name, tool_call_id,
                              view.makes_calls()));
          total += view.tokens + static_cast<uint64_t>(framing);
          if (include_messages) {
            CTXKIT_RETURN_IF_ERROR(internal::CheckMessageText(key, view));
            detail.messages.push_back(internal::ToMessage(key, view));
          }
          return absl::OkStatus();
        }));
    detail.actual_tokens = total;
    detail.actual_tokens_exact = choice.exact && counter.exact();
    return detail;
  }

  absl::StatusOr<ConversationPage> List(uint32_t limit,
                                        std::string_view cursor_text) const {
    CTXKIT_RETURN_IF_ERROR(internal::CheckRange(
        "limit", limit, 1, ConversationLimits::kMaxListLimit));
    std::string start;
    if (!cursor_text.empty()) {
      if (cursor_text.size() > 128 ||
          !absl::WebSafeBase64Unescape(internal::AV(cursor_text), &start) ||
          start.size() != internal::kCreatedKeySize ||
          !internal::IsUuid(std::string_view(start).substr(8))) {
        return absl::InvalidArgumentError(
            "cursor is malformed: pass the next_cursor of an earlier page, or "
            "an empty cursor for the first page");
      }
    }
    ConversationPage page;
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*store);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    absl::StatusOr<uint64_t> total = internal::TxnCount(*txn, conversations);
    CTXKIT_RETURN_IF_ERROR(total.status());
    page.total = *total;
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(*txn, by_created);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    if (start.empty()) {
      cursor->SeekToLast();
    } else {
      // Every key at or after `start` was on earlier pages.
      cursor->Seek(start);
      if (cursor->Valid()) {
        cursor->Prev();
      } else {
        cursor->SeekToLast();
      }
    }
    std::string last_key;
    for (; cursor->Valid() && page.conversations.size() < limit;
         cursor->Prev()) {
      const std::string_view key = cursor->key();
      if (key.size() != internal::kCreatedKeySize) {
        return internal::DataLoss("conversations.by_created has a bad key");
      }
      const std::string_view id = key.substr(8);
      Conversation c;
      uint64_t next_seq = 0;
      absl::Status s = ReadConversation(*txn, id, &c, &next_seq);
      if (absl::IsNotFound(s)) {
        return internal::DataLoss(absl::StrFormat(
            "conversations.by_created names missing conversation %s", id));
      }
      CTXKIT_RETURN_IF_ERROR(s);
      page.conversations.push_back(std::move(c));
      last_key = std::string(key);
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
    if (cursor->Valid() && !last_key.empty()) {
      page.next_cursor = absl::WebSafeBase64Escape(internal::AV(last_key));
    }
    return page;
  }

  absl::StatusOr<DeletedConversation> Delete(std::string_view raw_id) {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("id", raw_id));
    DeletedConversation result;
    CTXKIT_RETURN_IF_ERROR(Update([&](WriteTransaction& txn) -> absl::Status {
      CTXKIT_ASSIGN_OR_RETURN(result, DeleteIn(txn, id));
      return absl::OkStatus();
    }));
    return result;
  }

  // Delete's work in `txn`, for normalized `id`.
  absl::StatusOr<DeletedConversation> DeleteIn(WriteTransaction& txn,
                                               const std::string& id) const {
    DeletedConversation result;
    uint64_t next_seq = 0;
    CTXKIT_RETURN_IF_ERROR(
        ReadConversation(txn, id, &result.conversation, &next_seq));
    const Conversation& c = result.conversation;
    internal::StatsDelta delta;
    delta.AddConversation(c.model, -1);
    // Collected first: deleting under an open cursor would invalidate the
    // views it hands out.
    std::vector<std::pair<std::string, std::string>> doomed;  // key, msg id
    CTXKIT_RETURN_IF_ERROR(ForEachMessage(
        txn, id,
        [&](std::string_view key,
            const internal::MessageView& view) -> absl::Status {
          delta.AddMessage(c.model, view.role, view.tokens, view.compressed(),
                           view.created_at, -1);
          doomed.emplace_back(std::string(key), std::string(view.id));
          return absl::OkStatus();
        }));
    for (const auto& [key, message_id] : doomed) {
      auto gone = internal::TxnDelete(txn, messages, key);
      CTXKIT_RETURN_IF_ERROR(gone.status());
      gone = internal::TxnDelete(txn, message_ids, message_id);
      CTXKIT_RETURN_IF_ERROR(gone.status());
    }
    result.messages_deleted = doomed.size();
    auto gone = internal::TxnDelete(txn, by_created,
                                    internal::CreatedKey(c.created_at, id));
    CTXKIT_RETURN_IF_ERROR(gone.status());
    gone = internal::TxnDelete(txn, conversations, id);
    CTXKIT_RETURN_IF_ERROR(gone.status());
    CTXKIT_RETURN_IF_ERROR(delta.Apply(txn, stats));
    if (compacted_views.valid()) {
      CTXKIT_ASSIGN_OR_RETURN(uint64_t views, internal::DeleteCompactedViews(
                                                  txn, compacted_views, id));
      result.dependent_records_deleted += views;
    }
    for (const auto& hook : hooks) {
      CTXKIT_ASSIGN_OR_RETURN(uint64_t n, hook->OnConversationDeleted(txn, id));
      result.dependent_records_deleted += n;
    }
    return result;
  }

  // Shared by SetCompressed and DeleteMessages: checks the ids, then runs
  // `fn(txn, conversation, next_seq, delta, key, view)` for each message in
  // one transaction and stores the conversation and statistics.
  template <typename Fn>
  absl::StatusOr<Conversation> ChangeMessages(
      std::string_view raw_id, const std::vector<std::string>& message_ids_in,
      bool refresh_last, Fn&& fn) {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("conversation_id", raw_id));
    std::vector<std::string> ids;
    CTXKIT_RETURN_IF_ERROR(internal::CheckIdList(message_ids_in, &ids));
    const int64_t now = Now();
    Conversation result;
    CTXKIT_RETURN_IF_ERROR(Update([&](WriteTransaction& txn) -> absl::Status {
      Conversation c;
      uint64_t next_seq = 0;
      CTXKIT_RETURN_IF_ERROR(ReadConversation(txn, id, &c, &next_seq));
      internal::StatsDelta delta;
      for (const std::string& message_id : ids) {
        absl::StatusOr<std::string_view> where =
            internal::TxnGet(txn, message_ids, message_id);
        if (!where.ok() &&
            where.status().code() != absl::StatusCode::kNotFound) {
          return where.status();
        }
        if (!where.ok() || where->substr(0, internal::kIdSize) != id) {
          return absl::NotFoundError(absl::StrFormat(
              "message %s not found in conversation %s", message_id, id));
        }
        const std::string key(*where);
        absl::StatusOr<std::string_view> value =
            internal::TxnGet(txn, messages, key);
        if (!value.ok()) {
          if (value.status().code() == absl::StatusCode::kNotFound) {
            return internal::DataLoss(absl::StrFormat(
                "message %s is indexed but missing", message_id));
          }
          return value.status();
        }
        CTXKIT_ASSIGN_OR_RETURN(internal::MessageView view,
                                internal::DecodeMessage(key, *value));
        CTXKIT_RETURN_IF_ERROR(fn(txn, c, delta, key, view));
      }
      c.total_tokens =
          c.user_tokens + c.assistant_tokens + c.system_tokens + c.tool_tokens;
      if (refresh_last) {
        CTXKIT_RETURN_IF_ERROR(RefreshLastMessage(txn, &c, next_seq));
      }
      c.updated_at = now;
      CTXKIT_RETURN_IF_ERROR(internal::TxnPut(
          txn, conversations, id, internal::EncodeConversation(c, next_seq)));
      CTXKIT_RETURN_IF_ERROR(delta.Apply(txn, stats));
      result = std::move(c);
      return absl::OkStatus();
    }));
    return result;
  }

  absl::StatusOr<ctxkit::AggregateStats> Aggregate() const {
    absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*store);
    CTXKIT_RETURN_IF_ERROR(txn.status());
    return internal::ReadAggregateStats(*txn, stats);
  }

  absl::StatusOr<ctxkit::ConversationStats> Stats(std::string_view raw_id,
                                                  size_t max_points) const {
    CTXKIT_ASSIGN_OR_RETURN(const std::string id,
                            internal::NormalizeId("id", raw_id));
    ctxkit::ConversationStats out;
    std::vector<TimelinePoint> all;
    {
      absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*store);
      CTXKIT_RETURN_IF_ERROR(txn.status());
      uint64_t next_seq = 0;
      CTXKIT_RETURN_IF_ERROR(
          ReadConversation(*txn, id, &out.conversation, &next_seq));
      all.reserve(out.conversation.message_count);
      uint64_t cumulative = 0;
      CTXKIT_RETURN_IF_ERROR(ForEachMessage(
          *txn, id, [&](std::string_view, const internal::MessageView& view) {
            cumulative += view.tokens;
            all.push_back({view.created_at, cumulative, view.tokens});
            return absl::OkStatus();
          }));
    }
    const Conversation& c = out.conversation;
    out.total_tokens = c.total_tokens;
    out.input_tokens = c.input_tokens();
    out.output_tokens = c.output_tokens();
    out.user_tokens = c.user_tokens;
    out.assistant_tokens = c.assistant_tokens;
    out.message_count = c.message_count;
    if (c.message_count > 0) {
      out.avg_tokens_per_message = static_cast<double>(c.total_tokens) /
                                   static_cast<double>(c.message_count);
      out.compression_ratio = static_cast<double>(c.compressed_count) /
                              static_cast<double>(c.message_count);
    }
    if (max_points == 0 || all.size() <= max_points) {
      out.timeline = std::move(all);
    } else if (max_points == 1) {
      out.timeline.push_back(all.back());
    } else {
      const size_t n = all.size();
      const size_t step = (n + max_points - 2) / (max_points - 1);
      for (size_t i = step - 1; i < n - 1; i += step) {
        out.timeline.push_back(all[i]);
      }
      out.timeline.push_back(all.back());
    }
    out.token_limit = TokenLimitForModel(c.model, c.total_tokens);
    return out;
  }
};

// ---- ConversationStore ----

const char* MessageRoleName(MessageRole role) noexcept {
  switch (role) {
    case MessageRole::kUser:
      return "user";
    case MessageRole::kAssistant:
      return "assistant";
    case MessageRole::kSystem:
      return "system";
    case MessageRole::kTool:
      return "tool";
  }
  return "invalid";
}

StatusOr<MessageRole> ParseMessageRole(std::string_view name) {
  for (MessageRole role : {MessageRole::kUser, MessageRole::kAssistant,
                           MessageRole::kSystem, MessageRole::kTool}) {
    if (name == MessageRoleName(role)) return role;
  }
  if (name.size() <= 64 && internal::IsUuidPrintable(name)) {
    return Status(StatusCode::kInvalidArgument,
                  absl::StrFormat("role is \"%s\"; it must be user, "
                                  "assistant, system or tool",
                                  name));
  }
  return Status(StatusCode::kInvalidArgument,
                "role must be user, assistant, system or tool");
}

ConversationStore::ConversationStore(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ConversationStore::~ConversationStore() = default;

StatusOr<std::unique_ptr<ConversationStore>> ConversationStore::Open(
    Store& store, ConversationOptions options) {
  std::vector<std::unique_ptr<internal::ConversationDeleteHook>> hooks;
  auto references = internal::MakeReferenceDeleteHook(store);
  if (!references.ok()) return internal::ToPublic(references.status());
  hooks.push_back(std::move(*references));
  auto cache = internal::MakeCacheDeleteHook(store);
  if (!cache.ok()) return internal::ToPublic(cache.status());
  hooks.push_back(std::move(*cache));
  auto graph = internal::MakeGraphDeleteHook(store);
  if (!graph.ok()) return internal::ToPublic(graph.status());
  hooks.push_back(std::move(*graph));
  return internal::ToPublic(
      Impl::Open(store, std::move(options), std::move(hooks)));
}

StatusOr<Conversation> ConversationStore::Create(
    const NewConversation& conversation) {
  absl::StatusOr<Conversation> c = impl_->PrepareCreate(conversation);
  if (!c.ok()) return internal::ToPublic(c.status());
  absl::Status s = impl_->Update(
      [&](WriteTransaction& txn) { return impl_->WriteCreated(txn, *c); });
  if (!s.ok()) return internal::ToPublic(s);
  return *std::move(c);
}

StatusOr<AddMessageResult> ConversationStore::AddMessage(
    std::string_view conversation_id, const NewMessage& message) {
  auto added = impl_->Add(conversation_id, &message, 1, /*single=*/true);
  if (!added.ok()) return internal::ToPublic(added.status());
  AddMessageResult out;
  out.message = std::move(added->messages[0]);
  out.conversation = std::move(added->conversation);
  return out;
}

StatusOr<AddMessagesResult> ConversationStore::AddMessages(
    std::string_view conversation_id, const std::vector<NewMessage>& messages) {
  return internal::ToPublic(impl_->Add(conversation_id, messages.data(),
                                       messages.size(), /*single=*/false));
}

StatusOr<ConversationDetail> ConversationStore::Get(
    std::string_view id, bool include_messages) const {
  return internal::ToPublic(impl_->Get(id, include_messages));
}

StatusOr<ConversationPage> ConversationStore::List(
    uint32_t limit, std::string_view cursor) const {
  return internal::ToPublic(impl_->List(limit, cursor));
}

StatusOr<Conversation> ConversationStore::Update(
    std::string_view raw_id, const ConversationUpdate& update) {
  auto id = internal::NormalizeId("id", raw_id);
  if (!id.ok()) return internal::ToPublic(id.status());
  absl::Status s;
  if (!update.title && !update.metadata) {
    s = absl::InvalidArgumentError(
        "title or metadata must be given: an update changes at least one");
  }
  if (s.ok() && update.title) s = internal::CheckTitle(*update.title);
  if (s.ok() && update.metadata) s = internal::CheckMetadata(*update.metadata);
  if (!s.ok()) return internal::ToPublic(s);
  const int64_t now = impl_->Now();
  Conversation result;
  s = impl_->Update([&](WriteTransaction& txn) -> absl::Status {
    uint64_t next_seq = 0;
    CTXKIT_RETURN_IF_ERROR(
        impl_->ReadConversation(txn, *id, &result, &next_seq));
    if (update.title) result.title = *update.title;
    if (update.metadata) result.metadata = *update.metadata;
    result.updated_at = now;
    return internal::TxnPut(txn, impl_->conversations, *id,
                            internal::EncodeConversation(result, next_seq));
  });
  if (!s.ok()) return internal::ToPublic(s);
  return result;
}

StatusOr<DeletedConversation> ConversationStore::Delete(std::string_view id) {
  return internal::ToPublic(impl_->Delete(id));
}

StatusOr<Conversation> ConversationStore::SetCompressed(
    std::string_view conversation_id,
    const std::vector<std::string>& message_ids, bool is_compressed) {
  return internal::ToPublic(impl_->ChangeMessages(
      conversation_id, message_ids, /*refresh_last=*/false,
      [&](WriteTransaction& txn, Conversation& c, internal::StatsDelta& delta,
          const std::string& key, internal::MessageView view) -> absl::Status {
        if (view.compressed() == is_compressed) return absl::OkStatus();
        view.flags ^= internal::kFlagCompressed;
        const int sign = is_compressed ? 1 : -1;
        c.compressed_count += sign;
        c.compressed_tokens += sign * static_cast<int64_t>(view.tokens);
        delta.Compression(view.tokens, sign);
        return internal::TxnPut(txn, impl_->messages, key,
                                internal::EncodeMessageView(view));
      }));
}

StatusOr<Conversation> ConversationStore::DeleteMessages(
    std::string_view conversation_id,
    const std::vector<std::string>& message_ids) {
  return internal::ToPublic(impl_->ChangeMessages(
      conversation_id, message_ids, /*refresh_last=*/true,
      [&](WriteTransaction& txn, Conversation& c, internal::StatsDelta& delta,
          const std::string& key,
          const internal::MessageView& view) -> absl::Status {
        if (c.message_count == 0 ||
            internal::RoleTokens(c, view.role) < view.tokens) {
          return internal::DataLoss("conversation totals below its messages'");
        }
        --c.message_count;
        internal::RoleTokens(c, view.role) -= view.tokens;
        if (view.compressed()) {
          --c.compressed_count;
          c.compressed_tokens -= view.tokens;
        }
        delta.AddMessage(c.model, view.role, view.tokens, view.compressed(),
                         view.created_at, -1);
        // The view dies with the key.
        const std::string message_id(view.id);
        const std::string content(view.content);
        const uint64_t seq =
            internal::ReadBigEndian64(key.data() + internal::kIdSize);
        auto gone = internal::TxnDelete(txn, impl_->messages, key);
        CTXKIT_RETURN_IF_ERROR(gone.status());
        gone = internal::TxnDelete(txn, impl_->message_ids, message_id);
        CTXKIT_RETURN_IF_ERROR(gone.status());
        for (const auto& hook : impl_->hooks) {
          CTXKIT_RETURN_IF_ERROR(
              hook->OnMessageDeleted(txn, c.id, seq, content));
        }
        return absl::OkStatus();
      }));
}

StatusOr<AggregateStats> ConversationStore::AggregateStats() const {
  return internal::ToPublic(impl_->Aggregate());
}

StatusOr<ConversationStats> ConversationStore::ConversationStats(
    std::string_view id, size_t max_timeline_points) const {
  return internal::ToPublic(impl_->Stats(id, max_timeline_points));
}

namespace internal {

CompactedViewContext CompactedViewContextOf(
    const ConversationStore::Impl& impl) {
  CompactedViewContext context;
  context.store = impl.store;
  context.conversations = impl.conversations;
  context.views = impl.compacted_views;
  context.options = &impl.options;
  return context;
}

struct ConversationStoreAccess {
  static const ConversationStore::Impl& Impl(const ConversationStore& s) {
    return *s.impl_;
  }
};

absl::StatusOr<PreparedMessages> PrepareMessages(
    const ConversationStore& conversations, std::string_view model,
    const NewMessage* batch, size_t count, bool single) {
  return ConversationStoreAccess::Impl(conversations)
      .Prepare(model, batch, count, single);
}

absl::StatusOr<AddMessagesResult> AppendPreparedMessages(
    const ConversationStore& conversations, WriteTransaction& txn,
    const std::string& id, const PreparedMessages& prepared) {
  return ConversationStoreAccess::Impl(conversations).Append(txn, id, prepared);
}

absl::StatusOr<Conversation> CheckNewConversation(
    const ConversationStore& conversations, const NewConversation& c) {
  return ConversationStoreAccess::Impl(conversations).PrepareCreate(c);
}

absl::Status WriteNewConversation(const ConversationStore& conversations,
                                  WriteTransaction& txn,
                                  const Conversation& c) {
  return ConversationStoreAccess::Impl(conversations).WriteCreated(txn, c);
}

absl::StatusOr<DeletedConversation> DeleteConversationIn(
    const ConversationStore& conversations, WriteTransaction& txn,
    const std::string& id) {
  return ConversationStoreAccess::Impl(conversations).DeleteIn(txn, id);
}

absl::Status ReadConversationIn(const ConversationStore& conversations,
                                const Transaction& txn, const std::string& id,
                                Conversation* c, uint64_t* last_seq) {
  return ConversationStoreAccess::Impl(conversations)
      .ReadConversation(txn, id, c, last_seq);
}

absl::StatusOr<std::vector<Message>> NewestMessagesIn(
    const ConversationStore& conversations, const Transaction& txn,
    const std::string& id, uint64_t before_seq, size_t limit) {
  const ConversationStore::Impl& impl =
      ConversationStoreAccess::Impl(conversations);
  std::vector<Message> out;
  absl::StatusOr<Cursor> cursor = TxnNewCursor(txn, impl.messages);
  CTXKIT_RETURN_IF_ERROR(cursor.status());
  // The first key at or past the end of the range, then one back: the
  // newest message in range.
  cursor->Seek(before_seq == 0 ? MessageKey(id, ~uint64_t{0})
                               : MessageKey(id, before_seq));
  if (cursor->Valid()) {
    cursor->Prev();
  } else {
    cursor->SeekToLast();
  }
  for (; cursor->Valid() && out.size() < limit &&
         cursor->key().size() == kMessageKeySize &&
         cursor->key().substr(0, kIdSize) == id;
       cursor->Prev()) {
    CTXKIT_ASSIGN_OR_RETURN(MessageView view,
                            DecodeMessage(cursor->key(), cursor->value()));
    CTXKIT_RETURN_IF_ERROR(CheckMessageText(cursor->key(), view));
    out.push_back(ToMessage(cursor->key(), view));
  }
  CTXKIT_RETURN_IF_ERROR(CursorStatus(*cursor));
  std::reverse(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::string> NormalizeConversationId(std::string_view field,
                                                    std::string_view id) {
  return NormalizeId(field, id);
}

absl::Status ReadConversationRecord(const Transaction& txn,
                                    Database conversations, std::string_view id,
                                    Conversation* c, uint64_t* last_seq) {
  absl::StatusOr<std::string_view> v = internal::TxnGet(txn, conversations, id);
  if (!v.ok()) {
    if (v.status().code() == absl::StatusCode::kNotFound) {
      return ConversationNotFound(id);
    }
    return v.status();
  }
  return DecodeConversation(id, *v, c, last_seq);
}

absl::StatusOr<std::unique_ptr<ConversationStore>>
OpenConversationStoreWithHooks(
    Store& store, ConversationOptions options,
    std::vector<std::unique_ptr<ConversationDeleteHook>> hooks) {
  return ConversationStore::Impl::Open(store, std::move(options),
                                       std::move(hooks));
}

}  // namespace internal
}  // namespace ctxkit
