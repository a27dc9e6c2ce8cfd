// Compacted views of stored conversations (ConversationStore's "Compacted
// views" section): versioned records beside the messages, which they never
// touch.
//
// On-disk layout, in "conversations.compacted_views" (integers in values
// are LEB128 varints, "svarint" zig-zag, "lp" a varint length and the bytes,
// as in conversation_store.cc):
//
//   key:   conversation id (36 bytes, lower case) + big-endian u64 version,
//          so a conversation's views are one ordered range, oldest first,
//          and the latest is the last key of the range
//   value: 1 | svarint created_at | varint source_message_count |
//          varint source_last_seq | varint tokens | lp info_json |
//          lp messages_json
//
// messages_json comes last so that a listing decodes everything else without
// touching its bytes (LMDB maps a large value's pages; unread ones are never
// paged in).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/conversations.h"
#include "lib/base/clock.h"
#include "lib/base/field_check.h"
#include "lib/base/key_codec.h"
#include "lib/base/record_codec.h"
#include "lib/conversations/conversation_store_internal.h"
#include "lib/json/json_reader.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "lib/store/store_internal.h"
#include "simdjson.h"

namespace ctxkit {
namespace internal {
namespace {

constexpr uint8_t kViewRecordVersion = 1;
constexpr size_t kIdBytes = 36;
constexpr size_t kViewKeyBytes = kIdBytes + 8;

std::string ViewKey(std::string_view id, uint64_t version) {
  std::string key(id);
  AppendBigEndian64(&key, version);
  return key;
}

std::string EncodeView(int64_t created_at, const NewCompactedView& v) {
  std::string out;
  out.reserve(48 + v.info_json.size() + v.messages_json.size());
  out.push_back(static_cast<char>(kViewRecordVersion));
  PutSignedVarint(&out, created_at);
  PutVarint(&out, v.source_message_count);
  PutVarint(&out, v.source_last_seq);
  PutVarint(&out, v.tokens);
  PutLengthPrefixed(&out, v.info_json);
  PutLengthPrefixed(&out, v.messages_json);
  return out;
}

// Decodes the record under `key` into `view`; messages_json only when
// `with_messages` (messages_bytes always).
absl::Status DecodeView(std::string_view key, std::string_view value,
                        bool with_messages, CompactedView* view) {
  RecordReader r(value);
  uint8_t record_version = 0;
  std::string_view info, messages;
  r.GetByte(&record_version);
  r.GetSignedVarint(&view->created_at);
  r.GetVarint(&view->source_message_count);
  r.GetVarint(&view->source_last_seq);
  r.GetVarint(&view->tokens);
  r.GetLengthPrefixed(&info);
  r.GetLengthPrefixed(&messages);
  if (!r.ok() || !r.AtEnd() || record_version != kViewRecordVersion ||
      key.size() != kViewKeyBytes) {
    return absl::DataLossError(absl::StrFormat(
        "conversation store record is corrupt: compacted view %d of "
        "conversation %s is malformed",
        key.size() == kViewKeyBytes ? ReadBigEndian64(key.data() + kIdBytes)
                                    : 0,
        key.substr(0, std::min(key.size(), kIdBytes))));
  }
  view->conversation_id = std::string(key.substr(0, kIdBytes));
  view->version = ReadBigEndian64(key.data() + kIdBytes);
  view->info_json = std::string(info);
  view->messages_bytes = messages.size();
  if (with_messages) view->messages_json = std::string(messages);
  return absl::OkStatus();
}

// Everything about `view` that needs no transaction.
absl::Status CheckNewView(const NewCompactedView& view) {
  if (absl::Status s = CheckText("messages_json", view.messages_json,
                                 CompactedViewLimits::kMaxMessagesJsonBytes);
      !s.ok()) {
    return s;
  }
  simdjson::dom::parser parser;
  {
    absl::StatusOr<simdjson::dom::element> root =
        ParseJson(parser, view.messages_json, "messages_json");
    if (!root.ok()) return root.status();
    absl::StatusOr<simdjson::dom::array> messages =
        AsArray(*root, "messages_json");
    if (!messages.ok()) return messages.status();
    size_t i = 0;
    for (simdjson::dom::element message : *messages) {
      absl::StatusOr<simdjson::dom::object> object =
          AsObject(message, JsonIndexPath("messages_json", i++));
      if (!object.ok()) return object.status();
    }
  }
  if (absl::Status s = CheckText("info_json", view.info_json,
                                 CompactedViewLimits::kMaxInfoJsonBytes);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<simdjson::dom::element> info =
      ParseJson(parser, view.info_json, "info_json");
  if (!info.ok()) return info.status();
  if (absl::Status s = AsObject(*info, "info_json").status(); !s.ok()) {
    return s;
  }
  if (view.source_message_count > view.source_last_seq) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "source_message_count is %d; it cannot exceed source_last_seq (%d): "
        "message seqs start at 1 and are never reused",
        view.source_message_count, view.source_last_seq));
  }
  return absl::OkStatus();
}

// The version of the conversation's latest view in `txn`, 0 when none.
absl::StatusOr<uint64_t> LatestVersion(const Transaction& txn, Database views,
                                       std::string_view id) {
  absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, views);
  CTXKIT_RETURN_IF_ERROR(cursor.status());
  cursor->Seek(ViewKey(id, std::numeric_limits<uint64_t>::max()));
  if (cursor->Valid()) {
    // Version UINT64_MAX itself can never be reached (see Save).
    cursor->Prev();
  } else {
    cursor->SeekToLast();
  }
  uint64_t latest = 0;
  if (cursor->Valid() && cursor->key().size() == kViewKeyBytes &&
      cursor->key().substr(0, kIdBytes) == id) {
    latest = ReadBigEndian64(cursor->key().data() + kIdBytes);
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
  return latest;
}

absl::StatusOr<CompactedView> Save(const CompactedViewContext& ctx,
                                   std::string_view raw_id,
                                   const NewCompactedView& view) {
  absl::StatusOr<std::string> id =
      NormalizeConversationId("conversation_id", raw_id);
  if (!id.ok()) return id.status();
  if (absl::Status s = CheckNewView(view); !s.ok()) return s;
  const int64_t now = NowMillis(ctx.options->clock);
  const std::string record = EncodeView(now, view);
  CompactedView saved;
  absl::Status status = internal::StoreUpdate(
      *ctx.store, [&](WriteTransaction& txn) -> absl::Status {
        Conversation c;
        uint64_t last_seq = 0;
        if (absl::Status s = ReadConversationRecord(txn, ctx.conversations, *id,
                                                    &c, &last_seq);
            !s.ok()) {
          return s;
        }
        if (view.source_last_seq > last_seq) {
          return absl::InvalidArgumentError(
              absl::StrFormat("source_last_seq is %d; conversation %s "
                              "has handed out seqs up to %d",
                              view.source_last_seq, *id, last_seq));
        }
        absl::StatusOr<uint64_t> latest = LatestVersion(txn, ctx.views, *id);
        if (!latest.ok()) return latest.status();
        if (*latest >= std::numeric_limits<uint64_t>::max() - 1) {
          return absl::ResourceExhaustedError(
              "conversation has run out of compacted view versions");
        }
        saved.version = *latest + 1;
        return internal::TxnPut(txn, ctx.views, ViewKey(*id, saved.version),
                                record);
      });
  CTXKIT_RETURN_IF_ERROR(status);
  saved.conversation_id = *id;
  saved.created_at = now;
  saved.messages_json = view.messages_json;
  saved.info_json = view.info_json;
  saved.messages_bytes = view.messages_json.size();
  saved.source_message_count = view.source_message_count;
  saved.source_last_seq = view.source_last_seq;
  saved.tokens = view.tokens;
  return saved;
}

// Checks the id and that the conversation exists in `txn`.
absl::StatusOr<std::string> ExistingId(const CompactedViewContext& ctx,
                                       const Transaction& txn,
                                       std::string_view raw_id) {
  absl::StatusOr<std::string> id =
      NormalizeConversationId("conversation_id", raw_id);
  if (!id.ok()) return id.status();
  Conversation c;
  uint64_t last_seq = 0;
  if (absl::Status s =
          ReadConversationRecord(txn, ctx.conversations, *id, &c, &last_seq);
      !s.ok()) {
    return s;
  }
  return id;
}

absl::StatusOr<CompactedView> GetView(const CompactedViewContext& ctx,
                                      std::string_view raw_id,
                                      uint64_t version) {
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*ctx.store);
  CTXKIT_RETURN_IF_ERROR(txn.status());
  absl::StatusOr<std::string> id = ExistingId(ctx, *txn, raw_id);
  if (!id.ok()) return id.status();
  uint64_t latest = 0;
  if (ctx.views.valid()) {
    absl::StatusOr<uint64_t> found = LatestVersion(*txn, ctx.views, *id);
    if (!found.ok()) return found.status();
    latest = *found;
  }
  if (latest == 0) {
    return absl::NotFoundError(
        absl::StrFormat("conversation %s has no compacted view", *id));
  }
  const uint64_t wanted = version == 0 ? latest : version;
  const std::string key = ViewKey(*id, wanted);
  absl::StatusOr<std::string_view> value =
      internal::TxnGet(*txn, ctx.views, key);
  if (!value.ok()) {
    if (value.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrFormat(
          "compacted view %d of conversation %s not found (versions are 1 "
          "to %d)",
          wanted, *id, latest));
    }
    return value.status();
  }
  CompactedView view;
  if (absl::Status s = DecodeView(key, *value, /*with_messages=*/true, &view);
      !s.ok()) {
    return s;
  }
  return view;
}

