// Tests of the golden-file reader: the committed files parse and hold what
// generate_golden.mjs wrote (every encoding, both modes, the expected counts,
// values confirmed with tiktoken@1.0.22), and damaged inputs are rejected
// with DATA_LOSS instead of crashing or being half-read.

#include "tests/tokenizer/golden_reader.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ctxkit::internal {
namespace {

using Mode = GoldenCase::Mode;

const std::vector<std::string> kEncodings = {
    "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"};

// Number of texts generate_golden.mjs writes into the corpus; change it
// together with the generator.
constexpr size_t kCorpusTexts = 1815;

// Fixed so failures reproduce; CTXKIT_TEST_SEED overrides it to explore.
uint64_t TestSeed() {
  if (const char* env = std::getenv("CTXKIT_TEST_SEED")) {
    return std::strtoull(env, nullptr, 0);
  }
  return 0x601de11;
}

// Loaded once: the corpus is ~1 MB and several test cases look at it.
const std::vector<GoldenCase>& Corpus() {
  static const auto* cases = [] {
    absl::StatusOr<std::vector<GoldenCase>> read =
        ReadGoldenFile(GoldenPath(kGoldenCorpusFile));
    REQUIRE_MESSAGE(read.ok(), read.status().ToString());
    return new std::vector<GoldenCase>(std::move(*read));
  }();
  return *cases;
}

const GoldenCase* Find(const std::vector<GoldenCase>& cases,
                       std::string_view label, std::string_view encoding,
                       Mode mode) {
  for (const GoldenCase& c : cases) {
    if (c.label == label && c.encoding == encoding && c.mode == mode) return &c;
  }
  return nullptr;
}

std::vector<uint32_t> Ids(const std::vector<GoldenCase>& cases,
                          std::string_view label, std::string_view encoding,
                          Mode mode) {
  const GoldenCase* c = Find(cases, label, encoding, mode);
  REQUIRE_MESSAGE(c != nullptr, label, " ", encoding, " ",
                  GoldenModeName(mode));
  return c->ids;
}

std::string ReadAll(const std::string& path) {
  std::string bytes;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) {
    bytes.append(buffer, n);
  }
  std::fclose(f);
  return bytes;
}

// Builds version-1 files byte by byte, so tests can produce exactly the
// malformation they want behind a correct CRC.
class FileBuilder {
 public:
  FileBuilder() : bytes_("ctxkit-golden 1\n# test\n\n") {}

  FileBuilder& Varint(uint64_t v) {
    while (v >= 0x80) {
      bytes_ += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    bytes_ += static_cast<char>(v);
    return *this;
  }
  FileBuilder& Raw(std::string_view s) {
    bytes_ += s;
    return *this;
  }
  FileBuilder& String(std::string_view s) {
    Varint(s.size());
    return Raw(s);
  }
  // The encoding table used by most tests: two encodings.
  FileBuilder& Encodings() {
    return Varint(2).String("cl100k_base").String("o200k_base");
  }
  // A well-formed text record with one result.
  FileBuilder& Text(std::string_view label, std::string_view text,
                    uint32_t encoding, uint8_t mode,
                    const std::vector<uint32_t>& ids) {
    String(label).String(text).Varint(1).Varint(encoding);
    bytes_ += static_cast<char>(mode);
    Varint(ids.size());
    for (uint32_t id : ids) Varint(id);
    return *this;
  }
  // The file with its CRC trailer.
  std::string Finish() const {
    std::string out = bytes_;
    const uint32_t crc = GoldenCrc32(out);
    for (int i = 0; i < 4; ++i)
      out += static_cast<char>((crc >> (8 * i)) & 0xff);
    return out;
  }

 private:
  std::string bytes_;
};

void ExpectDataLoss(const std::string& bytes, std::string_view fragment) {
  absl::StatusOr<std::vector<GoldenCase>> parsed = ParseGolden(bytes, "test");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == absl::StatusCode::kDataLoss);
  const std::string message(parsed.status().message());
  CHECK_MESSAGE(message.find(fragment) != std::string::npos, message,
                " lacks \"", fragment, "\"");
}

