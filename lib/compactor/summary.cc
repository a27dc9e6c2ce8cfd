// Extractive span digests: one pass over each message's text (bounded
// windows), split into lines, whitespace-separated chunks and ASCII words,
// with every rule a constant-time check on a line, chunk or word. No regular
// expressions: a span of 1.5 MB digests in a few milliseconds.

#include "lib/compactor/summary.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "lib/json/utf8.h"

namespace ctxkit::internal {
namespace {

// Errors taken from one message: an editor's refusal often comes with the
// linter line that explains it.
constexpr int kErrorsPerMessage = 2;

constexpr size_t kHeadScanBytes = 32 * 1024;
constexpr size_t kTailScanBytes = 8 * 1024;
constexpr size_t kArgumentsScanBytes = 32 * 1024;
// Names, paths, URLs and identifiers are shorter than free text; the short
// form of a call's arguments shorter still, so an action stays one glance.
constexpr size_t kMaxNameBytes = 80;
constexpr size_t kMaxShortArgsBytes = 60;
constexpr size_t kMaxWordBytes = 64;

// ---------------------------------------------------------------------------
// Text helpers

enum CharClass : uint8_t { kOther = 0, kSpace = 1, kWord = 2 };
constexpr std::array<uint8_t, 256> MakeCharClasses() {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
      classes[c] = kSpace;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               (c >= '0' && c <= '9') || c == '_') {
      classes[c] = kWord;
    }
  }
  return classes;
}
constexpr std::array<uint8_t, 256> kCharClasses = MakeCharClasses();

bool IsAsciiSpace(char c) {
  return kCharClasses[static_cast<unsigned char>(c)] == kSpace;
}
bool IsWordChar(char c) {
  return kCharClasses[static_cast<unsigned char>(c)] == kWord;
}
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return IsLower(c) || IsUpper(c); }
char ToLower(char c) { return IsUpper(c) ? static_cast<char>(c + 32) : c; }

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}
// ASCII case-insensitive; `lower_prefix` is lowercase.
bool StartsWithNoCase(std::string_view s, std::string_view lower_prefix) {
  if (s.size() < lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (ToLower(s[i]) != lower_prefix[i]) return false;
  }
  return true;
}
bool EqualsNoCase(std::string_view s, std::string_view lower) {
  return s.size() == lower.size() && StartsWithNoCase(s, lower);
}
bool IsAllUpper(std::string_view s) {
  for (char c : s) {
    if (!IsUpper(c)) return false;
  }
  return true;
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && (IsAsciiSpace(s.front()) || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (IsAsciiSpace(s.back()) || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// The longest prefix of `s` of at most `max` bytes that does not split a
// UTF-8 sequence (for valid UTF-8 input).
std::string_view CutUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// `raw` as one display item: control characters and runs of whitespace
// become one space, trimmed, at most `max` bytes (cut at a UTF-8 boundary,
// then "..." so the reader sees the cut).
std::string MakeItem(std::string_view raw, size_t max) {
  std::string out;
  out.reserve(std::min(raw.size(), max + 4));
  bool pending_space = false;
  for (char c : raw) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F || c == ' ') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
    if (out.size() > max + 4) break;  // enough to know it must be cut
  }
  if (out.size() > max) {
    out.resize(CutUtf8(out, max - 3).size());
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "...";
  }
  return out;
}

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  for (const std::string& existing : list) {
    if (existing == item) return true;
  }
  return false;
}

void AddUnique(std::vector<std::string>& list, size_t cap, std::string item) {
  if (item.empty() || list.size() >= cap || Contains(list, item)) return;
  list.push_back(std::move(item));
}

constexpr std::string_view kEditedPrefix = "edited ";

// Actions keep first-seen order, but an edit may take the place of the
// oldest "called" entry: which files changed matters more than which tools
// ran.
void AddAction(std::vector<std::string>& actions, std::string item) {
  if (item.empty() || Contains(actions, item)) return;
  if (actions.size() < kMaxDigestLineItems) {
    actions.push_back(std::move(item));
    return;
  }
  if (!StartsWith(item, kEditedPrefix)) return;
  for (auto it = actions.begin(); it != actions.end(); ++it) {
    if (!StartsWith(*it, kEditedPrefix)) {
      actions.erase(it);
      actions.push_back(std::move(item));
      return;
    }
  }
}

// ---------------------------------------------------------------------------
// Topics

enum Topic : uint8_t {
  kDatabaseQueries,
  kSchema,
  kTesting,
  kDebugging,
  kVersionControl,
  kDependencies,
  kCodeChanges,
  kPerformance,
  kDeployment,
  kApis,
  kReadingCode,
  kConfiguration,
  kSecurity,
  kDocumentation,
  kTopicCount,
};

constexpr std::array<std::string_view, kTopicCount> kTopicNames = {
    "database queries", "schema",        "testing",      "debugging",
    "version control",  "dependencies",  "code changes", "performance",
    "deployment",       "APIs",          "reading code", "configuration",
    "security",         "documentation",
};

struct Keyword {
  std::string_view word;  // lowercase
  Topic topic;
};

