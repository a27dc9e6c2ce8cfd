#include "lib/references/analyzer.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "lib/unicode/unicode.h"

namespace ctxkit::internal {
namespace {

namespace uc = ::ctxkit::internal::unicode;

// Character kinds that matter for splitting words into parts.
enum class Kind { kSeparator, kUnderscore, kUpper, kLower, kOther };

struct Char {
  size_t begin;
  size_t end;
  Kind kind;
};

Kind Classify(char32_t cp) {
  if (cp < 0x80) {
    if (cp >= 'a' && cp <= 'z') return Kind::kLower;
    if (cp >= 'A' && cp <= 'Z') return Kind::kUpper;
    if (cp >= '0' && cp <= '9') return Kind::kOther;
    if (cp == '_') return Kind::kUnderscore;
    return Kind::kSeparator;
  }
  const uint32_t classes = uc::Classes(cp);
  if ((classes & (uc::kLu | uc::kLt)) != 0) return Kind::kUpper;
  if ((classes & uc::kLl) != 0) return Kind::kLower;
  if ((classes & (uc::kL | uc::kN | uc::kM)) != 0) return Kind::kOther;
  return Kind::kSeparator;
}

// Collects the lower-cased terms, for the index and for queries.
struct TermSink {
  std::vector<std::string>* terms;
  size_t count() const { return terms->size(); }
  void Add(std::string_view raw, size_t, size_t) {
    std::string term(raw);
    absl::AsciiStrToLower(&term);
    terms->push_back(std::move(term));
  }
};

// Reports where terms occur, for previews.
struct SpanSink {
  absl::FunctionRef<void(const TermSpan&)> fn;
  size_t added = 0;
  size_t count() const { return added; }
  void Add(std::string_view raw, size_t begin, size_t end) {
    ++added;
    fn(TermSpan{raw, begin, end});
  }
};

// Adds the term of text[begin, end): its bytes cut to kMaxTermBytes at a
// character boundary (lower-casing is the sink's), and the uncut span.
template <typename Sink>
void AppendTerm(std::string_view text, size_t begin, size_t end, Sink& sink) {
  size_t cut = end;
  if (end - begin > kMaxTermBytes) {
    cut = begin + kMaxTermBytes;
    // Back up over continuation bytes to the start of a character.
    while (cut > begin &&
           (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
      --cut;
    }
  }
  sink.Add(text.substr(begin, cut - begin), begin, end);
}

// Emits the terms of one word: chars[0..n) with no separators, trimmed of
// underscores at both ends.
template <typename Sink>
void EmitWord(std::string_view text, const std::vector<Char>& chars,
              Sink& terms) {
  size_t first = 0;
  size_t last = chars.size();
  while (first < last && chars[first].kind == Kind::kUnderscore) ++first;
  while (last > first && chars[last - 1].kind == Kind::kUnderscore) --last;
  if (first == last) return;

  const size_t before = terms.count();
  size_t part_begin = first;  // index into chars of the current part
  bool in_part = true;
  for (size_t i = first; i < last; ++i) {
    const Kind kind = chars[i].kind;
    if (kind == Kind::kUnderscore) {
      if (in_part && part_begin < i) {
        AppendTerm(text, chars[part_begin].begin, chars[i - 1].end, terms);
      }
      in_part = false;
      continue;
    }
    if (!in_part) {
      part_begin = i;
      in_part = true;
      continue;
    }
    if (i == part_begin) continue;
    const Kind prev = chars[i - 1].kind;
    const bool split =
        kind == Kind::kUpper && (prev == Kind::kLower || prev == Kind::kOther);
    if (kind == Kind::kLower && prev == Kind::kUpper && i >= 2 &&
        i - 1 > part_begin && chars[i - 2].kind == Kind::kUpper) {
      // "HTMLParser": the part "HTML" ends before the 'P'.
      AppendTerm(text, chars[part_begin].begin, chars[i - 2].end, terms);
      part_begin = i - 1;
      continue;
    }
    if (split) {
      AppendTerm(text, chars[part_begin].begin, chars[i - 1].end, terms);
      part_begin = i;
    }
  }
  if (in_part) {
    AppendTerm(text, chars[part_begin].begin, chars[last - 1].end, terms);
  }
  if (terms.count() - before > 1) {
    AppendTerm(text, chars[first].begin, chars[last - 1].end, terms);
  }
}

template <typename Sink>
void Analyze(std::string_view text, Sink& terms) {
  std::vector<Char> word;
  size_t pos = 0;
  while (pos < text.size()) {
    const uc::Utf8Char c = uc::DecodeUtf8(text, pos);
    const Kind kind = Classify(c.code_point);
    if (kind == Kind::kSeparator) {
      if (!word.empty()) {
        EmitWord(text, word, terms);
        word.clear();
      }
    } else {
      word.push_back({pos, pos + c.length, kind});
    }
    pos += c.length;
  }
  if (!word.empty()) EmitWord(text, word, terms);
}

}  // namespace

void AnalyzeText(std::string_view text, std::vector<std::string>* terms) {
  TermSink sink{terms};
  Analyze(text, sink);
}

void ForEachTermSpan(std::string_view text,
                     absl::FunctionRef<void(const TermSpan&)> fn) {
  SpanSink sink{fn};
  Analyze(text, sink);
}

}  // namespace ctxkit::internal
