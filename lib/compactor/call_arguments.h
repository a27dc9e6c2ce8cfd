// What a tool call's arguments say, for the span digests (summary.h), and
// the file a shell command writes. The arguments are read as JSON text
// without a parser: an OpenAI call's arguments are a string the model wrote
// and need not be valid JSON.
//
// Thread safety: pure functions.

#ifndef CTXKIT_LIB_COMPACTOR_CALL_ARGUMENTS_H_
#define CTXKIT_LIB_COMPACTOR_CALL_ARGUMENTS_H_

#include <string>
#include <string_view>

namespace ctxkit::internal {

// What one call's arguments say.
struct CallArguments {
  std::string short_form;  // top-level values, ", "-joined, short
  std::string path;        // the first top-level path-like member
  std::string command;     // the "command" member (editor or shell)
};

// Walks `json` (its first 32 KiB): appends every string value (not member
// names), decoded, one per line, to *text, and fills *call from top-level
// members. Text that is not a JSON object or array is appended as it is.
// *value is scratch space, passed in so that its buffer is reused.
// Malformed JSON is read as far as it goes.
void ReadArguments(std::string_view json, std::string* text, std::string* value,
                   CallArguments* call);

// The file a shell command line writes: "cat > p", "cat <<EOF > p",
// "echo x >> p", "tee p", "sed -i ... p", SWE-agent's "create p". Empty when
// it writes none (2>&1, > /dev/null and redirections to non-names do not
// count).
std::string_view ShellWrittenFile(std::string_view line);

}  // namespace ctxkit::internal

#endif  // CTXKIT_LIB_COMPACTOR_CALL_ARGUMENTS_H_
