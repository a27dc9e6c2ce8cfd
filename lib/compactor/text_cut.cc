#include "lib/compactor/text_cut.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/tokenizer.h"
#include "lib/compactor/ascii.h"
#include "lib/compactor/error_lines.h"
#include "lib/status/status_macros.h"
#include "lib/tokenizer/tokenizer_internal.h"

namespace ctxkit::internal {
namespace {

// A side splits a line only when the line alone would take more than this
// share of the allowance; smaller lines are kept whole or not at all.
constexpr int64_t kSplitLineDivisor = 2;
// A partial line shorter than this says nothing.
constexpr int64_t kMinPartialTokens = 12;
// A floor is never below this (when the text is longer): a must-keep
// message is never reduced to a bare marker.
constexpr int64_t kMinFloorTokens = 32;
// Error lines a log's floor keeps, newest first.
constexpr size_t kMaxFloorErrorLines = 8;

bool IsUtf8Continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

std::string Marker(int64_t lines, int64_t tokens) {
  if (lines == 0)
    return absl::StrFormat("[... ctxkit cut %d tokens ...]", tokens);
  return absl::StrFormat("[... ctxkit cut %d line%s (%d tokens) ...]", lines,
                         lines == 1 ? "" : "s", tokens);
}

// The longest suffix of `text` of at most `max_tokens` tokens, starting at
// a character boundary. Only the last max_tokens * 32 bytes are searched:
// no token is longer.
absl::StatusOr<std::string_view> FitSuffix(MessageCounter& counter,
                                           std::string_view text,
                                           int64_t max_tokens) {
  if (max_tokens <= 0) return std::string_view();
  const size_t window = static_cast<size_t>(max_tokens) * 32 + 64;
  size_t lo = text.size() > window ? text.size() - window : 0;  // may not fit
  size_t hi = text.size();                                      // fits
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    while (mid < hi && mid > 0 && IsUtf8Continuation(text[mid])) ++mid;
    if (mid >= hi) break;
    absl::StatusOr<int64_t> n = counter.Text(text.substr(mid));
    if (!n.ok()) return n.status();
    if (*n <= max_tokens) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  while (hi < text.size() && IsUtf8Continuation(text[hi])) ++hi;
  return text.substr(hi);
}

}  // namespace

int64_t FloorCap(TextKind kind) {
  switch (kind) {
    case TextKind::kInstructions:
    case TextKind::kRequest:
      return 192;
    case TextKind::kOutput:
      return 128;
    case TextKind::kProse:
      return 64;
  }
  return 64;
}

absl::StatusOr<std::string> FitPrefix(MessageCounter& counter,
                                      std::string_view text,
                                      int64_t max_tokens) {
  if (max_tokens <= 0) return std::string();
  if (const Tokenizer* tokenizer = counter.tokenizer()) {
    EncodeOptions ordinary;
    ordinary.allowed_special = SpecialTokenSet::None();
    ordinary.disallowed_special = SpecialTokenSet::None();
    CTXKIT_ASSIGN_OR_RETURN(
        Truncation cut,
        TokenizerTruncate(*tokenizer, text, static_cast<size_t>(max_tokens),
                          ordinary));
    return std::string(cut.text);
  }
  // The estimate grows with the prefix: bisect on character boundaries.
  size_t lo = 0;            // fits
  size_t hi = text.size();  // the largest candidate
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    while (mid > lo && mid < text.size() && IsUtf8Continuation(text[mid])) {
      --mid;
    }
    if (mid == lo) break;
    absl::StatusOr<int64_t> n = counter.Text(text.substr(0, mid));
    if (!n.ok()) return n.status();
    if (*n <= max_tokens) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return std::string(text.substr(0, lo));
}

absl::StatusOr<TextCutter> TextCutter::Make(MessageCounter& counter,
                                            std::string_view text,
                                            TextKind kind) {
  TextCutter cutter(counter, text);
  if (absl::Status s = cutter.Split(); !s.ok()) return s;
  cutter.Protect(kind);
  return cutter;
}

absl::Status TextCutter::Split() {
  absl::StatusOr<int64_t> total = counter_->Text(text_);
  if (!total.ok()) return total.status();
  tokens_ = *total;
  absl::StatusOr<int64_t> marker =
      counter_->Text("\n" + Marker(999, 99999) + "\n");
  if (!marker.ok()) return marker.status();
  marker_tokens_ = *marker;
  size_t begin = 0;
  while (true) {
    const size_t end = text_.find('\n', begin);
    Line line;
    line.text = text_.substr(begin, end == std::string_view::npos
                                        ? std::string_view::npos
                                        : end - begin);
    absl::StatusOr<int64_t> n = counter_->Text(line.text);
    if (!n.ok()) return n.status();
    line.tokens = *n + (end == std::string_view::npos ? 0 : 1);
    lines_.push_back(line);
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return absl::OkStatus();
}

void TextCutter::Protect(TextKind kind) {
  const size_t n = lines_.size();
  // Paragraphs: runs of non-blank lines, from `from` on.
  auto paragraph_at = [&](size_t from) -> std::pair<size_t, size_t> {
    size_t b = from;
    while (b < n && IsBlank(lines_[b].text)) ++b;
    size_t e = b;
    while (e < n && !IsBlank(lines_[e].text)) ++e;
    return {b, e};
  };
  auto last_paragraph = [&]() -> std::pair<size_t, size_t> {
    size_t e = n;
    while (e > 0 && IsBlank(lines_[e - 1].text)) --e;
    size_t b = e;
    while (b > 0 && !IsBlank(lines_[b - 1].text)) --b;
    return {b, e};
  };
  std::vector<std::pair<size_t, size_t>> ranges;
  auto add = [&](std::pair<size_t, size_t> r) {
    if (r.first >= r.second) return;
    for (const auto& existing : ranges) {
      if (existing == r) return;
    }
    ranges.push_back(r);
  };
  auto add_errors = [&](size_t from) {
    // Newest first: the last error is the one the next turn acts on.
    size_t taken = 0;
    for (size_t i = n; i-- > from && taken < kMaxFloorErrorLines;) {
      if (IsErrorLine(lines_[i].text)) {
        add({i, i + 1});
        ++taken;
      }
    }
  };
  auto add_traceback = [&]() {
    // The last traceback: its exception line, then its last frame.
    for (size_t i = n; i-- > 0;) {
      if (lines_[i].text.find("Traceback (most recent call last)") ==
          std::string_view::npos) {
        continue;
      }
      size_t last_frame = n;
      size_t k = i + 1;
      for (; k < n; ++k) {
        const std::string_view t = lines_[k].text;
        if (t.find("File \"") != std::string_view::npos &&
            (t[0] == ' ' || t[0] == '\t')) {
          last_frame = k;
        } else if (IsExceptionLine(t)) {
          break;
        }
      }
      if (k < n) add({k, k + 1});
      if (last_frame < n) add({last_frame, std::min(n, last_frame + 2)});
      return;
    }
  };

  switch (kind) {
    case TextKind::kInstructions:
      head_heavy_ = true;
      add(paragraph_at(0));
      add(last_paragraph());
      break;
    case TextKind::kRequest: {
      head_heavy_ = true;
      size_t start = 0;
      for (size_t i = 0; i < n; ++i) {
        if (ContainsNoCase(lines_[i].text, "end of demonstration"))
          start = i + 1;
      }
      add(paragraph_at(start));
      add_traceback();
      for (size_t i = start; i < n; ++i) {
        if (lines_[i].text.substr(0, 3) != "```") continue;
        size_t e = i + 1;
        while (e < n && lines_[e].text.substr(0, 3) != "```") ++e;
        add({i, std::min(n, e + 1)});
        i = e;
      }
      add_errors(start);
      break;
    }
    case TextKind::kOutput: {
      head_heavy_ = false;
      add_traceback();
      add_errors(0);
      size_t last = n;
      while (last > 0 && IsBlank(lines_[last - 1].text)) --last;
      if (last > 0) add({last - 1, last});
      break;
    }
    case TextKind::kProse:
      head_heavy_ = true;
      add(paragraph_at(0));
      break;
  }

  // Cap the floor: ranges in priority order, each cut to the lines that
  // still fit under the cap, and the start of the next line when that line
  // alone is longer than the cap (a first paragraph keeps its first lines,
  // or the head of its one long line; an ordinary line is never split).
  const int64_t cap = FloorCap(kind);
  int64_t protected_tokens = 0;
  for (const auto& [b, e] : ranges) {
    Protected p{b, b, 0};
    while (p.end < e && protected_tokens + lines_[p.end].tokens <= cap) {
      protected_tokens += lines_[p.end].tokens;
      ++p.end;
    }
    if (p.end < e && lines_[p.end].tokens > cap &&
        cap - protected_tokens >= kMinPartialTokens) {
      p.head_tokens = cap - protected_tokens;
      protected_tokens = cap;
    }
    if (p.end > p.begin || p.head_tokens > 0) protected_.push_back(p);
    if (protected_tokens >= cap) break;
  }
  // The gaps a cut to the floor leaves: before, between and after the
  // protected lines (a line kept only in part leaves one after it).
  std::vector<std::pair<size_t, size_t>> spans;
  for (const Protected& p : protected_) {
    spans.emplace_back(p.begin, p.end + (p.head_tokens > 0 ? 1 : 0));
  }
  std::sort(spans.begin(), spans.end());
  int64_t gaps = 0;
  size_t next = 0;
  for (const auto& [b, e] : spans) {
    if (b > next) ++gaps;
    next = std::max(next, e);
  }
  for (const Protected& p : protected_) gaps += p.head_tokens > 0 ? 1 : 0;
  if (next < lines_.size() || gaps == 0) ++gaps;
  floor_tokens_ =
      std::max(protected_tokens, kMinFloorTokens) + gaps * marker_tokens_;
  floor_tokens_ = std::min(floor_tokens_, tokens_);
}

absl::StatusOr<std::string> TextCutter::Attempt(int64_t budget) {
  const size_t n = lines_.size();
  std::vector<char> kept(n, 0);  // 1: whole; 2: its prefix below
  std::vector<std::string> prefix(n);
  int64_t used = 0;
  // 1. The floor's whole lines, in priority order; the room its long lines
  //    will take is set aside.
  int64_t set_aside = 0;
  for (const Protected& p : protected_) {
    size_t i = p.begin;
    for (; i < p.end; ++i) {
      if (kept[i]) continue;
      if (used + lines_[i].tokens > budget) break;
      kept[i] = 1;
      used += lines_[i].tokens;
    }
    if (i == p.end && p.head_tokens > 0) set_aside += p.head_tokens;
  }
  set_aside = std::min(set_aside, std::max<int64_t>(budget - used, 0));
  // 2. The head and the tail, whole lines, in their shares.
  const int64_t head_weight = head_heavy_ ? 2 : 1;
  const int64_t tail_weight = head_heavy_ ? 1 : 2;
  const int64_t fill_budget = budget - set_aside;
  int64_t head_used = 0;
  int64_t tail_used = 0;
  size_t h = 0;
  size_t t = n;  // one past the tail candidate
  bool head_open = true;
  bool tail_open = true;
  while (head_open || tail_open) {
    while (h < n && kept[h]) ++h;
    while (t > 0 && kept[t - 1]) --t;
    if (h >= t) break;
    const bool head = head_open && (!tail_open || head_used * tail_weight <=
                                                      tail_used * head_weight);
    const size_t i = head ? h : t - 1;
    if (used + lines_[i].tokens > fill_budget) {
      (head ? head_open : tail_open) = false;
      continue;
    }
    kept[i] = 1;
    used += lines_[i].tokens;
    (head ? head_used : tail_used) += lines_[i].tokens;
  }
  while (h < n && kept[h]) ++h;
  while (t > 0 && kept[t - 1]) --t;

  // 3. Giant lines at the edges of the gap (the floor's long lines among
  //    them): a prefix on the head side and a suffix on the tail side,
  //    rather than nothing.
  std::string head_part;
  std::string_view tail_part;
  size_t head_line = n;
  size_t tail_line = n;
  const int64_t room = budget - used;
  if (h < t && room >= kMinPartialTokens) {
    const int64_t head_room = room * head_weight / (head_weight + tail_weight);
    const int64_t tail_room = room - head_room;
    const int64_t giant = std::max<int64_t>(budget / kSplitLineDivisor, 1);
    if (lines_[h].tokens > giant && head_room >= kMinPartialTokens) {
      absl::StatusOr<std::string> p =
          FitPrefix(*counter_, lines_[h].text, head_room);
      if (!p.ok()) return p.status();
      head_part = *std::move(p);
      head_line = h;
      absl::StatusOr<int64_t> k = counter_->Text(head_part);
      if (!k.ok()) return k.status();
      used += *k;
    }
    if (lines_[t - 1].tokens > giant && tail_room >= kMinPartialTokens) {
      std::string_view line = lines_[t - 1].text;
      if (t - 1 == head_line) line = line.substr(head_part.size());
      absl::StatusOr<std::string_view> s =
          FitSuffix(*counter_, line, tail_room);
      if (!s.ok()) return s.status();
      tail_part = *s;
      tail_line = t - 1;
      absl::StatusOr<int64_t> k = counter_->Text(tail_part);
      if (!k.ok()) return k.status();
      used += *k;
    }
  }

  // 4. The floor's long lines that no edge reached: their prefix, in what
  //    is left.
  for (const Protected& p : protected_) {
    if (p.head_tokens == 0 || kept[p.end] || p.end == head_line ||
        p.end == tail_line) {
      continue;
    }
    bool whole = true;
    for (size_t i = p.begin; i < p.end; ++i) whole = whole && kept[i] == 1;
    const int64_t left = std::min(p.head_tokens, budget - used);
    if (!whole || left < kMinPartialTokens) continue;
    absl::StatusOr<std::string> head =
        FitPrefix(*counter_, lines_[p.end].text, left);
    if (!head.ok()) return head.status();
    if (head->empty()) continue;
    absl::StatusOr<int64_t> k = counter_->Text(*head);
    if (!k.ok()) return k.status();
    prefix[p.end] = *std::move(head);
    kept[p.end] = 2;
    used += *k;
  }

  std::string out;
  out.reserve(static_cast<size_t>(budget) * 4 + 64);
  int64_t gap_lines = 0;
  int64_t gap_tokens = 0;
  bool first = true;
  auto emit = [&](std::string_view piece) {
    if (!first) out += '\n';
    out.append(piece);
    first = false;
  };
  auto flush_gap = [&]() {
    if (gap_lines == 0 && gap_tokens == 0) return;
    emit(Marker(gap_lines, gap_tokens));
    gap_lines = 0;
    gap_tokens = 0;
  };
  for (size_t i = 0; i < n; ++i) {
    if (kept[i] == 1) {
      flush_gap();
      emit(lines_[i].text);
      continue;
    }
    if (kept[i] == 2) {
      flush_gap();
      emit(prefix[i]);
      absl::StatusOr<int64_t> k = counter_->Text(prefix[i]);
      if (!k.ok()) return k.status();
      gap_tokens += std::max<int64_t>(lines_[i].tokens - *k, 1);
      continue;
    }
    const bool has_head = i == head_line && !head_part.empty();
    const bool has_tail = i == tail_line && !tail_part.empty();
    if (!has_head && !has_tail) {
      ++gap_lines;
      gap_tokens += lines_[i].tokens;
      continue;
    }
    // A split line: what it keeps, and the tokens of what it loses.
    int64_t kept_tokens = 0;
    if (has_head) {
      flush_gap();
      emit(head_part);
      absl::StatusOr<int64_t> k = counter_->Text(head_part);
      if (!k.ok()) return k.status();
      kept_tokens += *k;
    }
    if (has_tail) {
      absl::StatusOr<int64_t> k = counter_->Text(tail_part);
      if (!k.ok()) return k.status();
      kept_tokens += *k;
    }
    gap_tokens += std::max<int64_t>(lines_[i].tokens - kept_tokens, 1);
    if (has_tail) {
      flush_gap();
      emit(tail_part);
    }
  }
  flush_gap();
  return out;
}

absl::StatusOr<std::string> TextCutter::Cut(int64_t keep) {
  if (keep >= tokens_) return std::string(text_);
  if (keep <= marker_tokens_) {
    // No room for any text: the marker alone, when it fits.
    std::string marker = Marker(static_cast<int64_t>(lines_.size()), tokens_);
    absl::StatusOr<int64_t> n = counter_->Text(marker);
    if (!n.ok()) return n.status();
    return *n <= keep ? marker : std::string();
  }
  int64_t budget = keep - marker_tokens_;
  for (int attempt = 0; attempt < 8 && budget > 0; ++attempt) {
    absl::StatusOr<std::string> text = Attempt(budget);
    if (!text.ok()) return text.status();
    absl::StatusOr<int64_t> n = counter_->Text(*text);
    if (!n.ok()) return n.status();
    if (*n <= keep) return text;
    budget -= (*n - keep) + 1 + attempt * 4;
  }
  std::string marker = Marker(static_cast<int64_t>(lines_.size()), tokens_);
  absl::StatusOr<int64_t> n = counter_->Text(marker);
  if (!n.ok()) return n.status();
  return *n <= keep ? marker : std::string();
}

}  // namespace ctxkit::internal
