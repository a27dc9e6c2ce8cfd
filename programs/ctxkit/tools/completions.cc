// Completion candidates for conversation ids (completion/complete on the
// conversation_id variable of every resource template and on the
// conversation_id argument of the prompts).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "ctxkit/conversations.h"
#include "programs/ctxkit/mcp/catalog.h"
#include "programs/ctxkit/tools/adapters.h"

namespace ctxkit::tools {

namespace {

// Ids are lower-case UUIDs; a client may type upper-case hex.
std::string LowerAscii(std::string_view text) {
  std::string lower(text);
  absl::AsciiStrToLower(&lower);
  return lower;
}

}  // namespace

// Pages through the conversations newest first (List's order) and stops as
// soon as `limit` matches are found, so a prefix matching many ids costs one
// page. `total` is given only when known without reading further: for an
// empty prefix (every conversation matches: the store's count) or when the
// whole listing was read. A store error or a cancelled request ends the
// listing early with what was found (a completion is a hint; it has no
// error form in MCP), total then unknown.
mcp::Completions CompleteConversationId(std::string_view prefix, size_t limit,
                                        mcp::RequestContext& context) {
  mcp::Completions result;
  if (limit == 0) return result;
  const std::string wanted = LowerAscii(prefix);
  ConversationStore& conversations = *context.services().conversations;
  // Large pages: only ids are looked at, and most prefixes need a scan.
  constexpr uint32_t kPageSize = ConversationLimits::kMaxListLimit;
  std::string cursor;
  size_t matches = 0;
  while (true) {
    if (context.Cancelled()) return result;
    auto page = conversations.List(kPageSize, cursor);
    if (!page.ok()) {
      result.total.reset();
      return result;
    }
    if (wanted.empty() && cursor.empty()) result.total = page->total;
    for (const Conversation& c : page->conversations) {
      if (!std::string_view(c.id).starts_with(wanted)) continue;
      ++matches;
      if (result.values.size() < limit) {
        result.values.push_back(c.id);
      } else if (!wanted.empty()) {
        // More than `limit` match: the caller knows there are more; the
        // exact count would need the rest of the listing.
        return result;
      }
    }
    if (page->next_cursor.empty()) break;
    if (result.values.size() >= limit) return result;
    cursor = std::move(page->next_cursor);
  }
  result.total = matches;
  return result;
}

}  // namespace ctxkit::tools