// Words that name a topic wherever they appear (case-insensitive). Words
// common in prose with another sense ("open", "index", "explain", "table")
// are left out or count only in capitals (kSqlWords).
constexpr Keyword kKeywords[] = {
    {"sql", kDatabaseQueries},
    {"query", kDatabaseQueries},
    {"queries", kDatabaseQueries},
    {"database", kDatabaseQueries},
    {"databases", kDatabaseQueries},
    {"postgres", kDatabaseQueries},
    {"postgresql", kDatabaseQueries},
    {"mysql", kDatabaseQueries},
    {"sqlite", kDatabaseQueries},
    {"psql", kDatabaseQueries},
    {"rows", kDatabaseQueries},
    {"schema", kSchema},
    {"schemas", kSchema},
    {"ddl", kSchema},
    {"column", kSchema},
    {"columns", kSchema},
    {"migration", kSchema},
    {"migrations", kSchema},
    {"constraint", kSchema},
    {"constraints", kSchema},
    {"test", kTesting},
    {"tests", kTesting},
    {"testing", kTesting},
    {"pytest", kTesting},
    {"unittest", kTesting},
    {"assert", kTesting},
    {"assertion", kTesting},
    {"jest", kTesting},
    {"mocha", kTesting},
    {"ctest", kTesting},
    {"error", kDebugging},
    {"errors", kDebugging},
    {"traceback", kDebugging},
    {"exception", kDebugging},
    {"exceptions", kDebugging},
    {"bug", kDebugging},
    {"bugs", kDebugging},
    {"debug", kDebugging},
    {"debugging", kDebugging},
    {"crash", kDebugging},
    {"segfault", kDebugging},
    {"stacktrace", kDebugging},
    {"git", kVersionControl},
    {"commit", kVersionControl},
    {"commits", kVersionControl},
    {"branch", kVersionControl},
    {"rebase", kVersionControl},
    {"checkout", kVersionControl},
    {"github", kVersionControl},
    {"stash", kVersionControl},
    {"pip", kDependencies},
    {"npm", kDependencies},
    {"yarn", kDependencies},
    {"install", kDependencies},
    {"installed", kDependencies},
    {"installing", kDependencies},
    {"requirements", kDependencies},
    {"dependency", kDependencies},
    {"dependencies", kDependencies},
    {"package", kDependencies},
    {"packages", kDependencies},
    {"conda", kDependencies},
    {"cargo", kDependencies},
    {"poetry", kDependencies},
    {"edit", kCodeChanges},
    {"edits", kCodeChanges},
    {"edited", kCodeChanges},
    {"diff", kCodeChanges},
    {"patch", kCodeChanges},
    {"refactor", kCodeChanges},
    {"refactoring", kCodeChanges},
    {"str_replace", kCodeChanges},
    {"str_replace_editor", kCodeChanges},
    {"apply_patch", kCodeChanges},
    {"write_file", kCodeChanges},
    {"performance", kPerformance},
    {"latency", kPerformance},
    {"indexes", kPerformance},
    {"indices", kPerformance},
    {"slow", kPerformance},
    {"optimize", kPerformance},
    {"optimization", kPerformance},
    {"benchmark", kPerformance},
    {"throughput", kPerformance},
    {"profiling", kPerformance},
    {"docker", kDeployment},
    {"dockerfile", kDeployment},
    {"kubernetes", kDeployment},
    {"kubectl", kDeployment},
    {"deploy", kDeployment},
    {"deployment", kDeployment},
    {"deployed", kDeployment},
    {"helm", kDeployment},
    {"container", kDeployment},
    {"containers", kDeployment},
    {"http", kApis},
    {"https", kApis},
    {"api", kApis},
    {"apis", kApis},
    {"endpoint", kApis},
    {"endpoints", kApis},
    {"rest", kApis},
    {"graphql", kApis},
    {"curl", kApis},
    {"webhook", kApis},
    {"find_file", kReadingCode},
    {"search_file", kReadingCode},
    {"search_dir", kReadingCode},
    {"read_file", kReadingCode},
    {"view_file", kReadingCode},
    {"grep", kReadingCode},
    {"config", kConfiguration},
    {"configuration", kConfiguration},
    {"settings", kConfiguration},
    {"yaml", kConfiguration},
    {"toml", kConfiguration},
    {"dotenv", kConfiguration},
    {"auth", kSecurity},
    {"authentication", kSecurity},
    {"password", kSecurity},
    {"passwords", kSecurity},
    {"permission", kSecurity},
    {"permissions", kSecurity},
    {"security", kSecurity},
    {"vulnerability", kSecurity},
    {"encryption", kSecurity},
    {"tls", kSecurity},
    {"docs", kDocumentation},
    {"documentation", kDocumentation},
    {"readme", kDocumentation},
    {"docstring", kDocumentation},
    {"changelog", kDocumentation},
};

// Tool names that say what a tool does when its words do not.
constexpr Keyword kToolKeywords[] = {
    {"open", kReadingCode},         {"view", kReadingCode},
    {"cat", kReadingCode},          {"read", kReadingCode},
    {"ls", kReadingCode},           {"glob", kReadingCode},
    {"goto", kReadingCode},         {"scroll_up", kReadingCode},
    {"scroll_down", kReadingCode},  {"edit", kCodeChanges},
    {"write", kCodeChanges},        {"create", kCodeChanges},
    {"insert", kCodeChanges},       {"multiedit", kCodeChanges},
    {"notebookedit", kCodeChanges},
};

// SQL words: their topic counts only in capitals (in lowercase they are
// mostly prose), and they drive table extraction.
enum WordFlag : uint8_t {
  kUpperOnlyTopic = 1,  // the topic counts only when written in capitals
  kTableKeyword = 2,    // a table name follows
  kSqlVerb = 4,         // the message is SQL, in any case
  kSqlVerbUpper = 8,    // the message is SQL, when in capitals
};

