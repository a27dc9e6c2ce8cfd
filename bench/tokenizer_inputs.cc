#include "bench/tokenizer_inputs.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "bench/bench_inputs.h"
#include "simdjson.h"

namespace ctxkit::bench {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMiB = size_t{1} << 20;
// Real inputs are capped so that one benchmark iteration stays short and a
// whole run takes minutes, not hours.
constexpr size_t kCodeBytes = 2 * kMiB;
constexpr size_t kCjkBytesPerLanguage = kMiB / 4;

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return data;
}

// Text every encoder treats alike: valid UTF-8, and no "<|", so no
// special-token text whatever an encoder's special-token defaults are.
bool Acceptable(std::string_view text) {
  return !text.empty() && IsValidUtf8(text) &&
         text.find("<|") == std::string_view::npos;
}

void AppendText(std::string_view text, std::string* out) {
  out->append(text);
  if (out->back() != '\n') out->push_back('\n');
}

// Regular files (symlinks excluded, so that GPL -> GPL-3 is read once) under
// `root` whose path satisfies `keep`, in sorted order. Directories named in
// `skip_dirs` are not entered.
std::vector<fs::path> ListFiles(
    const fs::path& root, bool recursive,
    const std::function<bool(const fs::path&)>& keep,
    const std::vector<std::string>& skip_dirs = {}) {
  std::vector<fs::path> files;
  std::error_code ec;
  auto consider = [&](const fs::directory_entry& entry) {
    std::error_code status_ec;
    if (entry.is_symlink(status_ec)) return;
    if (!entry.is_regular_file(status_ec)) return;
    if (keep(entry.path())) files.push_back(entry.path());
  };
  if (recursive) {
    fs::recursive_directory_iterator it(
        root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code dir_ec;
      if (it->is_directory(dir_ec) && !it->is_symlink(dir_ec)) {
        const std::string base = it->path().filename().string();
        if (std::find(skip_dirs.begin(), skip_dirs.end(), base) !=
            skip_dirs.end()) {
          it.disable_recursion_pending();
        }
        continue;
      }
      consider(*it);
    }
  } else {
    fs::directory_iterator it(root, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      consider(*it);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Up to about `target` bytes of the acceptable files among `files`, taking
// every k-th file (k chosen from the total size) so that the sample spreads
// over the whole tree rather than its alphabetical beginning. Returns the
// number of files used.
size_t SampleFiles(const std::vector<fs::path>& files, size_t target,
                   std::string* out) {
  uintmax_t total = 0;
  for (const fs::path& f : files) {
    std::error_code ec;
    uintmax_t size = fs::file_size(f, ec);
    if (!ec) total += size;
  }
  const size_t stride = std::max<size_t>(
      1, static_cast<size_t>(total / std::max<size_t>(target, 1)));
  size_t used = 0;
  // Two passes: the stride sample first, then the files it skipped, until
  // the target is reached (some sampled files may be rejected).
  for (size_t pass = 0; pass < 2 && out->size() < target; ++pass) {
    for (size_t i = 0; i < files.size() && out->size() < target; ++i) {
      if ((i % stride == 0) != (pass == 0)) continue;
      std::optional<std::string> text = ReadFile(files[i]);
      if (!text || !Acceptable(*text)) continue;
      if (out->size() + text->size() > target + target / 8 && !out->empty()) {
        continue;  // keep the input near its target size
      }
      AppendText(*text, out);
      ++used;
    }
  }
  return used;
}

bool HasExtension(const fs::path& p, std::initializer_list<const char*> exts) {
  const std::string ext = p.extension().string();
  for (const char* e : exts) {
    if (ext == e) return true;
  }
  return false;
}

// The translated strings (msgstr) of a GNU gettext .mo file, one per line;
// plural forms (NUL-separated) on lines of their own. Only acceptable
// strings are kept. Returns false if the file is not a .mo file.
bool AppendMoTranslations(const std::string& mo, std::string* out) {
  if (mo.size() < 28) return false;
  auto read32 = [&](size_t at, bool big_endian) -> uint32_t {
    const auto* p = reinterpret_cast<const unsigned char*>(mo.data() + at);
    if (big_endian) {
      return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
             (uint32_t{p[2]} << 8) | uint32_t{p[3]};
    }
    return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) |
           (uint32_t{p[3]} << 24);
  };
  bool big_endian;
  if (read32(0, false) == 0x950412deU) {
    big_endian = false;
  } else if (read32(0, true) == 0x950412deU) {
    big_endian = true;
  } else {
    return false;
  }
  const uint32_t count = read32(8, big_endian);
  const size_t table = read32(16, big_endian);
  // Entry 0 is the header (the translation of ""), not text.
  for (uint32_t i = 1; i < count; ++i) {
    const size_t entry = table + size_t{8} * i;
    if (entry + 8 > mo.size()) break;
    const size_t length = read32(entry, big_endian);
    const size_t offset = read32(entry + 4, big_endian);
    if (offset > mo.size() || length > mo.size() - offset) break;
    std::string text = mo.substr(offset, length);
    std::replace(text.begin(), text.end(), '\0', '\n');
    if (Acceptable(text)) AppendText(text, out);
  }
  return true;
}

// Real English prose: the licence texts every Debian system has.
void AddEnglish(InputSet* set) {
  const fs::path dir = "/usr/share/common-licenses";
  std::string text;
  const std::vector<fs::path> files =
      ListFiles(dir, /*recursive=*/false, [](const fs::path&) { return true; });
  for (const fs::path& f : files) {
    std::optional<std::string> t = ReadFile(f);
    if (t && Acceptable(*t)) AppendText(*t, &text);
  }
  if (text.empty()) {
    set->skipped.push_back("english: no readable licence text in " +
                           dir.string());
    return;
  }
  set->inputs.push_back({"english",
                         "every licence text in " + dir.string() + " (" +
                             std::to_string(files.size()) +
                             " files, symlinks excluded), concatenated",
                         std::move(text), false});
}

void AddCHeaders(InputSet* set) {
  const fs::path dir = "/usr/include";
  const std::vector<fs::path> files =
      ListFiles(dir, /*recursive=*/true, [](const fs::path& p) {
        return HasExtension(p, {".h", ".hpp", ".hh", ".hxx"});
      });
  std::string text;
  const size_t used = SampleFiles(files, kCodeBytes, &text);
  if (text.empty()) {
    set->skipped.push_back("code_c: no C/C++ header under " + dir.string());
    return;
  }
  set->inputs.push_back(
      {"code_c",
       std::to_string(used) + " of the " + std::to_string(files.size()) +
           " C/C++ headers under /usr/include, spread evenly in path order",
       std::move(text), false});
}

void AddPython(InputSet* set) {
  // The newest /usr/lib/python3.N.
  fs::path best;
  int best_minor = -1;
  std::error_code ec;
  for (fs::directory_iterator it("/usr/lib", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("python3.", 0) != 0) continue;
    const std::string minor = name.substr(8);
    if (minor.empty() || !std::all_of(minor.begin(), minor.end(), [](char c) {
          return c >= '0' && c <= '9';
        })) {
      continue;
    }
    if (std::stoi(minor) > best_minor) {
      best_minor = std::stoi(minor);
      best = it->path();
    }
  }
  if (best.empty()) {
    set->skipped.push_back("code_python: no /usr/lib/python3.N directory");
    return;
  }
  const std::vector<fs::path> files =
      ListFiles(best, /*recursive=*/true,
                [](const fs::path& p) { return HasExtension(p, {".py"}); },
                {"site-packages", "dist-packages", "__pycache__"});
  std::string text;
  const size_t used = SampleFiles(files, kCodeBytes, &text);
  if (text.empty()) {
    set->skipped.push_back("code_python: no .py file under " + best.string());
    return;
  }
  set->inputs.push_back(
      {"code_python",
       std::to_string(used) + " of the " + std::to_string(files.size()) +
           " .py files of " + best.string() +
           " (site/dist-packages excluded), spread evenly in path order",
       std::move(text), false});
}

// Real Chinese, Japanese and Korean text: vim's tutor translations, GnuPG's
// help texts and the translated messages of the installed programs' gettext
// catalogues, up to kCjkBytesPerLanguage per language.
void AddCjk(InputSet* set) {
  struct Language {
    const char* locale;     // /usr/share/locale/<locale>
    const char* vim_tutor;  // tutor.<x>.utf-8
  };
  static constexpr Language kLanguages[] = {
      {"zh_CN", "zh_cn"}, {"zh_TW", "zh_tw"}, {"ja", "ja"}, {"ko", "ko"}};
  std::string text;
  std::string source;
  // /usr/share/vim/vimNN (the runtime directory is versioned).
  std::vector<fs::path> vim_dirs;
  std::error_code ec;
  for (fs::directory_iterator it("/usr/share/vim", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().rfind("vim", 0) == 0) {
      vim_dirs.push_back(it->path());
    }
  }
  std::sort(vim_dirs.begin(), vim_dirs.end());
  for (const Language& lang : kLanguages) {
    std::string part;
    size_t files_used = 0;
    auto add_file = [&](const fs::path& p) {
      if (part.size() >= kCjkBytesPerLanguage) return;
      std::optional<std::string> t = ReadFile(p);
      if (t && Acceptable(*t)) {
        AppendText(*t, &part);
        ++files_used;
      }
    };
    for (const fs::path& vim : vim_dirs) {
      add_file(vim / "tutor" /
               (std::string("tutor.") + lang.vim_tutor + ".utf-8"));
    }
    add_file(fs::path("/usr/share/gnupg") /
             (std::string("help.") + lang.locale + ".txt"));
    for (const fs::path& mo : ListFiles(
             fs::path("/usr/share/locale") / lang.locale / "LC_MESSAGES",
             /*recursive=*/false,
             [](const fs::path& p) { return HasExtension(p, {".mo"}); })) {
      if (part.size() >= kCjkBytesPerLanguage) break;
      std::optional<std::string> data = ReadFile(mo);
      if (data && AppendMoTranslations(*data, &part)) ++files_used;
    }
    if (part.empty()) {
      set->skipped.push_back(
          std::string("cjk: no ") + lang.locale +
          " text (vim tutor, gnupg help, gettext catalogues)");
      continue;
    }
    // Cut at a line end so the text stays valid UTF-8.
    if (part.size() > kCjkBytesPerLanguage) {
      const size_t cut = part.rfind('\n', kCjkBytesPerLanguage);
      if (cut != std::string::npos && cut > 0) part.resize(cut + 1);
    }
    if (!source.empty()) source += ", ";
    source += std::string(lang.locale) + " " + std::to_string(part.size()) +
              " B from " + std::to_string(files_used) + " files";
    text += part;
  }
  if (text.empty()) return;
  set->inputs.push_back({"cjk",
                         "vim tutors, GnuPG help and gettext translations "
                         "(msgstr) in /usr/share: " +
                             source,
                         std::move(text), false});
}

std::string Base64Blob(size_t size, uint64_t seed) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  SplitMix64 rng(seed);
  std::string out;
  out.reserve(size);
  // Each random 24 bits are 4 base64 characters, as in an encoded binary.
  while (out.size() < size) {
    const uint64_t bits = rng.Next();
    for (int shift = 0; shift < 24 && out.size() < size; shift += 6) {
      out.push_back(kAlphabet[(bits >> shift) & 63]);
    }
  }
  return out;
}

std::string SizeText(size_t n) {
  if (n % kMiB == 0) return std::to_string(n / kMiB) + " MiB";
  if (n % 1024 == 0) return std::to_string(n / 1024) + " KiB";
  return std::to_string(n) + " B";
}

void AddPathological(size_t n, InputSet* set) {
  const std::string size = SizeText(n);
  set->inputs.push_back(
      {"letter_run", size + " of 'a'", std::string(n, 'a'), true});
  set->inputs.push_back(
      {"spaces", size + " of ' '", std::string(n, ' '), true});
  set->inputs.push_back(
      {"base64",
       size + " of base64 characters, no line breaks, from SplitMix64 seed "
              "0x5eed0001",
       Base64Blob(n, 0x5eed0001), true});
  {
    SplitMix64 rng(0x5eed0002);
    std::string digits(n, '0');
    for (char& c : digits) c = static_cast<char>('0' + rng.Next() % 10);
    set->inputs.push_back(
        {"digits", size + " of decimal digits from SplitMix64 seed 0x5eed0002",
         std::move(digits), true});
  }
  {
    SplitMix64 rng(0x5eed0003);
    std::string ws(n, ' ');
    for (char& c : ws) c = (rng.Next() % 4 == 0) ? '\n' : ' ';
    set->inputs.push_back(
        {"newlines_spaces",
         size + " of ' ' and '\\n' (1 in 4) from SplitMix64 seed 0x5eed0003",
         std::move(ws), true});
  }
}

// The punctuation of punct_mix and punct_spaced.
constexpr std::string_view kAsciiPunctuation =
    "-=*#~_.:;!?/+()[]{}&%$@^`'\",\\>";

// The long runs of whitespace or punctuation that byte-pair merging finds
// hardest (each once took tiktoken's quadratic loop, and then our long-piece
// merger, far longer per byte than prose): each is one pre-token, or a few,
// of about `n` bytes.
void AddMixedRuns(size_t n, InputSet* set) {
  const std::string size = SizeText(n);
  auto repeat = [n](std::string_view unit) {
    std::string out;
    out.reserve(n);
    while (out.size() + unit.size() <= n) out.append(unit);
    return out;
  };
  set->inputs.push_back({"crlf_blank",
                         size + " of \"\\r\\n\": blank lines "
                                "ended the Windows way",
                         repeat("\r\n"), true});
  set->inputs.push_back(
      {"dash_equals", size + " of \"-=\" repeated", repeat("-="), true});
  set->inputs.push_back({"cjk_repeat",
                         size + " of U+7684 (\xE7\x9A\x84) "
                                "repeated",
                         repeat("\xE7\x9A\x84"), true});
  {
    // Indentation, blank lines with trailing blanks and both line ends, as
    // in the whitespace between paragraphs of messy text, with nothing else.
    SplitMix64 rng(0x5eed0004);
    std::string ws;
    ws.reserve(n + 16);
    while (ws.size() < n) {
      switch (rng.Next() % 6) {
        case 0:
          ws.append(rng.Range(1, 12), ' ');
          break;
        case 1:
          ws.append(rng.Range(1, 3), '\t');
          break;
        case 2:
          ws.append("\r\n");
          break;
        default:
          ws.append(rng.Range(1, 2), '\n');
      }
    }
    ws.resize(n);
    set->inputs.push_back(
        {"whitespace_mix",
         size + " of runs of spaces (1-12), tabs (1-3), \"\\n\" (1-2) and "
                "\"\\r\\n\" from SplitMix64 seed 0x5eed0004",
         std::move(ws), true});
  }
  {
    SplitMix64 rng(0x5eed0005);
    std::string p(n, '-');
    for (char& c : p)
      c = kAsciiPunctuation[rng.Next() % kAsciiPunctuation.size()];
    set->inputs.push_back({"punct_mix",
                           size + " of ASCII punctuation (" +
                               std::string(kAsciiPunctuation) +
                               ") from SplitMix64 seed 0x5eed0005",
                           std::move(p), true});
  }
  {
    // The same punctuation cut by a space every 1 to 40 bytes: many short
    // pieces of about 1.6 bytes a token, where the cost per piece and per
    // token, not the length of a run, sets the speed.
    SplitMix64 rng(0x5eed0007);
    std::string p;
    p.reserve(n + 48);
    while (p.size() < n) {
      for (size_t k = rng.Range(1, 40); k > 0; --k) {
        p.push_back(kAsciiPunctuation[rng.Next() % kAsciiPunctuation.size()]);
      }
      p.push_back(' ');
    }
    p.resize(n);
    set->inputs.push_back(
        {"punct_spaced",
         size + " of ASCII punctuation as in punct_mix with a space every "
                "1-40 bytes, from SplitMix64 seed 0x5eed0007",
         std::move(p), true});
  }
}

// Words for GeneratedProse, written for this file.
constexpr std::string_view kProseWords[] = {
    "the",      "a",        "of",       "to",        "and",       "in",
    "is",       "that",     "for",      "it",        "with",      "as",
    "was",      "on",       "be",       "by",        "this",      "are",
    "from",     "at",       "or",       "an",        "which",     "not",
    "but",      "have",     "has",      "had",       "they",      "their",
    "we",       "our",      "you",      "your",      "when",      "where",
    "there",    "then",     "than",     "more",      "most",      "some",
    "each",     "every",    "after",    "before",    "between",   "through",
    "under",    "over",     "context",  "window",    "budget",    "message",
    "summary",  "history",  "agent",    "request",   "response",  "token",
    "tokens",   "model",    "server",   "client",    "record",    "store",
    "cache",    "value",    "index",    "version",   "function",  "argument",
    "result",   "error",    "warning",  "file",      "directory", "path",
    "line",     "column",   "table",    "query",     "answer",    "question",
    "reason",   "decision", "plan",     "step",      "change",    "test",
    "build",    "release",  "branch",   "commit",    "review",    "morning",
    "river",    "mountain", "garden",   "letter",    "journey",   "village",
    "harbour",  "winter",   "summer",   "quickly",   "slowly",    "carefully",
    "together", "almost",   "always",   "never",     "often",     "rarely",
    "perhaps",  "large",    "small",    "older",     "newer",     "careful",
    "simple",   "complex",  "quiet",    "bright",    "distant",   "keeps",
    "drops",    "reads",    "writes",   "counts",    "returns",   "describes",
    "explains", "follows",  "measures", "remembers", "forgets",   "compares",
    "opens",    "closes",   "isn't",    "doesn't",   "we'll",     "it's",
    "they're",  "Monday",   "October",  "Paris",     "Alice",     "Bob",
    "1998",     "42",       "3.14",     "2,500",     "7%",
};

// `rng`'s sentence of English words: capitalized, sometimes with a comma,
// ended by one of . ? ! or :.
std::string Sentence(SplitMix64& rng) {
  const size_t words = rng.Range(4, 18);
  std::string s;
  for (size_t i = 0; i < words; ++i) {
    std::string w(kProseWords[rng.Next() % std::size(kProseWords)]);
    if (i == 0 && w[0] >= 'a' && w[0] <= 'z')
      w[0] = static_cast<char>(w[0] - 32);
    if (i > 0) s += rng.Percent(8) ? ", " : " ";
    if (rng.Percent(3)) w = "\"" + w + "\"";
    if (rng.Percent(2)) w = "(" + w + ")";
    s += w;
  }
  static constexpr char kEnds[] = {'.', '.', '.', '.', '?', '!', ':'};
  s += kEnds[rng.Next() % std::size(kEnds)];
  return s;
}

// Sentences filled into lines of at most `width` columns, each line
// starting with `indent` (and `first` on the first line).
void Paragraph(SplitMix64& rng, std::string_view first, std::string_view indent,
               size_t sentences, size_t width, std::string_view eol,
               std::string* out) {
  std::string line(first);
  size_t column = 0;
  for (char c : first) column += c == '\t' ? 8 : 1;
  const size_t indent_columns = [&] {
    size_t k = 0;
    for (char c : indent) k += c == '\t' ? 8 : 1;
    return k;
  }();
  bool empty = true;
  for (size_t s = 0; s < sentences; ++s) {
    const std::string sentence = Sentence(rng);
    size_t start = 0;
    while (start < sentence.size()) {
      size_t end = sentence.find(' ', start);
      if (end == std::string::npos) end = sentence.size();
      const std::string_view word(sentence.data() + start, end - start);
      if (!empty && column + 1 + word.size() > width) {
        *out += line;
        *out += eol;
        line.assign(indent);
        column = indent_columns;
        empty = true;
      }
      if (!empty) {
        // Two spaces after a sentence, as some writers type.
        const bool two = start == 0 && rng.Percent(30);
        line += two ? "  " : " ";
        column += two ? 2 : 1;
      }
      line += word;
      column += word.size();
      empty = false;
      start = end + 1;
    }
  }
  *out += line;
  *out += eol;
}

// Varied English-like prose with the indentation and blank lines of real
// documents: headings, wrapped paragraphs, quotations indented with a tab
// or spaces, nested lists, code blocks indented with spaces or tabs,
// tab-separated tables, blank lines holding stray blanks, and sections with
// Windows line ends. Generated from `seed` (no text is copied), about
// `bytes` long.
std::string GeneratedProse(size_t bytes, uint64_t seed) {
  SplitMix64 rng(seed);
  std::string out;
  out.reserve(bytes + 4096);
  size_t section = 0;
  while (out.size() < bytes) {
    const std::string_view eol = rng.Percent(15) ? "\r\n" : "\n";
    ++section;
    out += "## " + std::to_string(section) + ". " + Sentence(rng);
    out.pop_back();
    out += eol;
    out += eol;
    const size_t blocks = rng.Range(4, 10);
    for (size_t b = 0; b < blocks; ++b) {
      switch (rng.Next() % 8) {
        case 0:
        case 1:
        case 2:  // a paragraph, sometimes with a first-line indent
          Paragraph(rng, rng.Percent(20) ? "\t" : "", "", rng.Range(2, 7),
                    rng.Range(60, 80), eol, &out);
          break;
        case 3: {  // a quotation
          const std::string indent = rng.Percent(50) ? "\t" : "    ";
          Paragraph(rng, indent, indent, rng.Range(1, 4), 72, eol, &out);
          break;
        }
        case 4: {  // a list, nested
          const size_t items = rng.Range(2, 7);
          for (size_t i = 0; i < items; ++i) {
            const size_t depth = rng.Range(0, 2);
            const bool tabs = rng.Percent(25);
            const std::string indent =
                tabs ? std::string(depth, '\t') : std::string(2 * depth, ' ');
            const std::string bullet =
                rng.Percent(30) ? std::to_string(i + 1) + ". "
                                : std::string(depth % 2 ? "* " : "- ");
            Paragraph(rng, indent + bullet, indent + "  ", rng.Range(1, 2), 76,
                      eol, &out);
          }
          break;
        }
        case 5: {  // a code block
          const bool tabs = rng.Percent(40);
          const size_t lines = rng.Range(3, 14);
          size_t depth = 1;
          for (size_t i = 0; i < lines; ++i) {
            const std::string indent =
                tabs ? std::string(depth, '\t') : std::string(4 * depth, ' ');
            const std::string_view a =
                kProseWords[rng.Next() % std::size(kProseWords)];
            const std::string_view f =
                kProseWords[50 + rng.Next() % 50];  // the technical words
            switch (rng.Next() % 4) {
              case 0:
                out += indent + "if (" + std::string(f) + "_count > " +
                       std::to_string(rng.Range(0, 999)) + ") {" +
                       std::string(eol);
                ++depth;
                break;
              case 1:
                out += indent + std::string(f) + " = " + std::string(f) + "." +
                       std::string(a) + "(" + std::string(f) + ")" +
                       std::string(eol);
                break;
              case 2:
                out += indent + "# " + Sentence(rng) + std::string(eol);
                break;
              default:
                if (depth > 1) {
                  --depth;
                  out += std::string(tabs ? std::string(depth, '\t')
                                          : std::string(4 * depth, ' ')) +
                         "}" + std::string(eol);
                } else {
                  out += indent + "return " + std::string(f) + ";" +
                         std::string(eol);
                }
            }
            // A blank line inside the block, sometimes keeping its indent.
            if (rng.Percent(15)) {
              out +=
                  (rng.Percent(50) ? indent : std::string()) + std::string(eol);
            }
          }
          break;
        }
        case 6: {  // a table with tab-separated columns
          const size_t rows = rng.Range(2, 6);
          for (size_t r = 0; r < rows; ++r) {
            const size_t columns = rng.Range(2, 4);
            for (size_t c = 0; c < columns; ++c) {
              if (c > 0) out += rng.Percent(30) ? "\t\t" : "\t";
              out += kProseWords[rng.Next() % std::size(kProseWords)];
            }
            out += eol;
          }
          break;
        }
        default:  // a short line with trailing blanks
          out += Sentence(rng) + std::string(rng.Range(1, 6), ' ');
          out += eol;
      }
      // Blank lines between blocks, sometimes holding stray blanks.
      const size_t blank = rng.Range(1, 3);
      for (size_t k = 0; k < blank; ++k) {
        if (rng.Percent(20)) out += rng.Percent(50) ? "  " : "\t";
        out += eol;
      }
    }
  }
  return out;
}

void AddGeneratedProse(InputSet* set) {
  set->inputs.push_back(
      {"prose_indented",
       "1 MiB of generated English-like prose (bench/tokenizer_inputs.cc, "
       "SplitMix64 seed 0x5eed0006): wrapped paragraphs, tab- and "
       "space-indented quotations, nested lists and code blocks, "
       "tab-separated tables, blank lines with stray blanks, some CRLF "
       "sections",
       GeneratedProse(kMiB, 0x5eed0006), false});
}

// Every string value under `element`, in document order (simdjson has
// decoded the escapes); the views live as long as the parser's document.
void CollectStrings(simdjson::dom::element element,
                    std::vector<std::string_view>* out) {
  std::string_view text;
  simdjson::dom::array array;
  simdjson::dom::object object;
  if (element.get_string().get(text) == simdjson::SUCCESS) {
    out->push_back(text);
  } else if (element.get_array().get(array) == simdjson::SUCCESS) {
    for (simdjson::dom::element child : array) CollectStrings(child, out);
  } else if (element.get_object().get(object) == simdjson::SUCCESS) {
    for (simdjson::dom::key_value_pair field : object) {
      CollectStrings(field.value, out);
    }
  }
}

// Real agent text: the JSON string values of at least 64 bytes in the
// SWE-agent trajectories of the shared data directory (tool output with
// indented code, diffs, the model's reasoning), decoded, each once, up to
// 2 MiB. Read at run time, never committed.
void AddAgentTrajectories(InputSet* set) {
#ifdef CTXKIT_BENCH_SHARED_DATA_DIR
  const fs::path dir = fs::path(CTXKIT_BENCH_SHARED_DATA_DIR) / "swe-agent";
#else
  const fs::path dir;
#endif
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) {
    set->skipped.push_back(
        "agent_traj: no swe-agent directory in the shared data directory "
        "(CTXKIT_SHARED_DATA_DIR)");
    return;
  }
  const std::vector<fs::path> files =
      ListFiles(dir, /*recursive=*/false,
                [](const fs::path& p) { return HasExtension(p, {".traj"}); });
  std::string text;
  std::vector<uint64_t> seen;
  size_t used = 0;
  simdjson::dom::parser parser;
  for (const fs::path& f : files) {
    if (text.size() >= 2 * kMiB) break;
    std::optional<std::string> json = ReadFile(f);
    if (!json) continue;
    simdjson::dom::element root;
    if (parser.parse(*json).get(root) != simdjson::SUCCESS) continue;
    ++used;
    std::vector<std::string_view> values;
    CollectStrings(root, &values);
    for (const std::string_view value : values) {
      // Short values are JSON structure (roles, ids, flags), not text.
      if (value.size() < 64 || !Acceptable(value)) continue;
      uint64_t h = 0xcbf29ce484222325ULL;
      for (unsigned char c : value) h = (h ^ c) * 0x100000001b3ULL;
      if (std::find(seen.begin(), seen.end(), h) == seen.end()) {
        seen.push_back(h);
        AppendText(value, &text);
      }
    }
  }
  if (text.empty()) {
    set->skipped.push_back("agent_traj: no text in " + dir.string());
    return;
  }
  set->inputs.push_back(
      {"agent_traj",
       "the decoded JSON strings of 64 B or more, each once, of " +
           std::to_string(used) + " SWE-agent trajectories in " + dir.string() +
           " (MIT licence, read at run time)",
       std::move(text), false});
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += len;
  }
  return true;
}

InputSet BuildInputs(size_t pathological_bytes) {
  InputSet set;
  AddEnglish(&set);
  AddCHeaders(&set);
  AddPython(&set);
  AddCjk(&set);
  AddGeneratedProse(&set);
  AddAgentTrajectories(&set);
  AddPathological(pathological_bytes, &set);
  AddMixedRuns(pathological_bytes, &set);
  return set;
}

const InputSet& SharedInputs() {
  static const InputSet* const kInputs = new InputSet(BuildInputs());
  return *kInputs;
}

}  // namespace ctxkit::bench
