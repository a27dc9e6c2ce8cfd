// `count`, `tokenize`, `decode` and `encodings`: the tokenizer from the
// command line.
//
// Inputs of any size are read in chunks (except by `count --messages`,
// whose JSON document must be parsed as one). A chunk ends only where
// cutting cannot change the tokens; see SafeBoundary(). Text with no such
// place for megabytes (one pre-token piece that long: a run of spaces or of
// punctuation, CJK without punctuation) is held until one comes, since any
// cut of it would change its tokens.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "ctxkit/message_count.h"
#include "ctxkit/model_registry.h"
#include "ctxkit/tokenizer.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/host/files.h"
#include "programs/ctxkit/host/json_text.h"
#include "programs/ctxkit/host/text.h"

namespace ctxkit::program {

namespace {

constexpr std::string_view kSpecialChoices[] = {"none", "all"};
constexpr std::string_view kDefaultEncoding = "o200k_base";
constexpr size_t kDefaultChunkSize = size_t{1} << 20;
// Inputs larger than this get a progress bar when stderr is a terminal.
constexpr uint64_t kProgressThreshold = 100'000'000;
constexpr size_t kReadSize = size_t{1} << 20;

}  // namespace

const Flag kModelFlag{.name = "--model",
                      .value_name = "MODEL",
                      .help =
                          "use this model's encoding (gpt-4o, "
                          "claude-opus-4, ...)",
                      .check = CheckModelFlag};
const Flag kEstimateFlag{.name = "--estimate",
                         .value_name = "",
                         .help =
                             "estimate the tokens of an unknown --model "
                             "instead of refusing it"};
const Flag kEncodingFlag{"--encoding", "NAME",
                         "use this encoding (default o200k_base)"};
const Flag kSpecialFlag{"--special", "all|none",
                        "<|endoftext|> etc.: special tokens, or text (none, "
                        "the default)",
                        kSpecialChoices};
const Flag kMessagesFlag{"--messages", "",
                         "the input is a chat request (JSON): count its "
                         "messages"};
const Flag kChunkSizeFlag{"--chunk-size",
                          "BYTES",
                          "read in pieces of about BYTES (default 1048576; "
                          "0: whole)",
                          {},
                          true};
const Flag kJsonlFlag{"--jsonl", "",
                      "input lines are JSON strings or {\"text\":...}; "
                      "print an id array per line"};

namespace {

std::string CheckTextFlag(std::string_view /*value*/,
                          const Command& /*command*/, const Args& args) {
  if (!args.positional().empty()) {
    return "--text is the input: give it or FILE, not both";
  }
  return "";
}

}  // namespace

const Flag kTextFlag{.name = "--text",
                     .value_name = "TEXT",
                     .help =
                         "the input itself, instead of FILE or standard "
                         "input",
                     .check = CheckTextFlag};

std::string CheckModelFlag(std::string_view value, const Command& command,
                           const Args& args) {
  const ModelRegistry& registry = ModelRegistry::Default();
  if (registry.Resolve(value).match != ModelMatch::kUnknown) return "";
  const bool can_estimate =
      std::find(command.flags.begin(), command.flags.end(), &kEstimateFlag) !=
      command.flags.end();
  if (can_estimate && args.Has(kEstimateFlag.name)) return "";
  std::string problem = "unknown model";
  const std::vector<std::string> close = registry.Suggest(value, 3);
  for (size_t i = 0; i < close.size(); ++i) {
    problem += i == 0                  ? "; did you mean "
               : i + 1 == close.size() ? " or "
                                       : ", ";
    problem += Printable(close[i]);
  }
  problem += close.empty() ? ", and no known model is close" : "?";
  if (can_estimate) problem += " (--estimate: estimate its tokens instead)";
  return problem;
}

namespace {

// ---- input ----

// The input named on the command line: a file, or standard input for "-"
// or no argument. Reads with read(2), so nothing is buffered twice.
class Input {
 public:
  // `what` is what a terminal user is asked to type ("the text").
  static StatusOr<std::unique_ptr<Input>> Open(const Args& args,
                                               std::string_view what) {
    std::unique_ptr<Input> input(new Input);
    if (const std::string* text = args.Value(kTextFlag.name)) {
      input->name_ = "--text";
      input->text_ = *text;
      input->size_ = text->size();
      return input;
    }
    const auto& positional = args.positional();
    if (positional.empty() || positional[0] == "-") {
      input->fd_ = STDIN_FILENO;
      input->name_ = "standard input";
      // Without this a command run with no argument at a prompt seems to
      // hang: it is waiting for the text to be typed.
      if (::isatty(STDIN_FILENO) == 1) {
        std::cerr << "ctxkit: reading standard input (a terminal): type or "
                     "paste "
                  << what
                  << ", then press Ctrl-D on a line of its own; or give "
                     "FILE or --text\n";
      }
    } else {
      input->name_ = "'" + Printable(positional[0]) + "'";
      input->fd_ = ::open(positional[0].c_str(), O_RDONLY | O_CLOEXEC);
      if (input->fd_ < 0) {
        return ErrnoStatus(errno, "cannot open " + input->name_);
      }
      input->owned_ = true;
    }
    struct stat info;
    if (::fstat(input->fd_, &info) == 0) {
      if (S_ISDIR(info.st_mode)) {
        return Status(StatusCode::kFailedPrecondition,
                      input->name_ + " is a directory");
      }
      if (S_ISREG(info.st_mode))
        input->size_ = static_cast<uint64_t>(info.st_size);
    }
    return input;
  }

