// libFuzzer target over the record documents the stores accept from
// outside, through the C ABI (ctxkit/c.h) that bindings and the CLI's
// --json inputs reach: the *_request objects and the messages array of the
// conversations, references and cache.
//
// An input's byte 0 picks the entry point (modulo 6):
//   0 ctxkit_conversations_create_request
//   1 ctxkit_conversations_add_message_request
//   2 ctxkit_conversations_update_request
//   3 ctxkit_conversations_add_messages (the rest is the messages array)
//   4 ctxkit_references_add_request
//   5 ctxkit_cache_put_request
// and the rest is its JSON text, with every "$conv" replaced by the id of a
// conversation that exists, so that the fuzzer reaches past the id checks.
//
// Guarantees checked on every input (a broken one aborts, which libFuzzer
// reports as a crash with its input):
//   - the status is OK or one that c.h documents for that call
//     (INVALID_ARGUMENT, NOT_FOUND where an id is named, RESOURCE_EXHAUSTED
//     for the cache's capacity or any failed allocation);
//   - OK: a document that is valid JSON (so valid UTF-8) opening with
//     {"schema_version":1, and no error text; an error: an error text of
//     valid UTF-8 and no document;
//   - a failed call writes nothing: the entries of every database of the
//     store are what they were before it;
//   - what was accepted reads back: a created conversation's title, an
//     updated title, an added message's role and conversation, a
//     reference's content and a cache entry's content (without a TTL) are
//     those of the request.
//
// The store is shared by all inputs and replaced by a fresh one every
// kInputsPerStore inputs (as mcp_fuzz.cc does, for the same reasons); it
// lives in /dev/shm (else $TMPDIR or /tmp) and is removed at exit.
//
// Build and run: see tests/fuzz/CMakeLists.txt.

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "ctxkit/c.h"
#include "simdjson.h"

namespace {

constexpr uint64_t kInputsPerStore = 2000;

[[noreturn]] void Broken(const std::string& what, std::string_view detail) {
  std::fprintf(stderr, "guarantee broken: %s\n  input: %.*s\n", what.c_str(),
               static_cast<int>(std::min<size_t>(detail.size(), 4000)),
               detail.data());
  std::abort();
}

// One C call's outputs, released with ctxkit_free.
struct Result {
  int code = -1;
  char* json = nullptr;
  size_t json_len = 0;
  char* error = nullptr;

  Result() = default;
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result() {
    ctxkit_free(json);
    ctxkit_free(error);
  }
  std::string_view document() const { return {json, json_len}; }
};

struct Parts {
  std::string root;
  uint64_t generation = 0;
  ctxkit_store* store = nullptr;
  ctxkit_conversations* convs = nullptr;
  ctxkit_references* refs = nullptr;
  ctxkit_cache* cache = nullptr;
  std::string conversation_id;

