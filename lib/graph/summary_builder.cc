#include "lib/graph/summary_builder.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ctxkit/classifier.h"
#include "lib/base/absl_string_view.h"
#include "lib/compactor/chat_history.h"
#include "lib/compactor/summary_text.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {
namespace {

// The seed cut each recent query and response to 100 characters.
constexpr size_t kRecentItemBytes = 100;
constexpr size_t kRecentItems = 3;
// The seed's rule: an insight is a sentence of more than 10 characters.
constexpr size_t kMinInsightBytes = 11;

bool IsHigh(Importance importance) {
  return importance == Importance::kHigh || importance == Importance::kCritical;
}

// "a | b | c" of the last kRecentItems non-empty texts of `role`.
std::string RecentLine(std::string_view label,
                       const std::vector<SummarySource>& window,
                       MessageRole role) {
  std::vector<std::string> items;
  for (auto it = window.rbegin();
       it != window.rend() && items.size() < kRecentItems; ++it) {
    if (it->role != role) continue;
    std::string item = MakeItem(it->content, kRecentItemBytes);
    if (!item.empty()) items.push_back(std::move(item));
  }
  if (items.empty()) return {};
  std::reverse(items.begin(), items.end());
  std::string line = std::string(label) + ": ";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) line += " | ";
    line += items[i];
  }
  return line;
}

bool IsLanguageChar(char c) { return IsWordChar(c) || c == '-'; }

// `code` without leading and trailing blank lines (spaces kept inside a
// line: indentation is part of the code).
std::string_view TrimBlankLines(std::string_view code) {
  size_t begin = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] == '\n') {
      begin = i + 1;
    } else if (!IsAsciiSpace(code[i])) {
      break;
    }
  }
  size_t end = code.size();
  while (end > begin &&
         (code[end - 1] == '\n' || IsAsciiSpace(code[end - 1]))) {
    --end;
  }
  return code.substr(begin, end - begin);
}

}  // namespace

std::vector<CodeBlock> FindCodeBlocks(std::string_view text,
                                      double importance) {
  std::vector<CodeBlock> blocks;
  constexpr std::string_view kFence = "```";
  size_t pos = 0;
  while (true) {
    const size_t open = text.find(kFence, pos);
    if (open == std::string_view::npos) break;
    size_t body = open + kFence.size();
    std::string_view language;
    size_t word = body;
    while (word < text.size() && IsLanguageChar(text[word])) ++word;
    if (word > body && word < text.size() && text[word] == '\n') {
      language = text.substr(body, word - body);
      body = word + 1;
    }
    const size_t close = text.find(kFence, body);
    if (close == std::string_view::npos) break;
    CodeBlock& b = blocks.emplace_back();
    b.language = std::string(language);
    b.code =
        std::string(CutUtf8(TrimBlankLines(text.substr(body, close - body)),
                            ContextGraphLimits::kMaxCodeBlockBytes));
    b.importance = importance;
    pos = close + kFence.size();
  }
  return blocks;
}

std::vector<std::string> QuestionSentences(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      start = i + 1;
      continue;
    }
    if (c != '!' && c != '?') continue;
    size_t end = i + 1;
    while (end < text.size() && (text[end] == '!' || text[end] == '?')) ++end;
    std::string sentence =
        MakeItem(text.substr(start, end - start), kMaxDigestItemBytes);
    if (sentence.size() >= kMinInsightBytes) out.push_back(std::move(sentence));
    start = end;
    i = end - 1;
  }
  return out;
}

