// `demo`: the program's main job on a built-in default. It exercises the
// store end to end (create, register a sub-database, one write transaction,
// reads through Get and a Cursor, Info), counts the notes' tokens with the
// exact tokenizers and compacts a built-in agent session to a budget.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ctxkit/tokenizer.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/demo_compaction.h"
#include "programs/ctxkit/cli/demo_mcp.h"
#include "programs/ctxkit/cli/store_location.h"
#include "programs/ctxkit/host/files.h"
#include "programs/ctxkit/host/text.h"

namespace ctxkit::program {

const Flag kDemoDbFlag{
    "--db", "PATH",
    "keep the demo's store in this directory (its parent must exist)"};

namespace {

constexpr std::string_view kDatabaseName = "demo";
constexpr int kRecords = 1000;
constexpr std::string_view kGetKey = "note:0042";
constexpr std::string_view kSeekPrefix = "note:050";
constexpr size_t kShownRecords = 3;

constexpr std::array<std::string_view, 8> kPhrases = {
    "pin the system prompt",
    "summarize old turns, keep the last ones whole",
    "count tokens before sending",
    "drop filler words from the query",
    "cache the answer to a repeated prompt",
    "link this context to the ones it builds on",
    "recall beats re-reading the whole history",
    "keep tool results short",
};

using Clock = std::chrono::steady_clock;

std::string Key(int number) {
  char key[16];
  std::snprintf(key, sizeof(key), "note:%04d", number);
  return key;
}

std::string Value(int number) {
  return "note " + std::to_string(number) + ": " +
         std::string(kPhrases[static_cast<size_t>(number) % kPhrases.size()]);
}

std::string Shown(std::string_view text) {
  return "\"" + Printable(text) + "\"";
}

// The demo proper, on the store at `location`; the caller owns the
// directory's lifetime, so the store is closed by the time this returns.
Status RunDemoIn(const StoreLocation& location, bool temporary,
                 std::ostream& out) {
  auto store = OpenStoreForWriting(location);
  if (!store.ok()) return store.status();
  out << "demo store: " << Printable(location.path)
      << (temporary ? "  (temporary, removed when the demo ends)" : "") << "\n";
  auto database = (*store)->OpenDatabase(kDatabaseName);
  if (!database.ok()) return database.status();

  // Built beforehand so that the timing below measures the store alone.
  std::vector<std::pair<std::string, std::string>> records;
  records.reserve(kRecords);
  uint64_t bytes = 0;
  for (int number = 1; number <= kRecords; ++number) {
    records.emplace_back(Key(number), Value(number));
    bytes += records.back().first.size() + records.back().second.size();
  }

  const Clock::time_point write_start = Clock::now();
  Status written = (*store)->Update([&](WriteTransaction& txn) {
    for (const auto& [key, value] : records) {
      if (Status put = txn.Put(*database, key, value); !put.ok()) return put;
    }
    return Status::Ok();
  });
  if (!written.ok()) return written;
  const Clock::duration write_time = Clock::now() - write_start;
  out << "wrote " << kRecords << " records " << records.front().first << " .. "
      << records.back().first << " (" << FormatBytes(bytes)
      << " of keys and values)\n  to database \"" << kDatabaseName
      << "\" in one write transaction, committed and synced in "
      << FormatDuration(write_time) << "\n";

  const Clock::time_point read_start = Clock::now();
  uint64_t count = 0;
  std::string got;
  std::vector<std::pair<std::string, std::string>> shown;
  size_t matching = 0;
  {
    auto txn = (*store)->BeginRead();
    if (!txn.ok()) return txn.status();
    auto counted = txn->Count(*database);
    if (!counted.ok()) return counted.status();
    count = *counted;
    auto value = txn->Get(*database, kGetKey);
    if (!value.ok()) return value.status();
    got = std::string(*value);  // the view dies with the transaction
    // The cursor lives in this inner scope: it must go before `txn`.
    auto cursor = txn->NewCursor(*database);
    if (!cursor.ok()) return cursor.status();
    for (cursor->Seek(kSeekPrefix);
         cursor->Valid() && cursor->key().starts_with(kSeekPrefix);
         cursor->Next()) {
      if (shown.size() < kShownRecords) {
        shown.emplace_back(cursor->key(), cursor->value());
      }
      ++matching;
    }
    if (!cursor->status().ok()) return cursor->status();
  }
  const Clock::duration read_time = Clock::now() - read_start;

  const auto label = [](std::string text) {
    text.resize(std::max<size_t>(text.size(), 20), ' ');
    return "  " + text;
  };
  out << "read back from one snapshot in " << FormatDuration(read_time) << ":\n"
      << label("Count") << count << " records\n"
      << label("Get(" + Shown(kGetKey) + ")") << Shown(got) << "\n"
      << label("Seek(" + Shown(kSeekPrefix) + ")") << matching
      << " records with that prefix, the first " << shown.size() << ":\n";
  for (const auto& [key, value] : shown) {
    out << label("  " + Printable(key)) << Shown(value) << "\n";
  }

  // The same notes through the exact tokenizers, as a context window sees
  // them.
  std::vector<std::string_view> texts;
  for (const auto& record : records) texts.push_back(record.second);
  out << "tokens in the " << kRecords << " notes:\n";
  for (const char* encoding : {"o200k_base", "cl100k_base"}) {
    // Loading the vocabulary is most of the cost of a first count; it is
    // paid once per process, so it is shown apart from the count itself.
    const Clock::time_point load_start = Clock::now();
    auto tokenizer = Tokenizer::ForEncoding(encoding);
    if (!tokenizer.ok()) return tokenizer.status();
    const Clock::time_point count_start = Clock::now();
    auto counts = (*tokenizer)->CountMany(texts, 1);
    if (!counts.ok()) return counts.status();
    const Clock::time_point count_end = Clock::now();
    size_t total = 0;
    for (size_t n : *counts) total += n;
    out << label(std::string("  ") + encoding) << total
        << " tokens: vocabulary loaded in "
        << FormatDuration(count_start - load_start)
        << " (once per process), counted in "
        << FormatDuration(count_end - count_start) << "\n";
  }
  if (Status compacted = RunCompactionDemo(out); !compacted.ok()) {
    return compacted;
  }
  // The same store, written by a second process: LMDB shares it.
  if (Status served = RunMcpDemo(location.path, out); !served.ok()) {
    return served;
  }
  out << "\n";

  auto info = (*store)->Info();
  if (!info.ok()) return info.status();
  PrintStoreInfoText(*info, out, /*only_used=*/true);
  out << "\nnext steps:\n"
      << "  ctxkit count --text 'hello world' --model gpt-4o   count tokens\n"
      << "  ctxkit compact --max-tokens 2000 chat.json        fit a chat "
         "history to a budget\n"
      << "  ctxkit conv create --title notes                   keep a "
         "conversation in the store\n"
      << "  ctxkit mcp                                         serve every "
         "tool to an MCP client\n"
      << "  ctxkit help                                        all commands; "
         "ctxkit man for the manual\n";
  return Status::Ok();
}

}  // namespace

Status RunDemo(const Args& args, std::ostream& out) {
  std::optional<TemporaryDirectory> directory;
  StoreLocation location;
  if (const std::string* db = args.Value(kDemoDbFlag.name)) {
    location.path = *db;
  } else {
    auto created = TemporaryDirectory::Create("ctxkit-demo-");
    if (!created.ok()) return created.status();
    directory.emplace(*std::move(created));
    location.path = directory->path();
  }
  Status status = RunDemoIn(location, directory.has_value(), out);
  if (directory.has_value()) {
    // Reported only when the demo itself worked: its own error matters more.
    Status removed = directory->Remove();
    if (status.ok()) status = std::move(removed);
  }
  return status;
}

}  // namespace ctxkit::program
