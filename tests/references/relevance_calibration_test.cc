// The relevance scale of references.h measured on real documents: the man
// pages named in data/man_relevance.tsv, judged on or off topic for each
// query by hand before any score was seen. The pages are rendered with the
// system's `man` (Debian's man pages, not copied into the repository) into
// the build tree once; without `man` or with pages missing the test says so
// and checks what it has, or nothing.
//
// The bands checked are the documented ones: a page about the query scores
// >= 0.7 and one that only holds its words < 0.5. The tuning half may have
// shaped the formula; the held-out half only measures it, so its figures
// are the ones to quote.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ctxkit/references.h"
#include "ctxkit/store.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

struct Judgment {
  std::string split;  // "tune" or "held"
  std::string query;
  std::string page;  // name.section
  bool on_topic = false;
};

std::vector<Judgment> ReadJudgments(const std::string& path) {
  std::vector<Judgment> out;
  testing::ForEachTableRow(path, [&](int number, std::vector<std::string> f) {
    REQUIRE_MESSAGE(f.size() == 4, path, ":", number, ": want 4 fields");
    REQUIRE_MESSAGE((f[0] == "tune" || f[0] == "held"), path, ":", number);
    REQUIRE_MESSAGE((f[3] == "on" || f[3] == "off"), path, ":", number);
    out.push_back({f[0], f[1], f[2], f[3] == "on"});
  });
  return out;
}

// The page rendered as `man` shows it at 80 columns, cached under `dir`;
// empty when it cannot be had.
std::string RenderedPage(const std::string& page, const std::string& dir) {
  const std::filesystem::path cached = std::filesystem::path(dir) / page;
  std::ifstream in(cached);
  if (in.good()) {
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  const size_t dot = page.rfind('.');
  if (dot == std::string::npos) return "";
  const std::string name = page.substr(0, dot);
  const std::string section = page.substr(dot + 1);
  // Names come from the judged table: letters, digits, '-', '_' only.
  for (char c : name + section) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
      return "";
    }
  }
  const std::string command = "MANWIDTH=80 MAN_KEEP_FORMATTING= man -P cat " +
                              section + " " + name + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string text;
  char buf[8192];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;)
    text.append(buf, n);
  if (pclose(pipe) != 0) return "";
  // Overstrikes (x\bx, _\bx) would split words; man -P cat leaves none
  // when it knows the output is not a terminal, but be sure.
  std::string clean;
  for (char c : text) {
    if (c == '\b') {
      if (!clean.empty()) clean.pop_back();
    } else {
      clean += c;
    }
  }
  std::filesystem::create_directories(dir);
  std::ofstream(cached) << clean;
  return clean;
}

struct Band {
  int on = 0, on_high = 0, off = 0, off_low = 0;
  double OnShare() const { return on == 0 ? 0 : double(on_high) / on; }
  double OffShare() const { return off == 0 ? 0 : double(off_low) / off; }
};

