#include "lib/optimizer/token_context.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace ctxkit::internal {

bool IsSpaceToken(const TextToken& t) {
  return t.kind == TextTokenKind::kSpace;
}
bool HasNewline(const TextToken& t) {
  return t.kind == TextTokenKind::kSpace &&
         t.text.find('\n') != std::string::npos;
}
bool IsBlank(const TextToken& t) {
  return t.kind == TextTokenKind::kSpace &&
         std::count(t.text.begin(), t.text.end(), '\n') >= 2;
}
bool IsPunct(const TextToken* t, std::string_view set) {
  if (t == nullptr || t->kind != TextTokenKind::kPunct) return false;
  if (t->text == "\xE2\x80\xA6") return set.find('.') != std::string_view::npos;
  return t->text.size() == 1 && set.find(t->text[0]) != std::string_view::npos;
}
bool IsBullet(const TextToken* t) {
  return t != nullptr && t->kind == TextTokenKind::kWord &&
         (t->text == "-" || t->text == "*" || t->text == "+" ||
          t->text == ">" || t->text == "\xE2\x80\xA2");
}

Behind BehindOf(const std::vector<TextToken>& v, size_t end) {
  Behind b;
  size_t k = end;
  while (k > 0 && IsSpaceToken(v[k - 1])) {
    if (HasNewline(v[k - 1])) b.newline = true;
    --k;
  }
  if (k > 0) b.prev = &v[k - 1];
  return b;
}
bool ClauseStart(const Behind& b) {
  return b.prev == nullptr || b.newline || IsPunct(b.prev, ".!?,;:([{") ||
         IsBullet(b.prev);
}
bool SentenceStart(const Behind& b) {
  return b.prev == nullptr || b.newline || IsPunct(b.prev, ".!?:") ||
         IsBullet(b.prev);
}
const TextToken* PrevWord(const Behind& b) {
  if (b.prev == nullptr || b.newline || b.prev->kind != TextTokenKind::kWord) {
    return nullptr;
  }
  return b.prev;
}

Ahead AheadOf(const std::vector<TextToken>& v, size_t end) {
  Ahead a;
  size_t k = end;
  if (k < v.size() && IsSpaceToken(v[k])) {
    a.newline = HasNewline(v[k]);
    ++k;
  }
  if (k < v.size()) a.next = &v[k];
  return a;
}
bool ClauseEnd(const Ahead& a) {
  return a.next == nullptr || a.newline || IsPunct(a.next, ",;:.!?)]}");
}

bool IsNegation(std::string_view key) {
  static constexpr std::string_view kNegations[] = {
      "not",  "no",     "never",   "cannot",  "without", "nor",
      "none", "nobody", "nothing", "neither", "hardly",  "nowhere"};
  if (key.size() > 3 && key.substr(key.size() - 3) == "n't") return true;
  return std::find(std::begin(kNegations), std::end(kNegations), key) !=
         std::end(kNegations);
}

bool IsConstraint(std::string_view key) {
  // Conditions, restrictions, bounds and obligations.
  static constexpr std::string_view kLimits[] = {
      "if",     "unless",   "except",      "until",  "provided", "whether",
      "when",   "whenever", "before",      "after",  "only",     "just",
      "merely", "solely",   "exclusively", "simply", "exactly",  "least",
      "most",   "instead",  "avoid",       "must",   "always"};
  return IsNegation(key) || std::find(std::begin(kLimits), std::end(kLimits),
                                      key) != std::end(kLimits);
}

std::string CapitalizeFirst(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') {
    s[0] = static_cast<char>(s[0] - 'a' + 'A');
  }
  return s;
}

}  // namespace ctxkit::internal