TEST_CASE("the corpus has every encoding in both modes for every text") {
  const std::vector<GoldenCase>& cases = Corpus();
  CHECK(cases.size() == kCorpusTexts * kEncodings.size() * 2);
  std::map<std::pair<std::string, Mode>, size_t> counts;
  std::map<std::string, size_t> per_label;
  for (const GoldenCase& c : cases) {
    ++counts[{c.encoding, c.mode}];
    ++per_label[c.label];
  }
  CHECK(counts.size() == kEncodings.size() * 2);
  for (const std::string& e : kEncodings) {
    for (Mode m : {Mode::kOrdinary, Mode::kAllSpecial}) {
      const size_t n = counts[std::make_pair(e, m)];
      CHECK_MESSAGE(n == kCorpusTexts, e, " ", GoldenModeName(m));
    }
  }
  CHECK(per_label.size() == kCorpusTexts);
  // Not a structured binding: Clang 14 cannot capture one in doctest's
  // message lambda.
  for (const auto& entry : per_label) {
    CHECK_MESSAGE(entry.second == kEncodings.size() * 2, entry.first);
  }
}

TEST_CASE("the corpus covers its sections and holds plenty of tokens") {
  const std::vector<GoldenCase>& cases = Corpus();
  std::set<std::string> sections;
  std::map<std::string, size_t> tokens;
  for (const GoldenCase& c : cases) {
    sections.insert(c.label.substr(0, c.label.find('/')));
    if (c.mode == Mode::kOrdinary) tokens[c.encoding] += c.ids.size();
  }
  for (const char* s : {"prose",   "code",        "json",
                        "cjk",     "emoji",       "rtl",
                        "indic",   "thai",        "marks",
                        "ws",      "ws-combo",    "controls",
                        "digits",  "contraction", "punct",
                        "special", "long",        "base64",
                        "url",     "repeat",      "unicode-version",
                        "random",  "edge"}) {
    CHECK_MESSAGE(sections.count(s) == 1, s);
  }
  for (const std::string& e : kEncodings) {
    CHECK_MESSAGE(tokens[e] > 25000, e, " has ", tokens[e], " tokens");
  }
}

TEST_CASE("known values confirmed with tiktoken@1.0.22") {
  const std::vector<GoldenCase>& cases = Corpus();
  for (Mode m : {Mode::kOrdinary, Mode::kAllSpecial}) {
    CHECK(Ids(cases, "prose/0", "cl100k_base", m) ==
          std::vector<uint32_t>{15339, 1917});
    CHECK(Ids(cases, "prose/0", "r50k_base", m) ==
          std::vector<uint32_t>{31373, 995});
    CHECK(Ids(cases, "prose/0", "p50k_base", m) ==
          std::vector<uint32_t>{31373, 995});
    CHECK(Ids(cases, "prose/0", "p50k_edit", m) ==
          std::vector<uint32_t>{31373, 995});
    CHECK(Ids(cases, "prose/0", "o200k_base", m) ==
          std::vector<uint32_t>{24912, 2375});
    for (const std::string& e : kEncodings) {
      CHECK(Ids(cases, "edge/empty", e, m).empty());
    }
  }
  const GoldenCase* hello =
      Find(cases, "prose/0", "cl100k_base", Mode::kOrdinary);
  REQUIRE(hello != nullptr);
  CHECK(hello->text == "hello world");

  // "Hello<|endoftext|>world <|endoftext|> end"
  const GoldenCase* eot =
      Find(cases, "special/0/in-text", "cl100k_base", Mode::kAllSpecial);
  REQUIRE(eot != nullptr);
  CHECK(eot->text == "Hello<|endoftext|>world <|endoftext|> end");
  CHECK(Ids(cases, "special/0/in-text", "r50k_base", Mode::kAllSpecial) ==
        std::vector<uint32_t>{15496, 50256, 6894, 220, 50256, 886});
  CHECK(Ids(cases, "special/0/in-text", "cl100k_base", Mode::kAllSpecial) ==
        std::vector<uint32_t>{9906, 100257, 14957, 220, 100257, 842});
  CHECK(Ids(cases, "special/0/in-text", "o200k_base", Mode::kAllSpecial) ==
        std::vector<uint32_t>{13225, 199999, 24169, 220, 199999, 1268});
  CHECK(Ids(cases, "special/0/in-text", "cl100k_base", Mode::kOrdinary) ==
        std::vector<uint32_t>{9906, 27, 91, 8862, 728, 428, 91, 29, 14957,
                              83739, 8862, 728, 428, 91, 29, 842});
  // "<|fim_prefix|>": special in p50k_edit and cl100k, not in p50k or o200k.
  CHECK(Ids(cases, "special/1/alone", "p50k_edit", Mode::kAllSpecial) ==
        std::vector<uint32_t>{50281});
  CHECK(Ids(cases, "special/1/alone", "cl100k_base", Mode::kAllSpecial) ==
        std::vector<uint32_t>{100258});
  CHECK(Ids(cases, "special/1/alone", "p50k_base", Mode::kAllSpecial) ==
        std::vector<uint32_t>{27, 91, 69, 320, 62, 40290, 91, 29});
  CHECK(Ids(cases, "special/1/alone", "o200k_base", Mode::kAllSpecial) ==
        std::vector<uint32_t>{27, 91, 103473, 33197, 91, 29});
}

