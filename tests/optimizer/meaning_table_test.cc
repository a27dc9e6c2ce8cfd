// The meaning table: sentences whose meaning hangs on a negation, a
// restriction, a condition, a quantity, quoted text, a hedge or a token
// budget, each with what the optimizer may make of it (meaning_table.tsv
// describes the format). Word-preservation tests elsewhere cannot see these
// failures: "Don't just copy" -> "Don't copy" keeps every content word.

#include <doctest/doctest.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/query_optimizer.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

struct Row {
  int line = 0;
  std::string category;
  std::optional<int64_t> max_tokens;
  std::string input;
  std::vector<std::string> checks;
};

// The table's escapes (\t, \n, \\); any other backslash is itself, so that
// regular expressions in the rows read naturally.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char n = s[i + 1];
      if (n == 't' || n == 'n' || n == '\\') {
        out += n == 't' ? '\t' : n == 'n' ? '\n' : '\\';
        ++i;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<Row> ReadTable(const char* path) {
  std::vector<Row> rows;
  testing::ForEachTableRow(path, [&](int number, std::vector<std::string> f) {
    REQUIRE_MESSAGE(f.size() >= 4, path, ":", number, ": too few fields");
    for (std::string& field : f) field = Unescape(field);
    Row row;
    row.line = number;
    row.category = f[0];
    if (f[1] != "-") row.max_tokens = std::strtoll(f[1].c_str(), nullptr, 10);
    row.input = f[2];
    row.checks.assign(f.begin() + 3, f.end());
    rows.push_back(std::move(row));
  });
  return rows;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '\'' || c == '_';
}

// Where `phrase` next occurs in `text` at or after `from` as whole words
// (ASCII case ignored), and where that occurrence ends; nullopt if nowhere.
std::optional<size_t> FindWords(std::string_view text, std::string_view phrase,
                                size_t from) {
  const std::string t = Lower(text);
  const std::string p = Lower(phrase);
  for (size_t at = t.find(p, from); at != std::string::npos;
       at = t.find(p, at + 1)) {
    const size_t end = at + p.size();
    const bool starts =
        !IsWordChar(p.front()) || at == 0 || !IsWordChar(t[at - 1]);
    const bool ends =
        !IsWordChar(p.back()) || end == t.size() || !IsWordChar(t[end]);
    if (starts && ends) return end;
  }
  return std::nullopt;
}

std::vector<std::string> Alternatives(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t bar = s.find('|', start);
    out.emplace_back(s.substr(start, bar == std::string_view::npos
                                         ? std::string_view::npos
                                         : bar - start));
    if (bar == std::string_view::npos) return out;
    start = bar + 1;
  }
}

QueryOptimization Optimize(std::string_view query,
                           std::optional<int64_t> max_tokens) {
  OptimizeOptions o;
  o.max_tokens = max_tokens;
  StatusOr<QueryOptimization> r = QueryOptimizer::Default().Optimize(query, o);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *std::move(r);
}

// Empty when `row` holds; otherwise why not.
std::string Judge(const Row& row) {
  const QueryOptimization r = Optimize(row.input, row.max_tokens);
  const std::string& out = r.optimized_query;
  std::string why;
  std::vector<std::string> exact;
  size_t keep_from = 0;
  for (const std::string& check : row.checks) {
    const size_t colon = check.find(':');
    const std::string kind =
        colon == std::string::npos ? check : check.substr(0, colon);
    const std::string arg =
        colon == std::string::npos ? std::string() : check.substr(colon + 1);
    if (!check.empty() && check[0] == '=') {
      exact.push_back(check.substr(1));
    } else if (check == "unchanged") {
      if (out != row.input) why += " changed;";
    } else if (check == "whole") {
      if (out != Optimize(row.input, std::nullopt).optimized_query) {
        why += " the budget removed text;";
      }
    } else if (kind == "keep") {
      std::optional<size_t> best;
      for (const std::string& alt : Alternatives(arg)) {
        const std::optional<size_t> end = FindWords(out, alt, keep_from);
        if (end && (!best || *end < *best)) best = end;
      }
      if (best) {
        keep_from = *best;
      } else {
        why += " lost (in order) \"" + arg + "\";";
      }
    } else if (kind == "lacks") {
      if (FindWords(out, arg, 0)) why += " still has \"" + arg + "\";";
    } else if (kind == "bytes") {
      if (out.find(arg) == std::string::npos) {
        why += " altered \"" + arg + "\";";
      }
    } else {
      FAIL("line ", row.line, ": unknown check \"", check, "\"");
    }
  }
  if (!exact.empty()) {
    bool any = false;
    for (const std::string& e : exact) any = any || out == e;
    if (!any) why += " not one of the listed outputs;";
  }
  const bool over_budget =
      row.max_tokens &&
      r.optimized_tokens > static_cast<size_t>(*row.max_tokens);
  if (r.truncated || over_budget) {
    bool names_budget = false;
    for (const std::string& i : r.improvements) {
      if (i.find("max_tokens") != std::string::npos) names_budget = true;
      if (Lower(i).find("meaning") != std::string::npos) {
        why += " claims \"" + i + "\" after max_tokens;";
      }
    }
    if (!names_budget) why += " does not report max_tokens;";
  }
  if (!why.empty()) why = "-> \"" + out + "\":" + why;
  return why;
}

// Checks every row of the table at `path`. With `each_row`, every row must
// pass; otherwise (the held-out rows) a failing row is reported and at least
// `min_share` of the rows must pass: fixing held-out rows one by one would
// make them tuning rows, and the share is what they measure.
void RunTable(const char* path, bool each_row, double min_share = 1.0) {
  const std::vector<Row> rows = ReadTable(path);
  REQUIRE(!rows.empty());
  std::map<std::string, std::pair<int, int>> by_category;  // passed, total
  int passed = 0;
  for (const Row& row : rows) {
    const std::string why = Judge(row);
    auto& [category_passed, category_total] = by_category[row.category];
    ++category_total;
    if (why.empty()) {
      ++category_passed;
      ++passed;
    }
    if (why.empty()) continue;
    const std::string where = std::string(path) + ":" +
                              std::to_string(row.line) + " [" + row.category +
                              "] \"" + row.input + "\" " + why;
    if (each_row) {
      FAIL_CHECK(where);
    } else {
      MESSAGE("held-out row fails: ", where);
    }
  }
  std::ostringstream summary;
  summary << path << ": " << passed << "/" << rows.size() << " rows pass";
  for (const auto& [category, counts] : by_category) {
    summary << "; " << category << " " << counts.first << "/" << counts.second;
  }
  MESSAGE(summary.str());
  CHECK(static_cast<double>(passed) >=
        min_share * static_cast<double>(rows.size()));
}

TEST_CASE("meaning table: tuning rows") {
  RunTable(CTXKIT_MEANING_TABLE, /*each_row=*/true);
}

TEST_CASE("meaning table: held-out rows") {
  RunTable(CTXKIT_MEANING_TABLE_HELDOUT, /*each_row=*/false, 0.95);
}

}  // namespace
}  // namespace ctxkit
