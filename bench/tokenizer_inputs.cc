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
  AddPathological(pathological_bytes, &set);
  return set;
}

const InputSet& SharedInputs() {
  static const InputSet* const kInputs = new InputSet(BuildInputs());
  return *kInputs;
}

}  // namespace ctxkit::bench
