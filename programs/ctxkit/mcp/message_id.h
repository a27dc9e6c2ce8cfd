// The id of a JSON-RPC message read in pieces without holding it: how a
// transport answers a message too large to read with the id the client
// waits on, wherever in the line the id is written (the TypeScript SDK
// writes it last, after the params).

#ifndef CTXKIT_PROGRAMS_CTXKIT_MCP_MESSAGE_ID_H_
#define CTXKIT_PROGRAMS_CTXKIT_MCP_MESSAGE_ID_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace ctxkit::mcp {

// Scans a JSON text fed in any number of pieces for the "id" member of its
// top-level object, in constant memory. Not thread-safe; one per message.
class MessageIdScanner {
 public:
  // Feeds the next bytes of the message.
  void Feed(std::string_view bytes);

  // The id as JSON text to echo: a number or a string as the message wrote
  // it, once seen whole and valid; "null" when the message has none, is not
  // an object, or its id is of another type, malformed, longer than
  // kMaxIdBytes, or not yet complete. The first "id" member counts.
  std::string IdJson() const;

  static constexpr size_t kMaxIdBytes = 256;

 private:
  void Step(char c);
  void EndValue();

  enum class Expect { kObject, kKey, kColon, kValue, kAfterValue, kDone };
  Expect expect_ = Expect::kObject;
  size_t depth_ = 0;        // of arrays and objects around the next byte
  bool in_string_ = false;  // inside a string (key or value)
  bool escaped_ = false;    // the previous byte was a backslash in one
  bool key_is_id_ = false;  // the key just read was exactly "id"
  bool capturing_ = false;  // reading the id's value
  bool in_scalar_ = false;  // inside a number or literal at depth 1
  std::string key_;         // the current top-level key, up to 3 bytes
  std::string value_;       // the id's text, up to kMaxIdBytes + 1
  std::string id_;          // the id, once complete
};

}  // namespace ctxkit::mcp

#endif  // CTXKIT_PROGRAMS_CTXKIT_MCP_MESSAGE_ID_H_