  ~Input() {
    if (owned_) ::close(fd_);
  }
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // Appends up to `max` bytes to `buffer`; 0 at the end of the input.
  StatusOr<size_t> ReadInto(std::string& buffer, size_t max) {
    if (fd_ < 0) {  // --text
      const size_t n = std::min(max, text_.size() - text_read_);
      buffer.append(text_, text_read_, n);
      text_read_ += n;
      bytes_read_ += n;
      return n;
    }
    const size_t old = buffer.size();
    buffer.resize(old + max);
    ssize_t n;
    do {
      n = ::read(fd_, buffer.data() + old, max);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      const int error = errno;
      buffer.resize(old);
      return ErrnoStatus(error, "cannot read " + name_);
    }
    buffer.resize(old + static_cast<size_t>(n));
    bytes_read_ += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }

  // The whole rest of the input.
  StatusOr<std::string> ReadAll() {
    std::string all;
    while (true) {
      auto n = ReadInto(all, kReadSize);
      if (!n.ok()) return n.status();
      if (*n == 0) return all;
    }
  }

  const std::string& name() const { return name_; }
  // The size of a regular file; nullopt for pipes and terminals.
  std::optional<uint64_t> size() const { return size_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  Input() = default;

  int fd_ = -1;  // -1: the input is text_ (--text)
  bool owned_ = false;
  std::string text_;
  size_t text_read_ = 0;
  std::string name_;
  std::optional<uint64_t> size_;
  uint64_t bytes_read_ = 0;
};

// Whether the three bytes before `b` are a CJK letter of a block whose
// every code point is a letter (Lo) that NFKC leaves alone: hiragana
// U+3041..3096, katakana U+30A1..30FA, ideographs U+3400..4DBF and
// U+4E00..9FFF, hangul syllables U+AC00..D7A3.
bool CjkLetterEndsAt(std::string_view text, size_t b) {
  if (b < 3) return false;
  const auto byte = [&](size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  if ((byte(b - 3) & 0xF0) != 0xE0 || (byte(b - 2) & 0xC0) != 0x80 ||
      (byte(b - 1) & 0xC0) != 0x80) {
    return false;
  }
  const uint32_t c = (uint32_t{byte(b - 3)} & 0x0F) << 12 |
                     (uint32_t{byte(b - 2)} & 0x3F) << 6 |
                     (uint32_t{byte(b - 1)} & 0x3F);
  return (c >= 0x3041 && c <= 0x3096) || (c >= 0x30A1 && c <= 0x30FA) ||
         (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
         (c >= 0xAC00 && c <= 0xD7A3);
}

// Whether `b` starts U+3001 IDEOGRAPHIC COMMA, U+3002 IDEOGRAPHIC FULL STOP
// or U+FF0C FULLWIDTH COMMA: punctuation (Po), never part of a letter or
// digit piece.
bool CjkPunctuationAt(std::string_view text, size_t b) {
  const std::string_view rest = text.substr(b, 3);
  return rest == "\xE3\x80\x81" || rest == "\xE3\x80\x82" ||
         rest == "\xEF\xBC\x8C";
}

// Whether the text may be cut before byte `b` (0 < b < text.size()) without
// changing its tokens: tokens(text) == tokens(text[:b]) + tokens(text[b:]).
// `special_tokens`: whether special-token text is looked for (--special
// all), which rules out the cuts that could fall inside one.
//
// The places (L: a letter, D: a digit; "ASCII" for the byte at b):
//  1. an ASCII L or D, then ASCII whitespace;
//  2. (not with `special_tokens`) an ASCII L or D, then an ASCII byte that
//     is neither whitespace, nor an apostrophe, nor of its own kind: L then
//     D, D then L, L or D then punctuation;
//  3. a CJK letter (CjkLetterEndsAt), then U+3001, U+3002 or U+FF0C.
// Why they hold for every built-in encoding:
//  - BPE runs within the pieces the pre-tokenizer's pattern splits the text
//    into, so equal pieces give equal tokens.
//  - The piece holding text[b-1] ends at b. In the GPT-2 pattern (r50k,
//    p50k, claude) a letter lies only in ` ?\p{L}+` and a digit in
//    ` ?\p{N}+`, which take nothing else after it. In cl100k (and Llama 3)
//    and o200k a letter lies only in the letter alternatives (an optional
//    leading non-letter-non-digit, letters (o200k: and marks), and in o200k
//    an optional contraction 's 't ... after them, hence no apostrophe in
//    2) and a digit only in \p{N}{1,3}; none takes whitespace,
//    punctuation, or a digit after a letter or a letter after a digit.
//    (Punctuation could not come before the cut: cl100k's
//    ` ?[^\s\p{L}\p{N}]+[\r\n]*` takes the line breaks after it.)
//  - The patterns have no look-behind, so the pieces from b on depend only
//    on text[b:].
//  - The pieces before b are found by the same attempts in text[:b], since
//    none of them reads past b: the only look-ahead, `\s+(?!\S)`, would
//    look at b only after a whitespace run ending at b, and text[b-1] is not
//    whitespace; and at the end of text[:b] a greedy run stops exactly where
//    it stopped at text[b] in the whole text.
//  - Special tokens: none of the built-in ones holds whitespace, so cuts 1
//    and 3 never fall inside one; cut 2 could ("<|endoftext|>" has "t|"),
//    hence not with `special_tokens`. Without them their text is ordinary.
//  - claude normalizes its input to NFKC first. The byte at b starts a
//    character that composes with nothing before it (ASCII, U+3001, U+3002,
//    U+FF0C) and the character before it is ASCII or a letter NFKC leaves
//    alone, so NFKC(text) == NFKC(text[:b]) + NFKC(text[b:]), the first
//    part still ending in text[b-1] and the second starting with what
//    text[b] normalizes to (U+FF0C to ','; still punctuation): the argument
//    above holds for the normalized parts.
// A cut chunk starts with the same bytes around its own later cuts, so the
// argument applies again to each chunk. The cut never splits a UTF-8
// character: the byte at b is ASCII or starts one.
bool SafeBoundary(std::string_view text, size_t b, bool special_tokens) {
  if (b == 0 || b >= text.size()) return false;
  const char before = text[b - 1];
  const char at = text[b];
  if (absl::ascii_isalnum(before)) {
    if (absl::ascii_isspace(at)) return true;
    if (special_tokens || (static_cast<unsigned char>(at) & 0x80) != 0 ||
        at == '\'') {
      return false;
    }
    return absl::ascii_isalpha(before) ? !absl::ascii_isalpha(at)
                                       : !absl::ascii_isdigit(at);
  }
  return CjkPunctuationAt(text, b) && CjkLetterEndsAt(text, b);
}

// Splits the input into chunks at safe boundaries: each chunk ends at the
// last safe boundary within `chunk_size` bytes, or, if there is none, at the
// first one after (0: the whole input is one chunk). The input is read in
// blocks of kReadSize, so memory stays near chunk_size + kReadSize, except
// across a stretch with no safe boundary, which is held whole.
class Chunker {
 public:
  Chunker(Input& input, size_t chunk_size, bool special_tokens)
      : input_(input),
        target_(chunk_size == 0 ? std::numeric_limits<size_t>::max()
                                : chunk_size),
        special_tokens_(special_tokens) {}

  // The next chunk in `chunk`; false once the input is exhausted.
  StatusOr<bool> Next(std::string& chunk) {
    chunk.clear();
    offset_ = next_offset_;
    while (!eof_ && buffer_.size() <= target_) {
      if (Status s = Fill(); !s.ok()) return s;
    }
    size_t cut = 0;
    if (buffer_.size() > target_) {
      for (size_t b = target_; b > 0 && cut == 0; --b) {
        if (SafeBoundary(buffer_, b, special_tokens_)) cut = b;
      }
      // SafeBoundary reads up to 3 bytes from b, hence the fill before.
      for (size_t b = target_ + 1; cut == 0;) {
        if (b + 3 > buffer_.size() && !eof_) {
          if (Status s = Fill(); !s.ok()) return s;
          continue;
        }
        if (b >= buffer_.size()) break;
        if (SafeBoundary(buffer_, b, special_tokens_)) cut = b;
        ++b;
      }
    }
    if (cut == 0) {  // the rest of the input, which has ended
      chunk.swap(buffer_);
      buffer_.clear();
    } else {
      chunk.assign(buffer_, 0, cut);
      buffer_.erase(0, cut);
    }
    next_offset_ = offset_ + chunk.size();
    return !chunk.empty();
  }

  // Byte offset of the last chunk in the input.
  uint64_t offset() const { return offset_; }

 private:
  Status Fill() {
    auto n = input_.ReadInto(buffer_, kReadSize);
    if (!n.ok()) return n.status();
    if (*n == 0) eof_ = true;
    return Status::Ok();
  }

  Input& input_;
  const size_t target_;
  const bool special_tokens_;
  std::string buffer_;
  bool eof_ = false;
  uint64_t offset_ = 0;
  uint64_t next_offset_ = 0;
};

// A progress line on stderr for long inputs, when stderr is a terminal.
class Progress {
 public:
  explicit Progress(const Input& input)
      : input_(input),
        enabled_(::isatty(STDERR_FILENO) == 1 &&
                 (!input.size().has_value() ||
                  *input.size() > kProgressThreshold)) {}

  // On an error the line is cleared, so the error message starts a line.
  ~Progress() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
  }

  void Update() {
    if (!enabled_) return;
    const uint64_t done = input_.bytes_read();
    // A pipe gets a line only once it has turned out to be long.
    if (!input_.size().has_value() && done <= kProgressThreshold) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    std::cerr << Line(done) << "\033[K" << std::flush;
  }

  // Draws the final figure (the throttle in Update may have skipped it, so a
  // file's bar would stop short of 100 %) and ends the line, so that the
  // result, printed next, never shares a line with the bar when stdout and
  // stderr are the same terminal.
  void Finish() {
    if (!shown_) return;
    shown_ = false;
    std::cerr << Line(input_.bytes_read()) << "\033[K\n" << std::flush;
  }

 private:
  std::string Line(uint64_t done) const {
    std::string line = "\rcounting " + input_.name() + ": ";
    if (input_.size().has_value() && *input_.size() > 0) {
      const uint64_t total = *input_.size();
      const int percent =
          static_cast<int>(std::min<uint64_t>(100, done * 100 / total));
      constexpr int kWidth = 30;
      const int filled = percent * kWidth / 100;
      line += "[" + std::string(filled, '#') +
              std::string(kWidth - filled, ' ') + "] " +
              std::to_string(percent) + "% of " + FormatBytes(total);
    } else {
      line += FormatBytes(done);
    }
    return line;
  }

 private:
  const Input& input_;
  const bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

// ---- what counts ----

// What `count --estimate` counts with when there is no tokenizer, as the
// JSON result names it.
constexpr std::string_view kEstimator = "ctxkit::EstimateTokens";

struct Counter {
  std::shared_ptr<const Tokenizer> tokenizer;  // null: EstimateTokens()
  std::string encoding;  // the encoding used; empty when estimating
  bool exact = true;
};

EncodeOptions OptionsFromArgs(const Args& args) {
  EncodeOptions options;
  const std::string* special = args.Value(kSpecialFlag.name);
  if (special != nullptr && *special == "all") {
    options.allowed_special = SpecialTokenSet::All();
  } else {
    // Counted or tokenized text is content: special-token text in it is
    // ordinary text, as ModelRegistry::CountTokens treats it.
    options.disallowed_special = SpecialTokenSet::None();
  }
  return options;
}

// Whether OptionsFromArgs looks for special-token text (--special all).
bool SpecialTokensLookedFor(const Args& args) {
  const std::string* special = args.Value(kSpecialFlag.name);
  return special != nullptr && *special == "all";
}

void Note(std::string_view text) {
  std::cerr << "ctxkit: note: " << text << "\n";
}

// The tokenizer of --encoding or --model (default o200k_base). With
// `allow_estimate`, a model that is unknown or whose encoding is not
// available is counted by EstimateTokens(), with a note on stderr; without,
// that is an error.
StatusOr<Counter> ResolveCounter(const Args& args, bool allow_estimate) {
  Counter counter;
  if (const std::string* model = args.Value(kModelFlag.name)) {
    const ModelRegistry& registry = ModelRegistry::Default();
    const ResolvedModel resolved = registry.Resolve(*model);
    counter.encoding = resolved.info.encoding;
    if (resolved.match == ModelMatch::kUnknown) {
      if (!allow_estimate) return registry.Find(*model).status();
      Note("unknown model '" + Printable(*model) +
           "': the count is an estimate by " + std::string(kEstimator) +
           ", not by a tokenizer");
      counter.exact = false;
      return counter;
    }
    auto tokenizer = registry.TokenizerForEncoding(resolved.info.encoding);
    if (!tokenizer.ok()) {
      if (!allow_estimate ||
          tokenizer.status().code() != StatusCode::kFailedPrecondition) {
        return tokenizer.status();
      }
      Note("the tokenizer of model '" + Printable(*model) + "' (" +
           resolved.info.encoding + ") is not available: the count is an " +
           "estimate by " + std::string(kEstimator));
      counter.encoding.clear();
      counter.exact = false;
      return counter;
    }
    counter.tokenizer = *std::move(tokenizer);
    counter.exact = resolved.info.exact;
    if (!counter.exact) {
      Note("encoding " + counter.encoding + " approximates the tokenizer of '" +
           Printable(*model) + "'");
    }
    return counter;
  }
  const std::string* name = args.Value(kEncodingFlag.name);
  auto tokenizer = Tokenizer::ForEncoding(
      name != nullptr ? std::string_view(*name) : kDefaultEncoding);
  if (!tokenizer.ok()) return tokenizer.status();
  counter.tokenizer = *std::move(tokenizer);
  counter.encoding = counter.tokenizer->name();
  return counter;
}

size_t ChunkSize(const Args& args) {
  const std::string* value = args.Value(kChunkSizeFlag.name);
  if (value == nullptr) return kDefaultChunkSize;
  uint64_t n = 0;
  std::from_chars(value->data(), value->data() + value->size(), n);
  return static_cast<size_t>(n);
}

// `status` of the chunk at `offset` of `input`, with the byte offsets it
// names ("offset N", counted from the start of the chunk, which is all the
// tokenizer saw) made offsets in the whole input.
Status InChunk(const Status& status, const Input& input, uint64_t offset) {
  const std::string& message = status.message();
  std::string absolute;
  constexpr std::string_view kOffset = "offset ";
  size_t from = 0;
  for (size_t at; (at = message.find(kOffset, from)) != std::string::npos;) {
    size_t digits = at + kOffset.size();
    uint64_t n = 0;
    const auto [end, error] = std::from_chars(
        message.data() + digits, message.data() + message.size(), n);
    absolute.append(message, from, digits - from);
    from = digits;
    if (error == std::errc() && end != message.data() + digits) {
      absolute += std::to_string(n + offset);
      from = static_cast<size_t>(end - message.data());
    }
  }
  absolute.append(message, from);
  return Status(status.code(), input.name() + ": " + absolute);
}

// ---- count ----

Status CountMessagesCommand(const Args& args, Input& input, std::ostream& out) {
  auto json = input.ReadAll();
  if (!json.ok()) return json.status();
  StatusOr<MessageCount> count = Status(StatusCode::kInternal, "not counted");
  const std::string* model = args.Value(kModelFlag.name);
  if (model != nullptr) {
    count = CountMessagesForModel(*model, *json);
  } else {
    auto counter = ResolveCounter(args, /*allow_estimate=*/false);
    if (!counter.ok()) return counter.status();
    count = CountMessages(*counter->tokenizer, *json);
  }
  if (!count.ok()) {
    return Status(count.status().code(),
                  input.name() + ": " + count.status().message());
  }
  if (model != nullptr && count->method == CountMethod::kHeuristic) {
    Note("no tokenizer for model '" + Printable(*model) +
         "': the count is an estimate");
  }
  if (!args.Has(kJsonFlag.name)) {
    out << count->total << "\n";
    return Status::Ok();
  }
  // The one count-messages document (the C ABI's too); "model" is null
  // when an encoding, not a model, counted.
  std::optional<std::string_view> model_name;
  if (model != nullptr) model_name = *model;
  auto doc = MessageCountToJson(*count, model_name);
  if (!doc.ok()) return doc.status();
  out << *doc << "\n";
  return Status::Ok();
}

}  // namespace

Status RunCount(const Args& args, std::ostream& out) {
  auto input = Input::Open(args, "the text");
  if (!input.ok()) return input.status();
  if (args.Has(kMessagesFlag.name)) {
    return CountMessagesCommand(args, **input, out);
  }
  auto counter = ResolveCounter(args, /*allow_estimate=*/true);
  if (!counter.ok()) return counter.status();
  const EncodeOptions options = OptionsFromArgs(args);

  // Chunks are counted a batch at a time on every core.
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  Chunker chunker(**input, ChunkSize(args), SpecialTokensLookedFor(args));
  Progress progress(**input);
  std::vector<std::string> batch(threads);
  std::vector<uint64_t> offsets(threads);
  uint64_t total = 0;
  bool more = true;
  while (more) {
    size_t filled = 0;
    while (filled < batch.size()) {
      auto got = chunker.Next(batch[filled]);
      if (!got.ok()) return got.status();
      if (!*got) {
        more = false;
        break;
      }
      offsets[filled++] = chunker.offset();
      progress.Update();
    }
    if (filled == 0) break;
    if (counter->tokenizer == nullptr) {
      for (size_t i = 0; i < filled; ++i) total += EstimateTokens(batch[i]);
      continue;
    }
    std::vector<std::string_view> views(batch.begin(), batch.begin() + filled);
    auto counts = counter->tokenizer->CountMany(views, threads, options);
    if (!counts.ok()) {
      // Say where: the first chunk that fails on its own.
      for (size_t i = 0; i < filled; ++i) {
        auto one = counter->tokenizer->Count(views[i], options);
        if (!one.ok()) return InChunk(one.status(), **input, offsets[i]);
      }
      return counts.status();
    }
    for (size_t n : *counts) total += n;
  }
  progress.Finish();

  if (!args.Has(kJsonFlag.name)) {
    out << total << "\n";
    return Status::Ok();
  }
  std::string doc = "{\"schema_version\":1";
  if (const std::string* model = args.Value(kModelFlag.name)) {
    doc += ",\"model\":" + JsonQuote(*model);
  }
  const bool estimated = counter->tokenizer == nullptr;
  doc += ",\"tokens\":" + std::to_string(total) +
         ",\"bytes\":" + std::to_string((*input)->bytes_read()) +
         ",\"encoding\":" +
         (estimated ? std::string("null") : JsonQuote(counter->encoding)) +
         ",\"method\":\"" + (estimated ? "heuristic" : "tokenizer") + "\"";
  // An estimate says so, and with what, in the result itself, not only in
  // the note on stderr.
  if (estimated) {
    doc += ",\"estimate\":true,\"estimated_with\":" + JsonQuote(kEstimator);
  }
  doc += std::string(",\"exact\":") +
         (!estimated && counter->exact ? "true" : "false") + "}";
  out << doc << "\n";
  return Status::Ok();
}

// ---- tokenize ----

namespace {

void AppendIds(const std::vector<uint32_t>& ids, char separator, bool first,
               std::string& line) {
  char number[16];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!(first && i == 0)) line.push_back(separator);
    const auto end = std::to_chars(number, number + sizeof number, ids[i]).ptr;
    line.append(number, end);
  }
}

Status TokenizeJsonl(const Tokenizer& tokenizer, const EncodeOptions& options,
                     Input& input, std::ostream& out) {
  std::string buffer;
  size_t start = 0;
  uint64_t line_number = 0;
  bool eof = false;
  std::string line_out;
  while (true) {
    size_t newline = buffer.find('\n', start);
    if (newline == std::string::npos && !eof) {
      buffer.erase(0, start);
      start = 0;
      auto n = input.ReadInto(buffer, kReadSize);
      if (!n.ok()) return n.status();
      if (*n == 0) eof = true;
      continue;
    }
    if (newline == std::string::npos) {
      if (start == buffer.size()) break;  // no final unterminated line
      newline = buffer.size();
    }
    const std::string_view line(buffer.data() + start, newline - start);
    start = newline + (newline < buffer.size() ? 1 : 0);
    ++line_number;
    // JSON Lines files often end with a blank line, or separate records by
    // one: it holds no record, so it gets no output line.
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto where = [&](const Status& status) {
      return Status(status.code(), input.name() + ", line " +
                                       std::to_string(line_number) + ": " +
                                       status.message());
    };
    auto text = ParseJsonLineText(line);
    if (!text.ok()) return where(text.status());
    auto ids = tokenizer.Encode(*text, options);
    if (!ids.ok()) return where(ids.status());
    line_out = "[";
    AppendIds(*ids, ',', true, line_out);
    line_out += "]\n";
    out << line_out;
  }
  return Status::Ok();
}

}  // namespace

Status RunTokenize(const Args& args, std::ostream& out) {
  auto input = Input::Open(args, "the text");
  if (!input.ok()) return input.status();
  auto counter = ResolveCounter(args, /*allow_estimate=*/false);
  if (!counter.ok()) return counter.status();
  const Tokenizer& tokenizer = *counter->tokenizer;
  const EncodeOptions options = OptionsFromArgs(args);
  if (args.Has(kJsonlFlag.name)) {
    return TokenizeJsonl(tokenizer, options, **input, out);
  }
  Chunker chunker(**input, ChunkSize(args), SpecialTokensLookedFor(args));
  std::string chunk;
  std::string line;
  bool first = true;
  while (true) {
    auto got = chunker.Next(chunk);
    if (!got.ok()) return got.status();
    if (!*got) break;
    auto ids = tokenizer.Encode(chunk, options);
    if (!ids.ok()) return InChunk(ids.status(), **input, chunker.offset());
    line.clear();
    AppendIds(*ids, ' ', first, line);
    if (!ids->empty()) first = false;
    out << line;
  }
  out << "\n";
  return Status::Ok();
}

// ---- decode ----

namespace {

bool IsIdSeparator(char c) {
  return absl::ascii_isspace(c) || c == ',' || c == '[' || c == ']';
}

// Appends the bytes of the ids in `text` (whole ids only: the last one is
// left in `text` unless `last`) to `bytes`; `ids_seen` counts the ids
// before, for the errors, and `offset` is where `text` starts in the input.
// Returns how many bytes of `text` it used.
StatusOr<size_t> DecodeIds(const Tokenizer& tokenizer, std::string_view text,
                           bool last, const std::string& input_name,
                           uint64_t offset, uint64_t* ids_seen,
                           std::string* bytes) {
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && IsIdSeparator(text[pos])) ++pos;
    size_t end = pos;
    while (end < text.size() && !IsIdSeparator(text[end])) ++end;
    if (pos == end || (end == text.size() && !last)) return pos;
    const std::string_view word = text.substr(pos, end - pos);
    uint32_t id = 0;
    const auto [ptr, error] =
        std::from_chars(word.data(), word.data() + word.size(), id);
    if (error != std::errc() || ptr != word.data() + word.size()) {
      return Status(StatusCode::kInvalidArgument,
                    input_name + ": '" + Printable(word) + "' at offset " +
                        std::to_string(offset + pos) +
                        " is not a token id (ids are decimal numbers "
                        "separated by spaces, commas or brackets)");
    }
    auto token = tokenizer.TokenBytes(id);
    if (!token.ok()) {
      return Status(StatusCode::kInvalidArgument,
                    input_name + ": id " + std::to_string(*ids_seen) +
                        " (counting from 0), at offset " +
                        std::to_string(offset + pos) + ": " +
                        token.status().message());
    }
    bytes->append(*token);
    ++*ids_seen;
    pos = end;
  }
}

}  // namespace