struct WordEntry {
  std::string_view word;  // lowercase
  Topic topic;
  uint8_t flags;
};

constexpr WordEntry kSqlWords[] = {
    {"select", kDatabaseQueries, kSqlVerb},
    {"insert", kDatabaseQueries, kUpperOnlyTopic | kSqlVerb},
    {"update", kDatabaseQueries,
     kUpperOnlyTopic | kSqlVerbUpper | kTableKeyword},
    {"delete", kDatabaseQueries, kUpperOnlyTopic | kSqlVerbUpper},
    {"join", kDatabaseQueries, kUpperOnlyTopic | kTableKeyword},
    {"create", kSchema, kUpperOnlyTopic | kSqlVerbUpper},
    {"drop", kSchema, kUpperOnlyTopic | kSqlVerbUpper},
    {"alter", kSchema, kSqlVerbUpper},
    {"truncate", kTopicCount, kSqlVerbUpper},
    {"index", kPerformance, kUpperOnlyTopic},
    {"explain", kPerformance, kUpperOnlyTopic},
    {"analyze", kPerformance, kUpperOnlyTopic},
    {"from", kTopicCount, kTableKeyword},
    {"into", kTopicCount, kTableKeyword},
    {"table", kTopicCount, kTableKeyword},
};

constexpr size_t kMaxKeywordBytes = 24;

// kKeywords and kSqlWords in an open-addressing hash table: one hash of the
// lowercased word and, almost always, one probe per word scanned.
class WordTable {
 public:
  WordTable() {
    slots_.fill(-1);
    for (const Keyword& keyword : kKeywords) {
      Insert({keyword.word, keyword.topic, 0});
    }
    for (const WordEntry& entry : kSqlWords) Insert(entry);
  }

  // The entry for `word` (any case), or null.
  const WordEntry* Find(std::string_view word) const {
    if (word.size() < 2 || word.size() > kMaxKeywordBytes) return nullptr;
    char buffer[kMaxKeywordBytes];
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < word.size(); ++i) {
      buffer[i] = ToLower(word[i]);
      hash = (hash ^ static_cast<unsigned char>(buffer[i])) * 16777619u;
    }
    const std::string_view lower(buffer, word.size());
    for (size_t slot = hash & kMask;; slot = (slot + 1) & kMask) {
      const int16_t index = slots_[slot];
      if (index < 0) return nullptr;
      if (entries_[static_cast<size_t>(index)].word == lower) {
        return &entries_[static_cast<size_t>(index)];
      }
    }
  }

 private:
  static constexpr size_t kSlots = 1024;
  static constexpr size_t kMask = kSlots - 1;

  void Insert(const WordEntry& entry) {
    for (WordEntry& existing : entries_) {
      if (existing.word == entry.word) {
        existing.flags |= entry.flags;
        return;
      }
    }
    uint32_t hash = 2166136261u;
    for (char c : entry.word) {
      hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
    }
    size_t slot = hash & kMask;
    while (slots_[slot] >= 0) slot = (slot + 1) & kMask;
    slots_[slot] = static_cast<int16_t>(entries_.size());
    entries_.push_back(entry);
  }

  std::vector<WordEntry> entries_;
  std::array<int16_t, kSlots> slots_;
};

const WordTable& Words() {
  static const WordTable* const table = new WordTable();
  return *table;
}

// The topic a word names by its suffix or, for snake_case names, its parts
// ("query_database" is about queries), when the word itself is not in the
// table.
Topic TopicOfUnknownWord(std::string_view word) {
  if (IsUpper(word[0])) {
    if ((word.size() > 5 && EndsWith(word, "Error")) ||
        (word.size() > 9 && EndsWith(word, "Exception"))) {
      return kDebugging;
    }
    return kTopicCount;
  }
  if (word.find('_') == std::string_view::npos) return kTopicCount;
  size_t begin = 0;
  while (begin < word.size()) {
    size_t end = word.find('_', begin);
    if (end == std::string_view::npos) end = word.size();
    if (end > begin) {
      const WordEntry* entry = Words().Find(word.substr(begin, end - begin));
      if (entry != nullptr && entry->topic != kTopicCount &&
          (entry->flags & kUpperOnlyTopic) == 0) {
        return entry->topic;
      }
    }
    begin = end + 1;
  }
  return kTopicCount;
}

Topic TopicOfToolName(std::string_view name) {
  for (const Keyword& keyword : kToolKeywords) {
    if (EqualsNoCase(name, keyword.word)) return keyword.topic;
  }
  const WordEntry* entry = Words().Find(name);
  if (entry != nullptr && (entry->flags & kUpperOnlyTopic) == 0) {
    return entry->topic;
  }
  return entry == nullptr && !name.empty() ? TopicOfUnknownWord(name)
                                           : kTopicCount;
}

// ---------------------------------------------------------------------------
// Entities

constexpr std::string_view kFileExtensions[] = {
    "c",    "cc",    "cfg",   "cpp",  "cs",  "css",  "go",  "h",    "hpp",
    "html", "ini",   "ipynb", "java", "js",  "json", "jsx", "kt",   "lock",
    "md",   "php",   "proto", "py",   "rb",  "rs",   "rst", "scss", "sh",
    "sql",  "swift", "toml",  "ts",   "tsx", "txt",  "xml", "yaml", "yml",
};

