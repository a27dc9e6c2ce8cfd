// `store info`, `store check` and `store init`.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ctxkit/store_check.h"
#include "programs/ctxkit/cli/commands.h"
#include "programs/ctxkit/cli/store_location.h"
#include "programs/ctxkit/host/text.h"

namespace ctxkit::program {

namespace {

std::string PadLeft(const std::string& text, size_t width) {
  return text.size() >= width ? text
                              : std::string(width - text.size(), ' ') + text;
}

std::string PadRight(const std::string& text, size_t width) {
  return text.size() >= width ? text
                              : text + std::string(width - text.size(), ' ');
}

std::string BytesWithUnit(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + FormatBytes(bytes) + ")";
}

Status PrintInfo(const Store& store, bool json, std::ostream& out) {
  auto info = store.Info();
  if (!info.ok()) return info.status();
  if (json) {
    auto document = StoreInfoToJson(*info);
    if (!document.ok()) return document.status();
    out << *document << "\n";
  } else {
    PrintStoreInfoText(*info, out);
  }
  return Status::Ok();
}

}  // namespace

void PrintStoreInfoText(const StoreInfo& info, std::ostream& out,
                        bool only_used) {
  const auto line = [&](const char* label, const std::string& value) {
    out << PadRight(label, 18) << value << "\n";
  };
  line("path", Printable(info.path));
  line("format version", std::to_string(info.format_version));
  line("map size", BytesWithUnit(info.map_size));
  line("max map size", BytesWithUnit(info.max_map_size));
  line("page size", std::to_string(info.page_size) + " bytes");
  const uint64_t used_bytes = info.used_pages * info.page_size;
  line("used pages", std::to_string(info.used_pages) + " (" +
                         std::to_string(used_bytes) + " bytes, " +
                         FormatBytes(used_bytes) + ")");
  line("last transaction", std::to_string(info.last_transaction_id));
  line("readers", std::to_string(info.readers_in_use) + " in use of " +
                      std::to_string(info.max_readers));

  // A table sized to its contents; names may come from other programs, so
  // they are made printable first.
  const std::string headers[] = {"database", "entries", "pages", "depth"};
  std::vector<std::array<std::string, 4>> rows;
  size_t empty = 0;
  for (const DatabaseInfo& database : info.databases) {
    if (only_used && database.entries == 0) {
      ++empty;
      continue;
    }
    rows.push_back({Printable(database.name), std::to_string(database.entries),
                    std::to_string(database.pages),
                    std::to_string(database.depth)});
  }
  size_t widths[4];
  for (size_t column = 0; column < 4; ++column) {
    widths[column] = headers[column].size();
    for (const auto& row : rows) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  const auto print_row = [&](const std::string* cells) {
    out << PadRight(cells[0], widths[0]);
    for (size_t column = 1; column < 4; ++column) {
      out << "  " << PadLeft(cells[column], widths[column]);
    }
    out << "\n";
  };
  out << "\n";  // a blank line between the figures and the table
  print_row(headers);
  for (const auto& row : rows) print_row(row.data());
  if (empty > 0) {
    out << "(and " << empty << " empty "
        << (empty == 1 ? "database" : "databases") << ")\n";
  }
}

Status RunStoreInfo(const Args& args, std::ostream& out) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForReading(*location);
  if (!store.ok()) return store.status();
  return PrintInfo(**store, args.Has(kJsonFlag.name), out);
}

Status RunStoreCheck(const Args& args, std::ostream& out) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForReading(*location);
  if (!store.ok()) return store.status();
  auto report = CheckStore(**store);
  if (!report.ok()) return report.status();
  if (args.Has(kJsonFlag.name)) {
    out << StoreCheckReportToJson(*report) << "\n";
    return Status::Ok();
  }
  const StoreCheckReport& r = *report;
  out << "store " << Printable(r.path) << " is whole as of transaction "
      << r.transaction_id << "\n";
  out << "pages: " << r.pages << " of " << r.page_size << " bytes; "
      << r.used_pages << " used, " << r.free_pages << " free";
  if (r.unaccounted_pages > 0) {
    out << ", " << r.unaccounted_pages
        << " leaked by an interrupted write (reclaimed by mdb_copy -c)";
  }
  out << "\n";
  out << "trees: " << r.trees.size() << " walked\n";
  out << "recounted: " << r.conversations << " conversations, " << r.messages
      << " messages, " << r.references << " references, " << r.cache_entries
      << " cache entries, " << r.contexts << " contexts, " << r.relationships
      << " relationships\n";
  return Status::Ok();
}

Status RunStoreInit(const Args& args, std::ostream& out) {
  auto location = ResolveStoreLocation(args);
  if (!location.ok()) return location.status();
  auto store = OpenStoreForWriting(*location);
  if (!store.ok()) return store.status();
  return PrintInfo(**store, args.Has(kJsonFlag.name), out);
}

}  // namespace ctxkit::program
