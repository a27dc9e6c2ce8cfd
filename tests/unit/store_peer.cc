// A second process for store_process_test: each command opens the store
// given on the command line, does one thing, and reports on stdout.
//
//   store_peer put DIR DB KEY VALUE      -> "ok"
//   store_peer get DIR DB KEY            -> the value
//   store_peer fill DIR DB N SIZE        -> N values of SIZE bytes, one commit
//   store_peer count DIR START           -> commits n = START, START+1, ...
//                                           forever, writing "n\n" after each
//                                           commit returns
//   store_peer hold-open DIR             -> "ready", then keeps the store
//                                           open (no transaction) until killed
//   store_peer hold-reader DIR           -> "ready", then keeps a read
//                                           transaction open until killed
//   store_peer open-as UID DIR           -> drops to UID, opens DIR, prints
//                                           the status code name
// Any failure prints "CODE_NAME: message" and exits 1.

#include <grp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ctxkit/store.h"

namespace {

using ctxkit::Database;
using ctxkit::Status;
using ctxkit::Store;
using ctxkit::WriteTransaction;

[[noreturn]] void Die(const Status& s) {
  std::printf("%s\n", s.ToString().c_str());
  std::exit(1);
}

std::unique_ptr<Store> OpenOrDie(const char* dir) {
  auto store = Store::Open(dir);
  if (!store.ok()) Die(store.status());
  return std::move(store).value();
}

Database DbOrDie(Store& store, const char* name) {
  auto db = store.OpenDatabase(name);
  if (!db.ok()) Die(db.status());
  return *db;
}

// One write(2) per line: a line on the pipe is never half there.
void WriteLine(const std::string& line) {
  const std::string out = line + "\n";
  if (write(STDOUT_FILENO, out.data(), out.size()) !=
      static_cast<ssize_t>(out.size())) {
    std::exit(3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string cmd = argv[1];
  if (cmd == "put" && argc == 6) {
    auto store = OpenOrDie(argv[2]);
    Database db = DbOrDie(*store, argv[3]);
    Status s = store->Update(
        [&](WriteTransaction& t) { return t.Put(db, argv[4], argv[5]); });
    if (!s.ok()) Die(s);
    WriteLine("ok");
    return 0;
  }
  if (cmd == "get" && argc == 5) {
    auto store = OpenOrDie(argv[2]);
    Database db = DbOrDie(*store, argv[3]);
    auto txn = store->BeginRead();
    if (!txn.ok()) Die(txn.status());
    auto v = txn->Get(db, argv[4]);
    if (!v.ok()) Die(v.status());
    WriteLine(std::string(*v));
    return 0;
  }
  if (cmd == "fill" && argc == 6) {
    auto store = OpenOrDie(argv[2]);
    Database db = DbOrDie(*store, argv[3]);
    const int n = std::atoi(argv[4]);
    const size_t size = std::strtoul(argv[5], nullptr, 10);
    Status s = store->Update([&](WriteTransaction& t) {
      for (int i = 0; i < n; ++i) {
        char key[32];
        std::snprintf(key, sizeof key, "fill%06d", i);
        if (Status e = t.Put(db, key, std::string(size, 'f')); !e.ok())
          return e;
      }
      return Status();
    });
    if (!s.ok()) Die(s);
    WriteLine("ok");
    return 0;
  }
  if (cmd == "count" && argc == 4) {
    auto store = OpenOrDie(argv[2]);
    Database db = DbOrDie(*store, "numbers");
    for (long n = std::atol(argv[3]);; ++n) {
      char key[32];
      std::snprintf(key, sizeof key, "n%012ld", n);
      Status s = store->Update([&](WriteTransaction& t) {
        return t.Put(db, key, std::to_string(n));
      });
      if (!s.ok()) Die(s);
      WriteLine(std::to_string(n));
    }
  }
  if (cmd == "hold-open" && argc == 3) {
    auto store = OpenOrDie(argv[2]);
    WriteLine("ready");
    for (;;) pause();
  }
  if (cmd == "hold-reader" && argc == 3) {
    auto store = OpenOrDie(argv[2]);
    auto txn = store->BeginRead();
    if (!txn.ok()) Die(txn.status());
    WriteLine("ready");
    for (;;) pause();
  }
  if (cmd == "open-as" && argc == 4) {
    const uid_t uid = static_cast<uid_t>(std::atol(argv[2]));
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) {
      std::printf("cannot drop privileges: %s\n", std::strerror(errno));
      return 4;
    }
    auto store = Store::Open(argv[3]);
    WriteLine(ctxkit::StatusCodeName(store.status().code()) +
              std::string(store.ok() ? "" : ": " + store.status().message()));
    return 0;
  }
  return 2;
}