bool HasKnownExtension(std::string_view name) {
  const size_t slash = name.rfind('/');
  const std::string_view base =
      slash == std::string_view::npos ? name : name.substr(slash + 1);
  const size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  const std::string_view stem = base.substr(0, dot);
  if (std::none_of(stem.begin(), stem.end(), IsAlpha) &&
      stem.find('_') == std::string_view::npos) {
    return false;
  }
  const std::string_view extension = base.substr(dot + 1);
  for (std::string_view known : kFileExtensions) {
    if (extension == known) return true;
  }
  return false;
}

bool IsPathChar(char c) {
  return IsWordChar(c) || c == '.' || c == '/' || c == '-' || c == '~' ||
         c == '+' || c == '@';
}

// Whether `s` (already stripped of surrounding punctuation) names a file or
// directory: only path characters, a letter, and a '/' that is clearly a
// path separator (a leading "/", "./", "~/", two of them, or a file
// extension), or a bare file name with a known extension.
bool LooksLikePath(std::string_view s) {
  if (s.size() < 3 || s.size() > 255) return false;
  size_t slashes = 0;
  bool letter = false;
  for (char c : s) {
    if (!IsPathChar(c)) return false;
    slashes += c == '/';
    letter = letter || IsAlpha(c);
  }
  if (!letter || s.find("//") != std::string_view::npos) return false;
  if (slashes == 0) return s[0] != '.' && s[0] != '-' && HasKnownExtension(s);
  return s[0] == '/' || StartsWith(s, "./") || StartsWith(s, "../") ||
         StartsWith(s, "~/") || slashes >= 2 || HasKnownExtension(s);
}

bool IsSnakeOrCamelIdentifier(std::string_view w) {
  if (w.size() < 3 || w.size() > kMaxWordBytes || IsDigit(w[0])) return false;
  if (StartsWith(w, "__")) return false;  // dunders say little
  bool lower = false;
  for (char c : w) lower = lower || IsLower(c);
  if (!lower) return false;
  if (w.find('_') != std::string_view::npos)
    return IsLower(w[0]) || w[0] == '_';
  if (!IsUpper(w[0])) return false;
  for (size_t i = 1; i < w.size(); ++i) {
    if (IsUpper(w[i])) return true;
  }
  return false;
}

bool IsPlainIdentifier(std::string_view s) {
  if (s.size() < 2 || s.size() > kMaxWordBytes) return false;
  if (!IsAlpha(s[0]) && s[0] != '_') return false;
  for (char c : s) {
    if (!IsWordChar(c) && c != '.') return false;
  }
  return s.back() != '.';
}

// ---------------------------------------------------------------------------
// Tables

constexpr std::string_view kNotTables[] = {
    "a",     "all",     "an",     "and",   "any",   "as",     "by",    "each",
    "every", "false",   "for",    "here",  "in",    "is",     "it",    "its",
    "my",    "not",     "now",    "null",  "of",    "on",     "one",   "or",
    "our",   "scratch", "select", "set",   "some",  "source", "that",  "the",
    "their", "them",    "then",   "there", "these", "this",   "those", "to",
    "true",  "values",  "what",   "where", "which", "with",   "your",
};
// Words between a keyword and its table: CREATE TABLE IF NOT EXISTS t,
// UPDATE ONLY t, JOIN LATERAL f.
constexpr std::string_view kTableModifiers[] = {"if", "not", "exists", "only",
                                                "lateral"};

bool IsTableKeyword(std::string_view w) {
  const WordEntry* entry = Words().Find(w);
  return entry != nullptr && (entry->flags & kTableKeyword) != 0;
}

// ---------------------------------------------------------------------------
// Call arguments

// Decodes the JSON string starting at json[*pos] == '"' into *out (escapes
// resolved; bad \u escapes become U+FFFD) and moves *pos past it. Tolerates
// malformed input: an unterminated string ends at the end of `json`.
void DecodeJsonString(std::string_view json, size_t* pos, std::string* out) {
  out->clear();
  size_t i = *pos + 1;
  auto append_code_point = [out](uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  };
  auto hex4 = [json](size_t at, uint32_t* value) {
    if (at + 4 > json.size()) return false;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = json[at + k];
      v <<= 4;
      if (IsDigit(c)) {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *value = v;
    return true;
  };
  while (i < json.size() && json[i] != '"') {
    const char c = json[i];
    if (c != '\\') {
      out->push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= json.size()) {
      ++i;
      break;
    }
    const char e = json[i + 1];
    i += 2;
    switch (e) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 'b':
      case 'f':
        out->push_back(' ');
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(i, &cp)) {
          append_code_point(0xFFFD);
          break;
        }
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (i + 1 < json.size() && json[i] == '\\' && json[i + 1] == 'u' &&
              hex4(i + 2, &low) && low >= 0xDC00 && low <= 0xDFFF) {
            i += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_code_point(cp);
        break;
      }
      default:
        out->push_back(e);
        break;  // \" \\ \/ and anything else
    }
  }
  *pos = i < json.size() ? i + 1 : json.size();
}

bool IsPathKey(std::string_view key) {
  return key == "path" || key == "file_path" || key == "filename" ||
         key == "file_name" || key == "file" || key == "target_file" ||
         key == "notebook_path";
}

bool IsEditTool(std::string_view name) {
  constexpr std::string_view kEditTools[] = {
      "edit",         "edit_file",   "str_replace",     "str_replace_editor",
      "write",        "write_file",  "create",          "create_file",
      "insert",       "apply_patch", "patch",           "multiedit",
      "notebookedit", "replace",     "replace_in_file", "write_to_file",
  };
  for (std::string_view tool : kEditTools) {
    if (EqualsNoCase(name, tool)) return true;
  }
  return false;
}

