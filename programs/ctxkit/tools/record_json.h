// Seed 000's success envelope around the library's documents. A tool's
// answer is the library's document for its result (the one writer beside
// the result type in include/ctxkit/, the same bytes the C ABI returns and
// the CLI prints) with "success":true as its first member and, where the
// seed has one, a "message" (or other tool-only members) as its last: the
// host adds the envelope and nothing inside it. tests/program/
// one_writer_test.cc holds every tool to that.
//
// Thread safety: pure functions of their arguments.

#ifndef CTXKIT_PROGRAMS_CTXKIT_TOOLS_RECORD_JSON_H_
#define CTXKIT_PROGRAMS_CTXKIT_TOOLS_RECORD_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// MinifyJson and JsonOut, which the tools use with these.
#include "programs/ctxkit/host/json_out.h"

namespace ctxkit::program {

// {"success":true,<the members of `document`>,<extra_members>,
// "message":<message>}: `document` is a JSON object's text (minified here,
// so a pretty document still gives one line), `extra_members` text such as
// "\"a\":1" (empty for none), and "message" is left out when `message` is
// nullopt.
std::string WithSuccess(std::string_view document,
                        std::optional<std::string_view> message = std::nullopt,
                        std::string_view extra_members = {});

// The two documents with no result type in the library (and no C ABI
// document: those calls return a status or a count), written here once for
// the CLI and the tools alike:
//   a deleted reference: {"schema_version":1,"deleted":true,"id"}
//   a cache clear: {"schema_version":1,"cleared","prefix" (null: every
//   prefix)}
std::string DeletedReferenceJson(std::string_view id);
std::string CacheClearedJson(uint64_t cleared,
                             std::optional<std::string_view> prefix);

// `object_json` (minified, a JSON object) with `members` (text such as
// "\"a\":1,\"b\":2", empty for none) appended as its last members.
std::string AppendMembers(std::string_view object_json,
                          std::string_view members);

}  // namespace ctxkit::program

#endif  // CTXKIT_PROGRAMS_CTXKIT_TOOLS_RECORD_JSON_H_