Status RunDecode(const Args& args, std::ostream& out) {
  auto counter = ResolveCounter(args, /*allow_estimate=*/false);
  if (!counter.ok()) return counter.status();
  const Tokenizer& tokenizer = *counter->tokenizer;
  uint64_t ids_seen = 0;
  std::string bytes;
  if (!args.positional().empty()) {
    std::string text;
    for (const std::string& arg : args.positional()) text += arg + " ";
    auto used = DecodeIds(tokenizer, text, /*last=*/true, "the arguments", 0,
                          &ids_seen, &bytes);
    if (!used.ok()) return used.status();
    out << bytes;
    return Status::Ok();
  }
  Args stdin_args;
  auto input = Input::Open(stdin_args, "the ids");
  if (!input.ok()) return input.status();
  std::string buffer;
  uint64_t offset = 0;  // of buffer[0] in the input
  bool eof = false;
  while (!eof) {
    auto n = (*input)->ReadInto(buffer, kReadSize);
    if (!n.ok()) return n.status();
    eof = *n == 0;
    auto used = DecodeIds(tokenizer, buffer, eof, (*input)->name(), offset,
                          &ids_seen, &bytes);
    if (!used.ok()) return used.status();
    buffer.erase(0, *used);
    offset += *used;
    // Memory stays near one read's worth whatever the input's length.
    out << bytes;
    bytes.clear();
  }
  return Status::Ok();
}

// ---- encodings ----

Status RunEncodings(const Args& /*args*/, std::ostream& out) {
  for (const std::string& name : Tokenizer::EncodingNames()) {
    out << name << "\n";
  }
  return Status::Ok();
}

}  // namespace ctxkit::program