// What one call's arguments say, read from its JSON without a parser (the
// arguments of an OpenAI call need not be valid JSON).
struct CallArguments {
  std::string short_form;  // top-level values, ", "-joined, short
  std::string path;        // the first top-level path-like member
  std::string command;     // str_replace_editor's "command"
};

// Walks `json`: appends every string value (not member names), decoded,
// one per line, to *text, and fills *call from top-level members.
void ReadArguments(std::string_view json, std::string* text, std::string* value,
                   CallArguments* call) {
  json = CutUtf8(json, kArgumentsScanBytes);
  size_t i = 0;
  while (i < json.size() && (IsAsciiSpace(json[i]) || json[i] == '\n')) ++i;
  if (i == json.size() || (json[i] != '{' && json[i] != '[')) {
    // Not JSON: the text itself.
    text->append(json);
    text->push_back('\n');
    call->short_form = MakeItem(json, kMaxShortArgsBytes);
    return;
  }
  int depth = 0;
  std::string key;
  std::string short_form;
  auto add_short = [&short_form](std::string_view v) {
    if (short_form.size() > kMaxShortArgsBytes) return;
    const size_t newline = v.find('\n');
    if (!short_form.empty()) short_form += ", ";
    short_form.append(CutUtf8(v.substr(0, newline), kMaxShortArgsBytes + 4));
    if (newline != std::string_view::npos) short_form += " ...";
  };
  while (i < json.size()) {
    const char c = json[i];
    if (c == '{' || c == '[') {
      if (depth == 1) add_short("...");
      ++depth;
      ++i;
    } else if (c == '}' || c == ']') {
      --depth;
      ++i;
    } else if (c == '"') {
      DecodeJsonString(json, &i, value);
      size_t next = i;
      while (next < json.size() &&
             (IsAsciiSpace(json[next]) || json[next] == '\n')) {
        ++next;
      }
      if (next < json.size() && json[next] == ':') {
        if (depth == 1) key = *value;
        i = next + 1;
        continue;
      }
      text->append(*value);
      text->push_back('\n');
      if (depth == 1) {
        if (call->path.empty() && IsPathKey(key)) {
          call->path = MakeItem(*value, kMaxDigestItemBytes);
        }
        if (key == "command" && call->command.empty()) {
          call->command = MakeItem(*value, kMaxNameBytes);
        }
        add_short(*value);
      }
    } else if (IsWordChar(c) || c == '-') {
      const size_t begin = i;
      while (i < json.size() && (IsWordChar(json[i]) || json[i] == '.' ||
                                 json[i] == '-' || json[i] == '+')) {
        ++i;
      }
      if (depth == 1) add_short(json.substr(begin, i - begin));
    } else {
      ++i;
    }
  }
  call->short_form = MakeItem(short_form, kMaxShortArgsBytes);
}

// ---------------------------------------------------------------------------
// The scanner

// Which rules apply to a piece of text.
struct ScanMode {
  bool errors = true;
  bool decisions = true;
  bool edit_observations = true;
};

// Reads one message's text pieces into the digest.
class MessageScanner {
 public:
  explicit MessageScanner(SpanDigest& digest) : digest_(digest) {}

