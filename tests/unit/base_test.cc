// The small shared helpers of the record stores: ids, key and record
// codecs, field checks.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lib/base/field_check.h"
#include "lib/base/ids.h"
#include "lib/base/key_codec.h"
#include "lib/base/record_codec.h"

namespace ctxkit::internal {
namespace {

TEST_CASE("NewUuid gives distinct version-4 ids in canonical form") {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const std::string id = NewUuid();
    REQUIRE(IsUuid(id));
    CHECK(id[14] == '4');
    CHECK(std::string_view("89ab").find(id[19]) != std::string_view::npos);
    CHECK(id == [&] {
      std::string lower = id;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      return lower;
    }());
    seen.insert(id);
  }
  CHECK(seen.size() == 10000);
}

TEST_CASE("NewTimeOrderedUuid: version 7, its milliseconds first, sorted") {
  // 2024-01-01T00:00:00Z = 0x018cc251f400 ms.
  const std::string id = NewTimeOrderedUuid(int64_t{1704067200000});
  REQUIRE(IsUuid(id));
  CHECK(id.substr(0, 13) == "018cc251-f400");
  CHECK(id[14] == '7');
  CHECK(std::string_view("89ab").find(id[19]) != std::string_view::npos);
  // One millisecond: distinct by their random bits. Later ones sort after.
  std::set<std::string> same_ms;
  for (int i = 0; i < 10000; ++i) {
    same_ms.insert(NewTimeOrderedUuid(int64_t{1704067200000}));
  }
  CHECK(same_ms.size() == 10000);
  CHECK(*same_ms.rbegin() < NewTimeOrderedUuid(int64_t{1704067200001}));
  CHECK(NewTimeOrderedUuid(int64_t{0xfffffffffff}) <
        NewTimeOrderedUuid(int64_t{0x100000000000}));
}

TEST_CASE("NewUuid from many threads never repeats") {
  std::vector<std::vector<std::string>> ids(8);
  std::vector<std::thread> threads;
  for (auto& out : ids) {
    threads.emplace_back([&out] {
      for (int i = 0; i < 2000; ++i) out.push_back(NewUuid());
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& v : ids) all.insert(v.begin(), v.end());
  CHECK(all.size() == 16000);
}

TEST_CASE("IsUuid accepts the canonical shape only") {
  CHECK(IsUuid("550e8400-e29b-41d4-a716-446655440000"));
  CHECK(IsUuid("550E8400-E29B-41D4-A716-446655440000"));
  CHECK_FALSE(IsUuid(""));
  CHECK_FALSE(IsUuid("550e8400e29b41d4a716446655440000"));
  CHECK_FALSE(IsUuid("550e8400-e29b-41d4-a716-44665544000"));
  CHECK_FALSE(IsUuid("550e8400-e29b-41d4-a716-4466554400000"));
  CHECK_FALSE(IsUuid("550e8400-e29b-41d4-a716_446655440000"));
  CHECK_FALSE(IsUuid("g50e8400-e29b-41d4-a716-446655440000"));
}

TEST_CASE("big-endian keys sort as their numbers") {
  const std::vector<uint64_t> values = {
      0, 1, 255, 256, 65535, 1ull << 32, (1ull << 63) - 1, 1ull << 63, ~0ull};
  std::vector<std::string> keys;
  for (uint64_t v : values) {
    std::string k;
    AppendBigEndian64(&k, v);
    REQUIRE(k.size() == 8);
    CHECK(ReadBigEndian64(k.data()) == v);
    keys.push_back(k);
  }
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  std::string k32;
  AppendBigEndian32(&k32, 0xDEADBEEF);
  CHECK(ReadBigEndian32(k32.data()) == 0xDEADBEEFu);

  const std::vector<int64_t> times = {INT64_MIN, -1000,         -1,       0,
                                      1,         1700000000000, INT64_MAX};
  std::vector<std::string> time_keys;
  for (int64_t t : times) {
    std::string k;
    AppendBigEndian64(&k, OrderedFromSigned(t));
    CHECK(SignedFromOrdered(ReadBigEndian64(k.data())) == t);
    time_keys.push_back(k);
  }
  CHECK(std::is_sorted(time_keys.begin(), time_keys.end()));
}

TEST_CASE("RecordReader reads varints the same near the end and far from it") {
  const uint64_t values[] = {
      0,           1, 127, 128, 300, uint64_t{1} << 41, (uint64_t{1} << 63) - 1,
      ~uint64_t{0}};
  for (const uint64_t v : values) {
    CAPTURE(v);
    std::string encoded;
    PutVarint(&encoded, v);
    // Alone (the bounds-checked loop) and followed by ten bytes (the loop
    // that needs no bounds check), then the next field.
    for (const std::string& tail : {std::string(), std::string(10, '\x7f')}) {
      const std::string record = encoded + tail;  // RecordReader keeps a view
      RecordReader in(record);
      uint64_t got = 1;
      CHECK(in.GetVarint(&got));
      CHECK(got == v);
      if (!tail.empty()) {
        uint8_t next = 0;
        CHECK(in.GetByte(&next));
        CHECK(next == 0x7f);
      } else {
        CHECK(in.AtEnd());
      }
    }
  }
  // Eleven continuation bytes: too long in both loops, and the reader stays
  // failed.
  for (const size_t extra : {size_t{0}, size_t{10}}) {
    const std::string record =
        std::string(11, '\x80') + std::string(extra, '\0');
    RecordReader in(record);
    uint64_t got = 1;
    CHECK_FALSE(in.GetVarint(&got));
    CHECK(got == 0);
    CHECK_FALSE(in.ok());
    CHECK_FALSE(in.GetVarint(&got));
  }
  // Cut short before its last byte.
  const std::string two("\xff\xff", 2);
  RecordReader cut(two);
  uint64_t got = 1;
  CHECK_FALSE(cut.GetVarint(&got));
  CHECK_FALSE(cut.ok());
}

TEST_CASE("RecordReader reads eight big-endian bytes, or fails short of them") {
  std::string eight;
  AppendBigEndian64(&eight, 0x0102030405060708);
  const std::string nine = eight + "x";
  RecordReader in(nine);
  uint64_t v = 0;
  CHECK(in.GetBigEndian64(&v));
  CHECK(v == 0x0102030405060708);
  CHECK_FALSE(in.GetBigEndian64(&v));
  CHECK(v == 0);
  CHECK_FALSE(in.ok());
  RecordReader seven(std::string_view(eight).substr(0, 7));
  CHECK_FALSE(seven.GetBigEndian64(&v));
}

TEST_CASE("CheckText names the field and the problem") {
  CHECK(CheckText("title", "ok", 10).ok());
  CHECK(CheckText("title", "", 10, /*allow_empty=*/true).ok());
  absl::Status s = CheckText("title", "", 10);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() == "title must not be empty");
  s = CheckText("content", std::string(11, 'x'), 10);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() == "content is 11 bytes; the limit is 10");
  s = CheckText("content", "ab\xC3", 10);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message().find("content is not valid UTF-8") == 0);
  CHECK(s.message().find("offset 2") != std::string_view::npos);
}

TEST_CASE("CheckRange names the field and the range") {
  CHECK(CheckRange("limit", 5, 1, 1000).ok());
  CHECK(CheckRange("limit", 1, 1, 1000).ok());
  CHECK(CheckRange("limit", 1000, 1, 1000).ok());
  const absl::Status s = CheckRange("limit", -1, 1, 1000);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() == "limit is -1; it must be between 1 and 1000");
}

}  // namespace
}  // namespace ctxkit::internal