TEST_CASE("modes agree on texts without special-token text") {
  // A cheap consistency check of the data itself: allowed_special="all"
  // can only differ from encode_ordinary where "<|" appears.
  std::map<std::pair<std::string, std::string>, const GoldenCase*> ordinary;
  for (const GoldenCase& c : Corpus()) {
    if (c.mode == Mode::kOrdinary) {
      ordinary[std::make_pair(c.label, c.encoding)] = &c;
    }
  }
  size_t differing = 0;
  for (const GoldenCase& c : Corpus()) {
    if (c.mode != Mode::kAllSpecial) continue;
    const GoldenCase* o = ordinary[std::make_pair(c.label, c.encoding)];
    REQUIRE(o != nullptr);
    CHECK(o->text == c.text);
    if (o->ids != c.ids) {
      ++differing;
      CHECK_MESSAGE(c.text.find("<|") != std::string::npos, c.label);
    }
  }
  CHECK(differing > 100);
}

TEST_CASE("the gpt-tokenizer test plans parse with the expected counts") {
  absl::StatusOr<std::vector<GoldenCase>> read =
      ReadGoldenFile(GoldenPath(kGoldenTestPlansFile));
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK(read->size() == 313);
  std::map<std::string, size_t> counts;
  for (const GoldenCase& c : *read) {
    CHECK(c.mode == Mode::kOrdinary);
    ++counts[c.encoding];
  }
  CHECK(counts == std::map<std::string, size_t>{{"r50k_base", 64},
                                                {"p50k_base", 64},
                                                {"p50k_edit", 64},
                                                {"cl100k_base", 64},
                                                {"o200k_base", 57}});
  const GoldenCase* hello =
      Find(*read, "testplans/r50k_base/4", "r50k_base", Mode::kOrdinary);
  REQUIRE(hello != nullptr);
  CHECK(hello->text == "hello");
  CHECK(hello->ids == std::vector<uint32_t>{31373});
}