  // Scans `text` (a window of the message, or decoded call arguments).
  void Scan(std::string_view text, ScanMode mode) {
    mode_ = mode;
    in_traceback_ = false;
    traceback_header_ = {};
    size_t begin = 0;
    while (begin < text.size()) {
      const void* found =
          std::memchr(text.data() + begin, '\n', text.size() - begin);
      const size_t end =
          found == nullptr ? text.size()
                           : static_cast<size_t>(
                                 static_cast<const char*>(found) - text.data());
      std::string_view line = text.substr(begin, end - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ScanLine(line);
      begin = end + 1;
    }
    if (in_traceback_ && errors_taken_ < kErrorsPerMessage) AddError(traceback_header_);
  }

  // What the message said about edits, once all of it is scanned.
  void Finish() {
    if (edit_confirmed_ && !viewed_file_.empty()) {
      AddAction(digest_.actions,
                std::string(kEditedPrefix) +
                    MakeItem(viewed_file_, kMaxDigestItemBytes));
    }
  }

  bool error_taken() const { return errors_taken_ > 0; }
  void AddError(std::string_view line) {
    ++errors_taken_;
    while (StartsWith(line, "- ") || StartsWith(line, "* ")) {
      line.remove_prefix(2);
    }
    AddUnique(digest_.errors, kMaxDigestLineItems,
              MakeItem(line, kMaxDigestItemBytes));
  }

  void AddTopic(Topic topic) {
    if (topic == kTopicCount || (topics_seen_ >> topic & 1) != 0) return;
    topics_seen_ |= 1u << topic;
    AddUnique(digest_.topics, kMaxDigestItems, std::string(kTopicNames[topic]));
  }

  void AddEntity(std::string_view entity) {
    AddUnique(digest_.entities, kMaxDigestItems,
              MakeItem(entity, kMaxDigestItemBytes));
  }

  size_t edits() const { return edits_; }

  void AddEdited(std::string_view path) {
    path = TrimSpace(path);
    if (path.empty() || path == "/dev/null") return;
    ++edits_;
    AddEntity(path);
    AddAction(digest_.actions,
              std::string(kEditedPrefix) + MakeItem(path, kMaxDigestItemBytes));
  }

 private:
  void ScanLine(std::string_view line) {
    line_error_ = false;
    skip_paths_ = false;
    const std::string_view trimmed = TrimSpace(line);
    bool traceback_line = false;
    if (!trimmed.empty()) {
      LineRules(line, trimmed, &traceback_line);
    }
    // Chunks and words.
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && IsAsciiSpace(line[i])) ++i;
      const size_t chunk_begin = i;
      bool interesting = false;
      while (i < line.size() && !IsAsciiSpace(line[i])) {
        const char c = line[i];
        if (IsWordChar(c)) {
          const size_t word_begin = i;
          while (i < line.size() && IsWordChar(line[i])) ++i;
          ScanWord(line, word_begin, i);
          continue;
        }
        interesting =
            interesting || c == '/' || c == '.' || c == '`' || c == ':';
        ++i;
      }
      if (interesting && !skip_paths_ && i > chunk_begin) {
        ScanChunk(line.substr(chunk_begin, i - chunk_begin));
      }
    }
    if (line_error_ && mode_.errors && errors_taken_ < kErrorsPerMessage && !traceback_line &&
        !in_traceback_) {
      AddError(trimmed);
    }
  }

  // Rules about whole lines: tracebacks, diffs and patches, SWE-agent file
  // views and edit confirmations, decisions.
  void LineRules(std::string_view line, std::string_view trimmed,
                 bool* traceback_line) {
    if (mode_.errors && errors_taken_ < kErrorsPerMessage) {
      if (StartsWith(trimmed, "Traceback (most recent call last)")) {
        in_traceback_ = true;
        traceback_header_ = trimmed;
        *traceback_line = true;
      } else if (in_traceback_ && !IsAsciiSpace(line[0])) {
        // The first unindented line after the frames names the exception.
        in_traceback_ = false;
        *traceback_line = true;
        AddError(trimmed);
      }
    }
    const char first = trimmed[0];
    if (first == '+' && StartsWith(trimmed, "+++ ")) {
      std::string_view path = trimmed.substr(4);
      path = path.substr(0, path.find('\t'));
      if (StartsWith(path, "b/")) path.remove_prefix(2);
      AddEdited(path);
      skip_paths_ = true;
    } else if ((first == '-' && StartsWith(trimmed, "--- ")) ||
               (first == 'd' && StartsWith(trimmed, "diff --git ")) ||
               (first == 'i' && StartsWith(trimmed, "index "))) {
      skip_paths_ = true;
    } else if (first == '*') {
      if (StartsWith(trimmed, "*** Update File: ")) {
        AddEdited(trimmed.substr(17));
        skip_paths_ = true;
      } else if (StartsWith(trimmed, "*** Add File: ")) {
        AddEdited(trimmed.substr(14));
        skip_paths_ = true;
      }
    }
    if (mode_.edit_observations) {
      if (first == '[' && StartsWith(trimmed, "[File: ")) {
        std::string_view path = trimmed.substr(7);
        path = path.substr(0, path.find(" ("));
        if (!path.empty() && path.back() == ']') path.remove_suffix(1);
        if (viewed_file_.empty()) viewed_file_ = TrimSpace(path);
        AddTopic(kReadingCode);
      } else if (StartsWith(trimmed, "File updated") ||
                 StartsWith(trimmed, "Text replaced")) {
        edit_confirmed_ = true;
      } else if (StartsWith(trimmed, "The file ")) {
        const size_t edited = trimmed.find(" has been edited");
        if (edited != std::string_view::npos) {
          AddEdited(trimmed.substr(9, edited - 9));
        }
      }
    }
    if (mode_.decisions && digest_.decisions.size() < kMaxDigestLineItems) {
      std::string_view s = trimmed;
      while (!s.empty() && (s[0] == '-' || s[0] == '*' || s[0] == '>' ||
                            s[0] == '#' || s[0] == '_' || s[0] == ' ')) {
        s.remove_prefix(1);
      }
      if (IsDecision(s)) {
        AddUnique(digest_.decisions, kMaxDigestLineItems,
                  MakeItem(s, kMaxDigestItemBytes));
      }
    }
  }

  static bool IsDecision(std::string_view s) {
    if (s.empty()) return false;
    switch (ToLower(s[0])) {
      case 'd':
        return StartsWithNoCase(s, "decision:") ||
               (StartsWithNoCase(s, "decided") &&
                (s.size() == 7 || !IsWordChar(s[7])));
      case 'n':
        return StartsWithNoCase(s, "note:");
      case 'i':
        return StartsWithNoCase(s, "important:") ||
               (StartsWithNoCase(s, "i will") &&
                (s.size() == 6 || !IsWordChar(s[6])));
      case 'w':
        return StartsWithNoCase(s, "warning:");
      case 'r':
        return StartsWithNoCase(s, "recommendation:");
      case 'l':
        return StartsWithNoCase(s, "let's ") ||
               StartsWithNoCase(s, "let\xE2\x80\x99s ");
      default:
        return false;
    }
  }

  void ScanWord(std::string_view line, size_t begin, size_t end) {
    const std::string_view word = line.substr(begin, end - begin);
    if (word.size() < 2 || word.size() > kMaxWordBytes) return;
    const char next = end < line.size() ? line[end] : '\0';
    if (mode_.errors && errors_taken_ < kErrorsPerMessage && !line_error_) {
      if (next == ':') {
        // "ValueError: bad", not code such as "except ValueError:".
        line_error_ = ((word.size() >= 5 && EndsWith(word, "Error")) ||
                       (word.size() >= 9 && EndsWith(word, "Exception")) ||
                       word == "error" || word == "fatal" || word == "panic") &&
                      !TrimSpace(line.substr(end + 1)).empty();
      } else if (word == "FAILED" || word == "ERROR") {
        line_error_ = true;
      } else if (word == "error" &&
                 (StartsWith(line.substr(end), "(s)") ||
                  EndsWith(line.substr(0, begin), "syntax "))) {
        // "introduced new syntax error(s)": an editor refusing an edit.
        line_error_ = true;
      } else if (word == "ERR" && next == '!') {
        line_error_ = true;  // npm ERR!
      } else if (word == "found") {
        line_error_ = EndsWith(line.substr(0, begin), "command not ");
      } else if (word == "such") {
        line_error_ = EndsWith(line.substr(0, begin), "No ") &&
                      StartsWith(line.substr(end), " file");
      }
    }
    if (next == '(' && digest_.entities.size() < kMaxDigestItems &&
        IsSnakeOrCamelIdentifier(word)) {
      AddEntity(word);
    }
    const WordEntry* entry = Words().Find(word);
    if (entry == nullptr) {
      if (digest_.topics.size() < kMaxDigestItems) {
        AddTopic(TopicOfUnknownWord(word));
      }
      return;
    }
    const uint8_t flags = entry->flags;
    const bool upper =
        (flags & (kUpperOnlyTopic | kSqlVerbUpper | kTableKeyword)) != 0 &&
        IsAllUpper(word);
    if ((flags & kUpperOnlyTopic) == 0 || upper) AddTopic(entry->topic);
    if ((flags & kSqlVerb) != 0 || ((flags & kSqlVerbUpper) != 0 && upper)) {
      sql_context_ = true;
    }
    if ((flags & kTableKeyword) != 0 && (sql_context_ || upper) &&
        digest_.tables.size() < kMaxDigestItems) {
      TableAfter(line, end);
    }
  }

  // Reads the table name after a FROM/JOIN/INTO/UPDATE/TABLE keyword ending
  // at line[pos].
  void TableAfter(std::string_view line, size_t pos) {
    for (int word_count = 0; word_count < 4; ++word_count) {
      while (pos < line.size() && IsAsciiSpace(line[pos])) ++pos;
      if (pos == line.size()) return;
      const char open = line[pos];
      const bool quoted = open == '"' || open == '`' || open == '[';
      if (quoted) ++pos;
      const size_t begin = pos;
      if (pos == line.size() || !(IsAlpha(line[pos]) || line[pos] == '_')) {
        return;
      }
      while (pos < line.size() && (IsWordChar(line[pos]) || line[pos] == '.')) {
        ++pos;
      }
      std::string_view name = line.substr(begin, pos - begin);
      while (!name.empty() && name.back() == '.') name.remove_suffix(1);
      if (quoted && pos < line.size() &&
          (line[pos] == '"' || line[pos] == '`' || line[pos] == ']')) {
        ++pos;
      }
      if (name.empty() || name.size() > kMaxWordBytes) return;
      bool modifier = false;
      for (std::string_view m : kTableModifiers) {
        modifier = modifier || EqualsNoCase(name, m);
      }
      if (modifier && !quoted) continue;
      for (std::string_view stop : kNotTables) {
        if (EqualsNoCase(name, stop)) return;
      }
      if (IsTableKeyword(name) || HasKnownExtension(name)) return;
      // Python's "from package import name".
      size_t after = pos;
      while (after < line.size() && IsAsciiSpace(line[after])) ++after;
      if (StartsWith(line.substr(after), "import ")) return;
      AddUnique(digest_.tables, kMaxDigestItems, std::string(name));
      return;
    }
  }

  // A whitespace-separated chunk holding '/', '.', '`' or ':': a path, a URL
  // or a backticked identifier.
  void ScanChunk(std::string_view chunk) {
    if (digest_.entities.size() >= kMaxDigestItems) return;
    if (StartsWith(chunk, "</")) return;  // a closing tag, not a path
    bool backtick_open = false;
    bool backtick_close = false;
    constexpr std::string_view kLeading = "\"'`([{<";
    constexpr std::string_view kTrailing = "\"'`)]}>,;:.!?";
    while (!chunk.empty() &&
           kLeading.find(chunk.front()) != std::string_view::npos) {
      backtick_open = backtick_open || chunk.front() == '`';
      chunk.remove_prefix(1);
    }
    while (!chunk.empty() &&
           kTrailing.find(chunk.back()) != std::string_view::npos) {
      backtick_close = backtick_close || chunk.back() == '`';
      chunk.remove_suffix(1);
    }
    if (chunk.empty()) return;
    if (StartsWith(chunk, "http://") || StartsWith(chunk, "https://")) {
      if (chunk.size() > 10) AddEntity(chunk);
      return;
    }
    // "path.py:12:5" and "tests/x.py::test_y" name the file.
    const std::string_view path = chunk.substr(0, chunk.find(':'));
    if (LooksLikePath(path)) {
      AddEntity(path);
      return;
    }
    // Backticked names, when distinctive: `td_field`, `TimeDelta`,
    // `fields.serialize` (plain words such as `open` say little).
    if (backtick_open && backtick_close && IsPlainIdentifier(chunk) &&
        (IsSnakeOrCamelIdentifier(chunk) ||
         chunk.find('.') != std::string_view::npos)) {
      AddEntity(chunk);
    }
  }

  SpanDigest& digest_;
  ScanMode mode_;
  bool line_error_ = false;
  bool skip_paths_ = false;
  int errors_taken_ = 0;
  bool in_traceback_ = false;
  bool sql_context_ = false;
  bool edit_confirmed_ = false;
  uint32_t topics_seen_ = 0;
  size_t edits_ = 0;
  std::string_view traceback_header_;
  std::string_view viewed_file_;  // points into the message's text
};

