// A store on a file system that fills up: the write that does not fit is
// RESOURCE_EXHAUSTED naming the file system and its free space (before, a
// short write read as "INTERNAL: ... Input/output error"), nothing of it is
// stored, every acknowledged write is still there and readable, and once
// space is freed the store takes writes again.
//
// The file system is a 2 MiB tmpfs mounted for the test, which needs root
// (CI runs as root); elsewhere the test says so and checks nothing.

#include <doctest/doctest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "ctxkit/conversations.h"
#include "ctxkit/store.h"
#include "ctxkit/store_check.h"
#include "tests/unit/test_util.h"

namespace ctxkit {
namespace {

namespace fs = std::filesystem;

using testing::Contains;
using testing::Must;
using testing::TempDir;

constexpr char kSize[] = "size=2m";

class SmallFileSystem {
 public:
  explicit SmallFileSystem(const std::string& at) : at_(at) {
    fs::create_directory(at_);
    mounted_ = mount("ctxkit-test", at_.c_str(), "tmpfs", 0, kSize) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~SmallFileSystem() {
    if (mounted_) umount2(at_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }

 private:
  std::string at_;
  bool mounted_ = false;
  std::string error_;
};

TEST_CASE("a full disk is RESOURCE_EXHAUSTED, loses nothing, and recovers") {
  TempDir tmp;
  const std::string mnt = tmp.Sub("small");
  SmallFileSystem small(mnt);
  if (!small.mounted()) {
    MESSAGE("not checked: mounting a tmpfs needs root (", small.error(), ")");
    return;
  }
  // A filler file to delete later, as a user frees space.
  const std::string filler = mnt + "/filler";
  {
    std::ofstream out(filler, std::ios::binary);
    out << std::string(512 << 10, 'f');
  }
  const std::string dir = mnt + "/store";
  StoreOptions options;
  options.map_size = StoreOptions::kMinMapSize;
  options.max_map_size = uint64_t{64} << 20;
  auto store = Must(Store::Open(dir, options));
  auto convs = Must(ConversationStore::Open(*store));
  Conversation conv = Must(convs->Create({.title = "filling"}));

  NewMessage msg;
  msg.role = MessageRole::kUser;
  msg.content = std::string(16 << 10, 'x');
  uint64_t acknowledged = 0;
  Status failure;
  for (int i = 0; i < 1000; ++i) {
    auto added = convs->AddMessage(conv.id, msg);
    if (!added.ok()) {
      failure = added.status();
      break;
    }
    ++acknowledged;
  }
  REQUIRE_MESSAGE(!failure.ok(), "2 MiB never filled");
  CHECK(acknowledged > 10);
  INFO(failure.ToString());
  CHECK(failure.code() == StatusCode::kResourceExhausted);
  CHECK(Contains(failure.message(), "the disk is full"));
  CHECK(Contains(failure.message(), "'" + mnt + "'"));
  CHECK(Contains(failure.message(), "bytes free of"));
  CHECK(Contains(failure.message(), "Nothing was written"));

  // Still readable, with every acknowledged message and nothing else.
  ConversationDetail detail = Must(convs->Get(conv.id, true));
  CHECK(detail.messages.size() == acknowledged);
  CHECK(detail.conversation.message_count == acknowledged);
  CHECK(Must(CheckStore(*store)).messages == acknowledged);

  // Space freed: writes are taken again.
  fs::remove(filler);
  Must(convs->AddMessage(conv.id, msg));
  CHECK(Must(convs->Get(conv.id, false)).conversation.message_count ==
        acknowledged + 1);

  // And a fresh open sees the same, whole.
  convs.reset();
  store.reset();
  StoreOptions read_only;
  read_only.read_only = true;
  auto reopened = Must(Store::Open(dir, read_only));
  StoreCheckReport report = Must(CheckStore(*reopened));
  CHECK(report.messages == acknowledged + 1);
}

}  // namespace
}  // namespace ctxkit
