// Readers of a chat message's JSON shared by the parse of a history
// (chat_history.cc) and the rewrites of a kept message (message_rewrite.cc).
//
// Thread safety: pure functions. Member() and StringMember() return views
// into the parser that holds `obj`, valid until it parses again or goes.

#ifndef CTXKIT_LIB_COMPACTOR_MESSAGE_JSON_H_
#define CTXKIT_LIB_COMPACTOR_MESSAGE_JSON_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "simdjson.h"

namespace ctxkit::internal {

// "messages[i]": how errors name message `i` of the input.
std::string MessagePath(size_t i);

// The first member named `key`, if any (simdjson's at_key finds the first).
std::optional<simdjson::dom::element> Member(simdjson::dom::object obj,
                                             std::string_view key);

// The first member named `key` when it is a string; nullopt when it is
// absent or of another type.
std::optional<std::string_view> StringMember(simdjson::dom::object obj,
                                             std::string_view key);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_MESSAGE_JSON_H_