absl::StatusOr<std::vector<CompactedView>> ListViews(
    const CompactedViewContext& ctx, std::string_view raw_id) {
  absl::StatusOr<ReadTransaction> txn = internal::StoreBeginRead(*ctx.store);
  CTXKIT_RETURN_IF_ERROR(txn.status());
  absl::StatusOr<std::string> id = ExistingId(ctx, *txn, raw_id);
  if (!id.ok()) return id.status();
  std::vector<CompactedView> views;
  if (!ctx.views.valid()) return views;
  absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(*txn, ctx.views);
  CTXKIT_RETURN_IF_ERROR(cursor.status());
  for (cursor->Seek(*id);
       cursor->Valid() && cursor->key().substr(0, kIdBytes) == *id;
       cursor->Next()) {
    CompactedView& view = views.emplace_back();
    if (absl::Status s = DecodeView(cursor->key(), cursor->value(),
                                    /*with_messages=*/false, &view);
        !s.ok()) {
      return s;
    }
  }
  CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
  return views;
}

}  // namespace

absl::StatusOr<uint64_t> DeleteCompactedViews(WriteTransaction& txn,
                                              Database views,
                                              std::string_view id) {
  // Collected first: deleting under an open cursor would invalidate it.
  std::vector<std::string> keys;
  {
    absl::StatusOr<Cursor> cursor = internal::TxnNewCursor(txn, views);
    CTXKIT_RETURN_IF_ERROR(cursor.status());
    for (cursor->Seek(id);
         cursor->Valid() && cursor->key().substr(0, kIdBytes) == id;
         cursor->Next()) {
      keys.emplace_back(cursor->key());
    }
    CTXKIT_RETURN_IF_ERROR(internal::CursorStatus(*cursor));
  }
  for (const std::string& key : keys) {
    absl::StatusOr<bool> gone = internal::TxnDelete(txn, views, key);
    CTXKIT_RETURN_IF_ERROR(gone.status());
  }
  return keys.size();
}

}  // namespace internal

StatusOr<CompactedView> ConversationStore::SaveCompactedView(
    std::string_view conversation_id, const NewCompactedView& view) {
  return internal::ToPublic(internal::Save(
      internal::CompactedViewContextOf(*impl_), conversation_id, view));
}

StatusOr<CompactedView> ConversationStore::GetCompactedView(
    std::string_view conversation_id, uint64_t version) const {
  return internal::ToPublic(internal::GetView(
      internal::CompactedViewContextOf(*impl_), conversation_id, version));
}

StatusOr<std::vector<CompactedView>> ConversationStore::ListCompactedViews(
    std::string_view conversation_id) const {
  return internal::ToPublic(internal::ListViews(
      internal::CompactedViewContextOf(*impl_), conversation_id));
}

}  // namespace ctxkit
