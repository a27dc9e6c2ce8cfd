// The store-wide statistics of the conversations part ("conversations.stats",
// layout in conversation_records.h): the changes a write makes, applied in its
// transaction, and the totals read back.

#ifndef CTXKIT_LIB_CONVERSATIONS_CONVERSATION_TOTALS_H_
#define CTXKIT_LIB_CONVERSATIONS_CONVERSATION_TOTALS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "lib/conversations/conversation_records.h"
#include "lib/conversations/conversation_store_internal.h"

namespace ctxkit::internal {

// The changes one write makes to the store-wide statistics, collected while
// the write runs and applied once at its end (one read-modify-write per
// touched key however many messages the write holds).
class StatsDelta {
 public:
  void AddConversation(std::string_view model, int sign) {
    global_.conversations += sign;
    Model(model).conversations += sign;
  }

  void AddMessage(std::string_view model, MessageRole role, uint64_t tokens,
                  bool compressed, int64_t created_at, int sign) {
    const int64_t t = sign * static_cast<int64_t>(tokens);
    global_.messages += sign;
    global_.tokens[RoleIndex(role)] += t;
    if (compressed) {
      global_.compressed_messages += sign;
      global_.compressed_tokens += t;
    }
    Delta& m = Model(model);
    m.messages += sign;
    m.tokens[RoleIndex(role)] += t;
    Day& d = days_[DayOfMillis(created_at)];
    d.messages += sign;
    (IsInputRole(role) ? d.input : d.output) += t;
  }

  void Compression(uint64_t tokens, int sign) {
    global_.compressed_messages += sign;
    global_.compressed_tokens += sign * static_cast<int64_t>(tokens);
  }

  // Reads, adjusts and writes back every record the write touched, in
  // `txn`; DATA_LOSS if a total would go below zero.
  absl::Status Apply(WriteTransaction& txn, Database db) const;

 private:
  struct Delta {
    int64_t conversations = 0;
    int64_t messages = 0;
    std::array<int64_t, 4> tokens = {};
    int64_t compressed_messages = 0;
    int64_t compressed_tokens = 0;
  };
  struct Day {
    int64_t messages = 0;
    int64_t input = 0;
    int64_t output = 0;
  };

  Delta& Model(std::string_view model) {
    if (last_model_ == nullptr || last_model_name_ != model) {
      last_model_ = &models_[std::string(model)];
      last_model_name_ = std::string(model);
    }
    return *last_model_;
  }

  Delta global_;
  std::map<std::string, Delta> models_;
  std::map<int64_t, Day> days_;
  Delta* last_model_ = nullptr;
  std::string last_model_name_;
};

// The store-wide totals as ConversationStore::AggregateStats returns them,
// read in `txn` from the statistics database `stats`.
absl::StatusOr<AggregateStats> ReadAggregateStats(const Transaction& txn,
                                                  Database stats);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_CONVERSATIONS_CONVERSATION_TOTALS_H_