// The parts of `text` scanned: all of it when short, else the first
// kHeadScanBytes and the last kTailScanBytes (from a line start when there
// is one), each cut at UTF-8 boundaries.
std::array<std::string_view, 2> ScanWindows(std::string_view text) {
  if (text.size() <= kHeadScanBytes + kTailScanBytes) return {text, {}};
  const std::string_view head = CutUtf8(text, kHeadScanBytes);
  size_t tail = text.size() - kTailScanBytes;
  const size_t newline = text.find('\n', tail);
  if (newline != std::string_view::npos) {
    tail = newline + 1;
  } else {
    while (tail < text.size() &&
           (static_cast<unsigned char>(text[tail]) & 0xC0) == 0x80) {
      ++tail;
    }
  }
  return {head, text.substr(tail)};
}

}  // namespace

void SpanDigester::Add(const ChatMessage& message, Tier tier) {
  ++digest_.message_count;
  for (const ToolCall& call : message.calls) {
    AddUnique(digest_.tools, kMaxDigestItems,
              MakeItem(call.name, kMaxNameBytes));
  }
  if (!message.result_tool_name.empty()) {
    AddUnique(digest_.tools, kMaxDigestItems,
              MakeItem(message.result_tool_name, kMaxNameBytes));
  }
  if (tier == Tier::kTransient) return;

  MessageScanner scanner(digest_);
  const bool is_result = !message.result_ids.empty() || message.role == "tool";
  ScanMode text_mode;
  text_mode.decisions = !is_result;
  for (std::string_view window : ScanWindows(message.text)) {
    if (!window.empty()) scanner.Scan(window, text_mode);
  }
  if (is_result) {
    scanner.AddTopic(TopicOfToolName(message.result_tool_name));
  }

  ScanMode arguments_mode;
  arguments_mode.errors = false;
  arguments_mode.decisions = false;
  arguments_mode.edit_observations = false;
  for (const ToolCall& call : message.calls) {
    scratch_.clear();
    CallArguments arguments;
    ReadArguments(call.arguments, &scratch_, &value_, &arguments);
    scanner.AddTopic(TopicOfToolName(call.name));
    const bool edit_tool = IsEditTool(call.name) && arguments.command != "view";
    const size_t edits_before = scanner.edits();
    if (edit_tool && !arguments.path.empty()) {
      scanner.AddEdited(arguments.path);
    } else {
      std::string action = "called ";
      action += MakeItem(call.name, kMaxNameBytes);
      action += '(';
      action += arguments.short_form;
      action += ')';
      scanner.Scan(scratch_, arguments_mode);
      // A patch tool's "edited" lines say more than its arguments.
      if (!edit_tool || scanner.edits() == edits_before) {
        AddAction(digest_.actions, std::move(action));
      }
      continue;
    }
    scanner.Scan(scratch_, arguments_mode);
  }
  scanner.Finish();

  if (message.is_error && !scanner.error_taken()) {
    std::string_view first_line = TrimSpace(message.text);
    first_line = first_line.substr(0, first_line.find('\n'));
    if (first_line.empty()) {
      scanner.AddError(std::string(message.result_tool_name.empty()
                                       ? "tool"
                                       : message.result_tool_name) +
                       " failed");
    } else {
      scanner.AddError(first_line);
    }
  }
}