  void Close() {
    ctxkit_cache_close(cache);
    ctxkit_references_close(refs);
    ctxkit_conversations_close(convs);
    ctxkit_store_close(store);
    cache = nullptr;
    refs = nullptr;
    convs = nullptr;
    store = nullptr;
  }
};

Parts& TheParts() {
  static auto* const parts = new Parts;
  return *parts;
}

void Require(int code, const char* error, const char* what) {
  if (code != CTXKIT_OK) Broken(what, error != nullptr ? error : "");
}

void OpenFreshParts() {
  Parts& parts = TheParts();
  parts.Close();
  std::error_code ignored;
  if (parts.generation > 0) {
    std::filesystem::remove_all(
        parts.root + "/store" + std::to_string(parts.generation - 1), ignored);
  }
  const std::string dir =
      parts.root + "/store" + std::to_string(parts.generation++);
  Result r;
  r.code = ctxkit_store_open(dir.data(), dir.size(), nullptr, &parts.store,
                             &r.error);
  Require(r.code, r.error, "cannot open the store");
  r.code = ctxkit_conversations_open(parts.store, &parts.convs, &r.error);
  Require(r.code, r.error, "cannot open the conversations");
  r.code =
      ctxkit_references_open(parts.store, nullptr, 0, &parts.refs, &r.error);
  Require(r.code, r.error, "cannot open the references");
  // Capacity limits of a few megabytes, so that eviction and the
  // RESOURCE_EXHAUSTED path are reached.
  r.code = ctxkit_cache_open(parts.store, 64, 1 << 20, nullptr, &parts.cache,
                             &r.error);
  Require(r.code, r.error, "cannot open the cache");
  Result created;
  constexpr std::string_view kTitle = "fuzz";
  created.code = ctxkit_conversations_create(
      parts.convs, kTitle.data(), kTitle.size(), nullptr, 0, nullptr, 0,
      &created.json, &created.json_len, &created.error);
  Require(created.code, created.error, "cannot create a conversation");
  simdjson::dom::parser parser;
  std::string_view id;
  if (parser.parse(created.document())["conversation"]["id"].get(id) !=
      simdjson::SUCCESS) {
    Broken("a created conversation without an id", created.document());
  }
  parts.conversation_id = std::string(id);
}

// Every database's name and entries: what a failed call must leave alone.
std::string Entries(std::string_view input) {
  Result info;
  info.code = ctxkit_store_info_json(TheParts().store, &info.json,
                                     &info.json_len, &info.error);
  if (info.code != CTXKIT_OK) Broken("store_info_json failed", input);
  simdjson::dom::parser parser;
  simdjson::dom::array databases;
  if (parser.parse(info.document())["databases"].get(databases) !=
      simdjson::SUCCESS) {
    Broken("store_info_json without databases", info.document());
  }
  std::string entries;
  for (simdjson::dom::element database : databases) {
    std::string_view name;
    uint64_t count = 0;
    if (database["name"].get(name) != simdjson::SUCCESS ||
        database["entries"].get(count) != simdjson::SUCCESS) {
      Broken("a database without name or entries", info.document());
    }
    entries.append(name).append("=").append(std::to_string(count)).append(";");
  }
  return entries;
}

// The string member `key` of `object`, if it has one.
std::optional<std::string_view> StringAt(simdjson::dom::element object,
                                         std::string_view key) {
  std::string_view value;
  if (object[key].get(value) != simdjson::SUCCESS) return std::nullopt;
  return value;
}

// `fold_case` for ids, which the stores accept in either case and keep in
// lower case.
void ExpectSame(std::optional<std::string_view> sent,
                std::optional<std::string_view> stored, const char* what,
                std::string_view input, bool fold_case = false) {
  if (!sent) return;
  std::string expected(*sent);
  if (fold_case) {
    for (char& c : expected) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
  }
  if (!stored || *stored != expected) {
    Broken(std::string(what) + " does not read back as sent", input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::string base = "/dev/shm";
  if (access(base.c_str(), W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/ctxkit-records-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    Broken("cannot create a temporary directory", pattern);
  }
  TheParts().root = pattern;
  std::atexit([] {
    TheParts().Close();
    std::error_code ignored;
    std::filesystem::remove_all(TheParts().root, ignored);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static uint64_t inputs = 0;
  if (inputs++ % kInputsPerStore == 0) OpenFreshParts();
  Parts& parts = TheParts();

  const int entry = data[0] % 6;
  const std::string_view raw(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string text(raw);
  for (size_t at = text.find("$conv"); at != std::string::npos;
       at = text.find("$conv", at + parts.conversation_id.size())) {
    text.replace(at, 5, parts.conversation_id);
  }

  // Hits counted by earlier inputs' reads are written in the background;
  // written now, they cannot land between the two looks at the store.
  {
    Result flushed;
    flushed.code = ctxkit_cache_flush(parts.cache, &flushed.error);
    Require(flushed.code, flushed.error, "cannot flush the cache");
  }
  const std::string before = Entries(text);
  Result r;
  switch (entry) {
    case 0:
      r.code = ctxkit_conversations_create_request(parts.convs, text.data(),
                                                   text.size(), &r.json,
                                                   &r.json_len, &r.error);
      break;
    case 1:
      r.code = ctxkit_conversations_add_message_request(
          parts.convs, text.data(), text.size(), &r.json, &r.json_len,
          &r.error);
      break;
    case 2:
      r.code = ctxkit_conversations_update_request(parts.convs, text.data(),
                                                   text.size(), &r.json,
                                                   &r.json_len, &r.error);
      break;
    case 3:
      r.code = ctxkit_conversations_add_messages(
          parts.convs, parts.conversation_id.data(),
          parts.conversation_id.size(), text.data(), text.size(), &r.json,
          &r.json_len, &r.error);
      break;
    case 4:
      r.code = ctxkit_references_add_request(
          parts.refs, text.data(), text.size(), &r.json, &r.json_len, &r.error);
      break;
    default:
      r.code = ctxkit_cache_put_request(parts.cache, text.data(), text.size(),
                                        &r.json, &r.json_len, &r.error);
      break;
  }

  if (r.code != CTXKIT_OK) {
    // c.h: create names only its fields; the others also name an id or a
    // conversation that may not exist; the cache has capacity limits; any
    // call may run out of memory.
    const bool documented = r.code == CTXKIT_INVALID_ARGUMENT ||
                            r.code == CTXKIT_RESOURCE_EXHAUSTED ||
                            (r.code == CTXKIT_NOT_FOUND && entry != 0);
    if (!documented) {
      Broken(std::string("undocumented status ") + ctxkit_status_name(r.code) +
                 ": " + (r.error != nullptr ? r.error : "(no message)"),
             text);
    }
    if (r.json != nullptr) Broken("a failed call returned a document", text);
    if (r.error == nullptr || *r.error == '\0') {
      Broken("a failed call without an error message", text);
    }
    if (!simdjson::validate_utf8(r.error, std::strlen(r.error))) {
      Broken("an error message that is not UTF-8", text);
    }
    if (Entries(text) != before)
      Broken("a failed call wrote to the store", text);
    return 0;
  }

  if (r.error != nullptr) Broken("a successful call set an error", text);
  constexpr std::string_view kOpening = R"({"schema_version":1)";
  if (r.document().substr(0, kOpening.size()) != kOpening) {
    Broken("a document not opening with schema_version 1", r.document());
  }
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  if (parser.parse(r.document()).get(document) != simdjson::SUCCESS) {
    Broken("a document that is not JSON", r.document());
  }
  // The call accepted the text, so it is a JSON object (the messages
  // array for add_messages).
  simdjson::dom::parser request_parser;
  simdjson::dom::element request;
  if (request_parser.parse(text).get(request) != simdjson::SUCCESS) {
    Broken("accepted text that is not JSON", text);
  }

  switch (entry) {
    case 0: {
      const auto id = StringAt(document["conversation"], "id");
      if (!id) Broken("a created conversation without an id", r.document());
      Result got;
      got.code =
          ctxkit_conversations_get(parts.convs, id->data(), id->size(), 0,
                                   &got.json, &got.json_len, &got.error);
      if (got.code != CTXKIT_OK) Broken("a created conversation is gone", text);
      simdjson::dom::parser got_parser;
      simdjson::dom::element stored;
      if (got_parser.parse(got.document()).get(stored) != simdjson::SUCCESS) {
        Broken("conversations_get's document is not JSON", got.document());
      }
      ExpectSame(StringAt(request, "title"),
                 StringAt(stored["conversation"], "title"), "title", text);
      break;
    }
    case 1:
      ExpectSame(StringAt(request, "role"),
                 StringAt(document["message"], "role"), "role", text);
      ExpectSame(StringAt(request, "conversation_id"),
                 StringAt(document["message"], "conversation_id"),
                 "conversation_id", text, /*fold_case=*/true);
      break;
    case 2:
      ExpectSame(StringAt(request, "title"),
                 StringAt(document["conversation"], "title"), "title", text);
      break;
    case 3: {
      simdjson::dom::array sent;
      simdjson::dom::array added;
      if (request.get(sent) != simdjson::SUCCESS ||
          document["messages"].get(added) != simdjson::SUCCESS ||
          sent.size() != added.size()) {
        Broken("add_messages did not add every message", text);
      }
      break;
    }
    case 4: {
      const auto id = StringAt(document["reference"], "id");
      if (!id) Broken("an added reference without an id", r.document());
      Result got;
      got.code = ctxkit_references_get(parts.refs, id->data(), id->size(),
                                       &got.json, &got.json_len, &got.error);
      if (got.code != CTXKIT_OK) Broken("an added reference is gone", text);
      simdjson::dom::parser got_parser;
      simdjson::dom::element stored;
      if (got_parser.parse(got.document()).get(stored) != simdjson::SUCCESS) {
        Broken("references_get's document is not JSON", got.document());
      }
      ExpectSame(StringAt(request, "content"),
                 StringAt(stored["reference"], "content"), "content", text);
      break;
    }
    default: {
      int64_t ttl = 0;
      if (request["ttl_ms"].get(ttl) == simdjson::SUCCESS && ttl != 0) break;
      const auto key = StringAt(document, "key");
      if (!key) Broken("a cache entry without a key", r.document());
      Result got;
      got.code = ctxkit_cache_get(parts.cache, key->data(), key->size(),
                                  &got.json, &got.json_len, &got.error);
      // With capacity limits a later put may evict it, but not this one.
      if (got.code != CTXKIT_OK) Broken("a cache entry is gone", text);
      simdjson::dom::parser got_parser;
      simdjson::dom::element stored;
      if (got_parser.parse(got.document()).get(stored) != simdjson::SUCCESS) {
        Broken("cache_get's document is not JSON", got.document());
      }
      ExpectSame(StringAt(request, "content"), StringAt(stored, "content"),
                 "content", text);
      break;
    }
  }
  return 0;
}