TEST_CASE("relevance bands on judged man pages, tuning and held out") {
  const std::vector<Judgment> judgments =
      ReadJudgments(CTXKIT_MAN_RELEVANCE_TABLE);
  REQUIRE(judgments.size() >= 300);  // the table cannot silently shrink

  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  // Token counts play no part here; the heuristic counter (an unknown
  // model) spares a Debug build seconds of tokenizing 3 MB of text.
  ReferenceStoreOptions options;
  options.model = "calibration-heuristic";
  auto refs = ReferenceStore::Open(**store, options);
  REQUIRE(refs.ok());
  std::map<std::string, std::string> ids;  // page -> reference id
  std::set<std::string> missing;
  for (const Judgment& j : judgments) {
    if (ids.count(j.page) != 0 || missing.count(j.page) != 0) continue;
    const std::string text = RenderedPage(j.page, CTXKIT_MAN_PAGE_CACHE);
    if (text.empty()) {
      missing.insert(j.page);
      continue;
    }
    NewReference in;
    in.type = "document";
    in.title = j.page.substr(0, j.page.rfind('.')) + "(" +
               j.page.substr(j.page.rfind('.') + 1) + ")";
    in.content = text;
    auto added = (*refs)->Add(in);
    REQUIRE_MESSAGE(added.ok(), added.status().ToString());
    ids[j.page] = added->id;
  }
  if (ids.size() < 50) {
    MESSAGE("skipped: only ", ids.size(),
            " of the judged man pages could be rendered (is man-db "
            "installed with its pages?)");
    return;
  }
  if (!missing.empty()) {
    MESSAGE(missing.size(), " judged pages missing here; their rows skipped");
  }

  std::map<std::string, std::map<std::string, double>> relevance;
  std::map<std::string, Band> bands;
  std::ostringstream table;
  int pairs = 0, falling = 0;  // adjacent results; relevance not rising
  for (const Judgment& j : judgments) {
    if (ids.count(j.page) == 0) continue;
    if (relevance.count(j.query) == 0) {
      SearchReferencesOptions o;
      o.query = j.query;
      o.limit = ReferenceLimits::kMaxSearchLimit;
      auto found = (*refs)->Search(o);
      REQUIRE_MESSAGE(found.ok(), found.status().ToString());
      auto& scores = relevance[j.query];
      // Over the first ten, what a person sees by default.
      for (size_t i = 1; i < std::min<size_t>(10, found->results.size()); ++i) {
        ++pairs;
        falling +=
            found->results[i].relevance <= found->results[i - 1].relevance;
      }
      for (const ReferenceSearchResult& r : found->results) {
        for (const auto& [page, id] : ids) {
          if (id == r.id) scores[page] = r.relevance;
        }
      }
    }
    // A page the search does not return scores 0.
    const double r = relevance[j.query][j.page];
    Band& b = bands[j.split];
    if (j.on_topic) {
      ++b.on;
      b.on_high += r >= 0.7;
    } else {
      ++b.off;
      b.off_low += r < 0.5;
    }
    const bool wrong = j.on_topic ? r < 0.7 : r >= 0.5;
    if (wrong) {
      table << "  " << j.split << " \"" << j.query << "\" " << j.page << " ("
            << (j.on_topic ? "on" : "off") << "): " << r << "\n";
    }
  }
  for (const auto& [split, b] : bands) {
    MESSAGE(split, ": on-topic >= 0.7: ", b.on_high, "/", b.on, " (",
            b.OnShare(), "); off-topic < 0.5: ", b.off_low, "/", b.off, " (",
            b.OffShare(), ")");
  }
  MESSAGE("outside their band:\n", table.str());
  // Ranking stays BM25's; relevance mostly follows it, and rises where a
  // result that says it is about the query ranks below one that only holds
  // its words (for "remove files", rm(1) ranks under strip(1)): that is
  // what it is for. 307 of 414 pairs when measured.
  MESSAGE("top-10 neighbours whose relevance does not rise: ", falling, "/",
          pairs);
  CHECK(falling >= pairs * 7 / 10);
  // Floors a little under what each half measured when the scale was set
  // (tuning 25/31 on-topic >= 0.7 and 165/170 off-topic < 0.5; held out
  // 22/32 and 151/164), so a change that breaks the calibration fails here.
  // The old share^2 * strength scale gave 29/31 and 40/170 (tuning), 27/32
  // and 50/164 (held out): off-topic pages mostly scored >= 0.5.
  REQUIRE(bands.size() == 2);
  CHECK(bands["tune"].on >= 25);
  CHECK(bands["tune"].off >= 150);
  CHECK(bands["held"].on >= 25);
  CHECK(bands["held"].off >= 150);
  CHECK(bands["tune"].OnShare() >= 0.75);
  CHECK(bands["tune"].OffShare() >= 0.93);
  CHECK(bands["held"].OnShare() >= 0.62);
  CHECK(bands["held"].OffShare() >= 0.88);
}

}  // namespace
}  // namespace ctxkit