void SpanDigester::Merge(const SpanDigest& other) {
  digest_.message_count += other.message_count;
  auto merge = [](std::vector<std::string>& into,
                  const std::vector<std::string>& from, size_t cap) {
    for (const std::string& item : from) AddUnique(into, cap, item);
  };
  merge(digest_.topics, other.topics, kMaxDigestItems);
  merge(digest_.tables, other.tables, kMaxDigestItems);
  merge(digest_.tools, other.tools, kMaxDigestItems);
  merge(digest_.entities, other.entities, kMaxDigestItems);
  merge(digest_.errors, other.errors, kMaxDigestLineItems);
  for (const std::string& action : other.actions) {
    AddAction(digest_.actions, action);
  }
  merge(digest_.decisions, other.decisions, kMaxDigestLineItems);
}

std::string SummaryText(const SpanDigest& digest, bool enhanced) {
  std::string out = "[Compressed context: ";
  auto section = [&out](std::string_view label,
                        const std::vector<std::string>& items) {
    if (items.empty()) return;
    out.append(label);
    out += ": ";
    for (const std::string& item : items) {
      out += item;
      out += ", ";
    }
  };
  section("Topics", digest.topics);
  section("Tables", digest.tables);
  section("Tools used", digest.tools);
  if (enhanced) {
    section("Entities", digest.entities);
    section("Errors", digest.errors);
    section("Actions", digest.actions);
    section("Decisions", digest.decisions);
  }
  out += std::to_string(digest.message_count);
  out += digest.message_count == 1 ? " message compressed]"
                                   : " messages compressed]";
  // Items come from valid UTF-8 cut at boundaries; a digest filled by hand
  // (or from unchecked text) is repaired rather than passed on.
  if (!IsValidUtf8(out)) return ReplaceInvalidUtf8(out);
  return out;
}

}  // namespace ctxkit::internal
