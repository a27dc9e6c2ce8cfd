// What records_peer and the tests that drive it agree on: the words the
// peer writes (so searches have matches) and the lines it prints.
//
// records_peer prints one line per event, each with one write(2), so a line
// is in the pipe whole or not at all, even when the peer is SIGKILLed:
//   ready                               the store and every part are open
//   B DC <conversation id>              about to delete a conversation
//   B DR <reference id>                 about to delete a reference
//   C <conversation id>                 created (acknowledged)
//   M <conversation id> <message id> <seq> <tokens>   one line per message
//                                       of an acknowledged AddMessage(s)
//   R <reference id> <conversation id or -> <unique term>
//   P <cache key> <conversation id or ->
//   DC <conversation id>                deleted, with its dependents
//   DR <reference id>                   deleted
//   done                                the requested number of operations
//                                       (write mode only)
//   ERR <status>                        a write failed; the peer exits 1
// Every acknowledgement is printed after the write returned OK, so it is
// durable. A "B" line without its "DC"/"DR" is a delete whose outcome the
// killed peer never learned: the checker looks at the store to see which.

#ifndef CTXKIT_TESTS_RECORDS_RECORDS_PROTOCOL_H_
#define CTXKIT_TESTS_RECORDS_RECORDS_PROTOCOL_H_

#include <string_view>

namespace ctxkit::testing {

// Reference titles and contents, and cache contents, are made of these.
inline constexpr std::string_view kRecordWords[] = {
    "token",     "context", "window",  "budget",    "cache",    "prompt",
    "session",   "review",  "commit",  "branch",    "merge",    "kernel",
    "latency",   "buffer",  "parser",  "compiler",  "module",   "vector",
    "matrix",    "storage", "index",   "search",    "ranking",  "document",
    "reference", "summary", "message", "assistant", "system",   "request",
    "response",  "stream",  "channel", "thread",    "process",  "signal",
    "memory",    "disk",    "network", "socket",    "protocol", "schema",
    "record",    "field",   "column",  "table",     "query",    "filter",
    "sort",      "limit",   "offset",  "cursor",    "page",     "batch",
};

// The model every conversation, reference and cache entry of the peer is
// counted with. A name the registry does not know, so counts use the flagged
// heuristic: the tests are about durability and consistency, and a Debug
// build would otherwise spend most of each short round building a
// tokenizer in every new peer process.
inline constexpr std::string_view kRecordsModel = "records-test-model";

}  // namespace ctxkit::testing

#endif  // CTXKIT_TESTS_RECORDS_RECORDS_PROTOCOL_H_