ExtractedSummary ExtractSummary(
    const std::vector<SummarySource>& window, uint64_t total_messages,
    const std::vector<CodeBlock>& previous_blocks,
    const std::vector<std::string>& previous_insights) {
  ExtractedSummary out;
  out.header = absl::StrCat("This context contains ", total_messages,
                            total_messages == 1 ? " message" : " messages");
  if (window.size() < total_messages) {
    absl::StrAppend(&out.header, "; the newest ", window.size(), " were read");
  }
  out.header += ".";

  const std::shared_ptr<const Classifier> classifier = Classifier::Default();
  SpanDigester digester;
  size_t high = 0;
  std::vector<CodeBlock> blocks;
  std::vector<std::string> questions;  // oldest first
  for (size_t i = 0; i < window.size(); ++i) {
    const SummarySource& m = window[i];
    ChatMessage chat;
    chat.index = i;
    chat.role = MessageRoleName(m.role);
    chat.text = std::string(m.content);
    chat.json = TextMessageJson(chat.role, m.content);
    chat.own_text_bytes = m.content.size();
    MessageFacts facts;
    facts.index = i;
    facts.role = chat.role;
    facts.text = m.content;
    digester.Add(chat, classifier->Classify(facts).tier);
    if (IsHigh(m.importance)) ++high;
    for (CodeBlock& b :
         FindCodeBlocks(m.content, ImportanceValue(m.importance))) {
      blocks.push_back(std::move(b));
    }
    if (m.role == MessageRole::kUser) {
      for (std::string& q : QuestionSentences(m.content)) {
        questions.push_back(std::move(q));
      }
    }
  }
  out.digest = digester.digest();
  out.recent_queries =
      RecentLine("Recent user queries", window, MessageRole::kUser);
  out.recent_responses =
      RecentLine("Recent assistant responses", window, MessageRole::kAssistant);
  if (!window.empty()) {
    out.importance_score =
        std::min(0.5 + 0.5 * static_cast<double>(high) /
                           static_cast<double>(window.size()),
                 1.0);
  }

  // The newest blocks, in message order; the previous summary's fill what
  // room is left, before them (they are older).
  const size_t max_blocks = ContextGraphLimits::kMaxSummaryCodeBlocks;
  if (blocks.size() > max_blocks) {
    blocks.erase(blocks.begin(), blocks.end() - max_blocks);
  }
  std::vector<CodeBlock> carried;
  for (auto it = previous_blocks.rbegin();
       it != previous_blocks.rend() &&
       carried.size() + blocks.size() < max_blocks;
       ++it) {
    const bool repeated =
        std::any_of(blocks.begin(), blocks.end(), [&](const CodeBlock& b) {
          return b.language == it->language && b.code == it->code;
        });
    if (!repeated) carried.push_back(*it);
  }
  std::reverse(carried.begin(), carried.end());
  out.code_blocks = std::move(carried);
  for (CodeBlock& b : blocks) out.code_blocks.push_back(std::move(b));

  // Errors first (what the next turn needs most), then decisions, then the
  // seed's questions, each newest first; the previous insights last.
  absl::flat_hash_set<std::string> seen;
  auto add = [&](const std::string& item) {
    if (out.key_insights.size() < ContextGraphLimits::kMaxKeyInsights &&
        !item.empty() && seen.insert(item).second) {
      out.key_insights.push_back(item);
    }
  };
  for (auto it = out.digest.errors.rbegin(); it != out.digest.errors.rend();
       ++it) {
    add(*it);
  }
  for (auto it = out.digest.decisions.rbegin();
       it != out.digest.decisions.rend(); ++it) {
    add(*it);
  }
  for (auto it = questions.rbegin(); it != questions.rend(); ++it) add(*it);
  for (const std::string& k : previous_insights) add(k);
  return out;
}

absl::StatusOr<std::string> BuildSummaryText(
    const ExtractedSummary& summary, uint64_t max_tokens,
    absl::FunctionRef<absl::StatusOr<uint64_t>(std::string_view)> count) {
  auto fits = [&](std::string_view text) -> absl::StatusOr<bool> {
    CTXKIT_ASSIGN_OR_RETURN(uint64_t tokens, count(text));
    return tokens <= max_tokens;
  };
  std::string text = summary.header;
  CTXKIT_ASSIGN_OR_RETURN(bool header_fits, fits(text));
  if (!header_fits) {
    // Only a tiny allowance gets here: the longest prefix that fits.
    size_t lo = 0, hi = text.size();
    while (lo < hi) {
      const size_t mid = (lo + hi + 1) / 2;
      CTXKIT_ASSIGN_OR_RETURN(bool ok, fits(CutUtf8(text, mid)));
      if (ok) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return std::string(CutUtf8(text, lo));
  }
  // The most facts that fit: SummaryFacts keeps the most important first,
  // so the text grows with `keep`, and a binary search finds the largest.
  size_t lo = 0, hi = SummaryItemCount(summary.digest, /*enhanced=*/true);
  auto with_facts = [&](size_t keep) {
    const std::string facts =
        SummaryFacts(summary.digest, /*enhanced=*/true, keep);
    return facts.empty() ? text : absl::StrCat(text, "\n", facts, ".");
  };
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    CTXKIT_ASSIGN_OR_RETURN(bool ok, fits(with_facts(mid)));
    if (ok) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  text = with_facts(lo);
  for (const std::string* line :
       {&summary.recent_queries, &summary.recent_responses}) {
    if (line->empty()) continue;
    std::string longer = absl::StrCat(text, "\n", *line);
    CTXKIT_ASSIGN_OR_RETURN(bool ok, fits(longer));
    if (ok) text = std::move(longer);
  }
  return text;
}

}  // namespace ctxkit::internal