TEST_CASE("a well-formed hand-built file parses") {
  const std::string bytes = FileBuilder()
                                .Encodings()
                                .Varint(2)
                                .Text("a", "hello world", 0, 0, {15339, 1917})
                                .Text("b", std::string("\0x", 2), 1, 1,
                                      {0, 127, 128, 16383, 16384, UINT32_MAX})
                                .Finish();
  absl::StatusOr<std::vector<GoldenCase>> parsed = ParseGolden(bytes, "t");
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  REQUIRE(parsed->size() == 2);
  CHECK((*parsed)[0].encoding == "cl100k_base");
  CHECK((*parsed)[0].mode == Mode::kOrdinary);
  CHECK((*parsed)[0].label == "a");
  CHECK((*parsed)[0].ids == std::vector<uint32_t>{15339, 1917});
  CHECK((*parsed)[1].encoding == "o200k_base");
  CHECK((*parsed)[1].mode == Mode::kAllSpecial);
  CHECK((*parsed)[1].text == std::string("\0x", 2));
  CHECK((*parsed)[1].ids ==
        std::vector<uint32_t>{0, 127, 128, 16383, 16384, UINT32_MAX});
}

TEST_CASE("malformed headers are rejected") {
  ExpectDataLoss("", "bad magic");
  ExpectDataLoss("PK\x03\x04", "bad magic");
  ExpectDataLoss("ctxkit-golden 2\n\n", "unsupported version");
  ExpectDataLoss("ctxkit-golden 10\n\n", "unsupported version");
  ExpectDataLoss("ctxkit-golden 1", "unsupported version");
  ExpectDataLoss("ctxkit-golden 1\n# comment\n", "no terminating empty line");
  ExpectDataLoss("ctxkit-golden 1\n# comment", "no terminating empty line");
  ExpectDataLoss("ctxkit-golden 1\ncomment\n\n", "does not start with '#'");
  ExpectDataLoss("ctxkit-golden 1\n\n\x01", "no room for the CRC");
}

TEST_CASE("malformed bodies behind a correct CRC are rejected") {
  ExpectDataLoss(FileBuilder().Finish(), "truncated varint (encoding count)");
  ExpectDataLoss(FileBuilder().Varint(0).Varint(0).Finish(),
                 "encoding count 0");
  ExpectDataLoss(FileBuilder().Varint(1000).Finish(), "encoding count 1000");
  ExpectDataLoss(FileBuilder().Varint(1).String("").Varint(0).Finish(),
                 "encoding name is empty");
  ExpectDataLoss(FileBuilder().Varint(1).String("CL100K").Varint(0).Finish(),
                 "not [a-z0-9_]");
  ExpectDataLoss(FileBuilder().Varint(1).Varint(200).Finish(),
                 "encoding name length 200 exceeds");
  ExpectDataLoss(FileBuilder().Varint(1).Varint(5).Raw("ab").Finish(),
                 "runs past the end");
  ExpectDataLoss(FileBuilder().Encodings().Finish(),
                 "truncated varint (text count)");
  ExpectDataLoss(FileBuilder().Encodings().Varint(UINT32_MAX).Finish(),
                 "more than the remaining");
  // Varints: non-minimal, wider than 32 bits, longer than 5 bytes.
  ExpectDataLoss(FileBuilder().Raw(std::string("\x82\x00", 2)).Finish(),
                 "non-minimal varint");
  ExpectDataLoss(FileBuilder().Raw("\xff\xff\xff\xff\x1f").Finish(),
                 "exceeds 32 bits");
  ExpectDataLoss(FileBuilder().Raw("\x81\x80\x80\x80\x80\x01").Finish(),
                 "longer than 5 bytes");
  ExpectDataLoss(
      FileBuilder().Encodings().Varint(1).Text("a", "x", 2, 0, {1}).Finish(),
      "encoding index 2 out of range");
  ExpectDataLoss(
      FileBuilder().Encodings().Varint(1).Text("a", "x", 0, 2, {1}).Finish(),
      "unknown mode 2");
  ExpectDataLoss(FileBuilder()
                     .Encodings()
                     .Varint(1)
                     .Text("a", "\xc3\x28", 0, 0, {1})
                     .Finish(),
                 "text of \"a\" is not UTF-8");
  ExpectDataLoss(FileBuilder()
                     .Encodings()
                     .Varint(1)
                     .Text("\xed\xa0\x80", "x", 0, 0, {1})
                     .Finish(),
                 "label is not UTF-8");
  ExpectDataLoss(FileBuilder()
                     .Encodings()
                     .Varint(2)
                     .Text("a", "x", 0, 0, {1})
                     .Text("a", "y", 0, 0, {2})
                     .Finish(),
                 "duplicate label");
  {
    FileBuilder b;
    b.Encodings().Varint(1).String("a").String("x").Varint(2);
    b.Varint(0).Raw(std::string(1, '\0')).Varint(1).Varint(5);
    b.Varint(0).Raw(std::string(1, '\0')).Varint(1).Varint(5);
    ExpectDataLoss(b.Finish(), "duplicate result (cl100k_base, mode 0)");
  }
  ExpectDataLoss(FileBuilder()
                     .Encodings()
                     .Varint(1)
                     .String("a")
                     .String("x")
                     .Varint(0)
                     .Raw("pad")
                     .Finish(),
                 "result count 0");
  ExpectDataLoss(FileBuilder()
                     .Encodings()
                     .Varint(1)
                     .String("a")
                     .String("x")
                     .Varint(1)
                     .Varint(0)
                     .Raw(std::string(1, '\0'))
                     .Varint(1000000)
                     .Raw("\x01\x02")
                     .Finish(),
                 "id count 1000000 runs past the end");
  ExpectDataLoss(FileBuilder()
                     .Encodings()
                     .Varint(1)
                     .Text("a", "x", 0, 0, {1})
                     .Raw("zz")
                     .Finish(),
                 "2 unexpected bytes after the last text");
}

