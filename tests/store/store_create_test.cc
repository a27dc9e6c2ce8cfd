// When Store::Open creates a store: only in a missing or empty directory,
// only when create_if_missing allows it, and never among a directory's other
// files, so that a mistyped path is reported instead of becoming a store.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ctxkit/store.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

namespace fs = std::filesystem;

using testing::Contains;

size_t Entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST_CASE("a directory holding other files is never made a store") {
  testing::TempDir dir;
  const std::string project = dir.Sub("project");
  fs::create_directories(project + "/src");
  std::ofstream(project + "/README.md") << "# notes\n";

  auto store = Store::Open(project);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kFailedPrecondition);
  CHECK(Contains(store.status().message(), "'" + project + "'"));
  CHECK(Contains(store.status().message(), "not empty"));
  // It names one of the files, so the user sees which directory it is.
  CHECK((Contains(store.status().message(), "'README.md'") ||
         Contains(store.status().message(), "'src'")));
  CHECK(Entries(project) == 2);  // nothing was added

  // Read-only and no-create opens say there is no store.
  StoreOptions read_only;
  read_only.read_only = true;
  CHECK(Store::Open(project, read_only).status().code() ==
        StatusCode::kNotFound);
  StoreOptions existing;
  existing.create_if_missing = false;
  CHECK(Store::Open(project, existing).status().code() ==
        StatusCode::kNotFound);
  CHECK(Entries(project) == 2);
}

TEST_CASE("a missing or empty directory becomes a store") {
  testing::TempDir dir;
  CHECK(Store::Open(dir.Sub("missing")).ok());
  CHECK(fs::exists(dir.Sub("missing/data.mdb")));

  fs::create_directory(dir.Sub("empty"));
  CHECK(Store::Open(dir.Sub("empty")).ok());
  CHECK(fs::exists(dir.Sub("empty/data.mdb")));

  // lock.mdb alone is what an interrupted creation leaves behind.
  fs::create_directory(dir.Sub("half"));
  std::ofstream(dir.Sub("half/lock.mdb")).put('\0');
  CHECK(Store::Open(dir.Sub("half")).ok());
}

TEST_CASE("create_if_missing = false never creates anything") {
  testing::TempDir dir;
  StoreOptions existing;
  existing.create_if_missing = false;

  auto missing = Store::Open(dir.Sub("missing"), existing);
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_FALSE(fs::exists(dir.Sub("missing")));

  // Before this option covered the store as well as its directory, an
  // existing empty directory was silently made a store.
  fs::create_directory(dir.Sub("empty"));
  auto empty = Store::Open(dir.Sub("empty"), existing);
  CHECK(empty.status().code() == StatusCode::kNotFound);
  CHECK(Contains(empty.status().message(), "holds no data.mdb"));
  CHECK(Entries(dir.Sub("empty")) == 0);

  // An existing store opens read-write, even beside other files.
  { REQUIRE(Store::Open(dir.Sub("s")).ok()); }
  std::ofstream(dir.Sub("s/notes.txt")) << "kept beside the store\n";
  auto opened = Store::Open(dir.Sub("s"), existing);
  REQUIRE(opened.ok());
  CHECK_FALSE((*opened)->read_only());
  auto db = (*opened)->OpenDatabase("notes");
  REQUIRE(db.ok());
  CHECK((*opened)
            ->Update(
                [&](WriteTransaction& txn) { return txn.Put(*db, "k", "v"); })
            .ok());
}

}  // namespace
}  // namespace ctxkit
