// A C++ program using an installed ctxkit through its public C++ headers.
//
// Usage: consumer_cxx <scratch directory>
// Prints "OK" and returns 0 only if every check holds; otherwise names each
// failed check on stderr and returns 1.
#include <ctxkit/c.h>
#include <ctxkit/status.h>
#include <ctxkit/store.h>
#include <ctxkit/version.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace {

int failures = 0;

#define CHECK(cond)                                                         \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                  \
      ++failures;                                                           \
    }                                                                       \
  } while (0)

bool CheckOk(const char* what, const ctxkit::Status& status) {
  if (status.ok()) return true;
  std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
  ++failures;
  return false;
}

int Run(const std::string& scratch) {
  CHECK(ctxkit_version_number() == CTXKIT_VERSION_NUMBER);
  CHECK(std::strcmp(ctxkit_version_string(), CTXKIT_VERSION_STRING) == 0);
  CHECK(std::string_view(ctxkit::StatusCodeName(
            ctxkit::StatusCode::kNotFound)) == "NOT_FOUND");

  ctxkit::StoreOptions options;
  options.map_size = ctxkit::StoreOptions::kMinMapSize * 2;
  options.max_map_size = options.map_size * 32;
  const std::string path = scratch + "/store_cxx";

  auto store = ctxkit::Store::Open(path, options);
  if (!CheckOk("Store::Open", store.status())) return 1;
  CHECK((*store)->path() == path);
  CHECK(!(*store)->read_only());

  auto db = (*store)->OpenDatabase("notes");
  if (!CheckOk("OpenDatabase", db.status())) return 1;
  CHECK(db->valid());

  CheckOk("Update", (*store)->Update([&](ctxkit::WriteTransaction& txn) {
    return txn.Put(*db, "greeting", "hello, world");
  }));

  {
    auto read = (*store)->BeginRead();
    if (CheckOk("BeginRead", read.status())) {
      auto value = read->Get(*db, "greeting");
      if (CheckOk("Get(greeting)", value.status())) {
        CHECK(*value == "hello, world");
      }
      auto absent = read->Get(*db, "absent");
      CHECK(absent.status().code() == ctxkit::StatusCode::kNotFound);
      auto count = read->Count(*db);
      if (CheckOk("Count", count.status())) CHECK(*count == 1);
    }
  }  // The read transaction ends before the store closes.

  auto info = (*store)->Info();
  if (CheckOk("Info", info.status())) {
    CHECK(info->format_version == ctxkit::Store::kFormatVersion);
    CHECK(!info->read_only);
    CHECK(info->map_size >= options.map_size);
    bool found = false;
    for (const ctxkit::DatabaseInfo& d : info->databases) {
      if (d.name == "notes") {
        found = true;
        CHECK(d.entries == 1);
      }
    }
    CHECK(found);

    auto json = ctxkit::StoreInfoToJson(*info);
    if (CheckOk("StoreInfoToJson", json.status())) {
      CHECK(json->find("\"schema_version\"") != std::string::npos);
      CHECK(json->find("\"notes\"") != std::string::npos);
    }
  }

  // The error path: the parent directory does not exist.
  auto missing =
      ctxkit::Store::Open(scratch + "/no-such-parent/store", options);
  CHECK(!missing.ok());
  CHECK(missing.status().code() == ctxkit::StatusCode::kNotFound);
  CHECK(!missing.status().message().empty());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <scratch directory>\n", argv[0]);
    return 2;
  }
  const int rc = Run(argv[1]);
  if (rc != 0 || failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