TEST_CASE("every truncation and bit flip of a small file is rejected") {
  const std::string good = FileBuilder()
                               .Encodings()
                               .Varint(2)
                               .Text("a", "hello world", 0, 0, {15339, 1917})
                               .Text("b", "x", 1, 1, {87})
                               .Finish();
  REQUIRE(ParseGolden(good, "good").ok());
  for (size_t n = 0; n < good.size(); ++n) {
    CHECK_FALSE_MESSAGE(ParseGolden(good.substr(0, n), "t").ok(), n);
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      CHECK_FALSE_MESSAGE(ParseGolden(bad, "t").ok(), i, ":", bit);
    }
  }
}

TEST_CASE("damaged copies of the real corpus are rejected") {
  const std::string good = ReadAll(GoldenPath(kGoldenCorpusFile));
  std::mt19937_64 rng(TestSeed());
  INFO("seed ", TestSeed());
  for (int trial = 0; trial < 20; ++trial) {
    const size_t n = rng() % good.size();
    CHECK_FALSE_MESSAGE(ParseGolden(good.substr(0, n), "t").ok(), n);
    std::string flipped = good;
    const size_t at = rng() % good.size();
    flipped[at] = static_cast<char>(flipped[at] ^ (1 + rng() % 255));
    CHECK_FALSE_MESSAGE(ParseGolden(flipped, "t").ok(), at);
  }
  CHECK_FALSE(ParseGolden(good + "x", "t").ok());
}

TEST_CASE("random bytes after a valid header never crash the reader") {
  std::mt19937_64 rng(TestSeed() + 1);
  INFO("seed ", TestSeed());
  for (int trial = 0; trial < 2000; ++trial) {
    FileBuilder b;
    std::string body;
    for (size_t n = rng() % 64; n > 0; --n) {
      body += static_cast<char>(rng() & 0xff);
    }
    // The CRC is right, so the structural checks alone must stop it.
    absl::StatusOr<std::vector<GoldenCase>> parsed =
        ParseGolden(b.Raw(body).Finish(), "t");
    if (!parsed.ok()) {
      CHECK(parsed.status().code() == absl::StatusCode::kDataLoss);
    }
  }
}

TEST_CASE("ReadGoldenFile reports missing files") {
  absl::StatusOr<std::vector<GoldenCase>> read =
      ReadGoldenFile(GoldenPath("no-such-file.golden"));
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(read.status().message()).find("no-such-file.golden") !=
        std::string::npos);
  CHECK_FALSE(ReadGoldenFile(GoldenDir()).ok());
}

}  // namespace
}  // namespace ctxkit::internal
