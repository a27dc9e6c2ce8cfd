// One writer per document: for every record, the document the C ABI
// returns, the one the `ctxkit` CLI prints and the one the MCP server
// (`ctxkit mcp`, over stdio) answers are the same bytes, because all three
// call the one public writer beside the result type (include/ctxkit/*.h).
// The MCP answer may only add seed 000's envelope around it: "success":true
// as its first member and a "message" string as its last. Where seed 000
// fixes other names, the test says which document each surface serves:
//   smart_cache stats      {"stats": seed summary, "report": CacheStatsToJson}
//   count_tokens           seed 000's own document (not MessageCountToJson)
//   resources              the library document with the seed's extra
//                          members appended (statistics, overview,
//                          conversation, resources)
//   manage_conversation    a batch's answer appends "added" (tool-only)
// Records one surface creates itself (create, add, put, delete) and cache
// reads (each one a hit) are compared with their ids, keys, times and hit
// counts masked, the store's figures with the opener's two ("read_only",
// "readers_in_use") masked; everything else byte for byte, on one store,
// read in an order in which no read changes what the next one reports.
// Analytics documents have no CLI or MCP surface; the compaction view is
// the compactor's.

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "ctxkit/c.h"
#include "doctest/doctest.h"
#include "simdjson.h"

namespace {

// ---- the C ABI ----

// The document of a C call that ends in (out_json, out_json_len,
// out_error), or a failure naming the call.
template <typename Call>
std::string CDoc(const char* what, Call call) {
  char* json = nullptr;
  size_t len = 0;
  char* error = nullptr;
  const int rc = call(&json, &len, &error);
  if (rc != CTXKIT_OK) {
    FAIL_CHECK(what << " failed: " << (error ? error : "?"));
    ctxkit_free(error);
    return {};
  }
  std::string out(json, len);
  ctxkit_free(json);
  return out;
}

#define S(text) text, sizeof(text) - 1
#define V(str) (str).data(), (str).size()

struct CParts {
  ctxkit_store* store = nullptr;
  ctxkit_conversations* convs = nullptr;
  ctxkit_references* refs = nullptr;
  ctxkit_cache* cache = nullptr;

  explicit CParts(const std::string& db) {
    REQUIRE(ctxkit_store_open(V(db), nullptr, &store, nullptr) == CTXKIT_OK);
    REQUIRE(ctxkit_conversations_open(store, &convs, nullptr) == CTXKIT_OK);
    REQUIRE(ctxkit_references_open(store, nullptr, 0, &refs, nullptr) ==
            CTXKIT_OK);
    REQUIRE(ctxkit_cache_open(store, 0, 0, nullptr, &cache, nullptr) ==
            CTXKIT_OK);
  }
  // Closed before another process reads: the cache flushes its hits.
  ~CParts() {
    ctxkit_cache_close(cache);
    ctxkit_references_close(refs);
    ctxkit_conversations_close(convs);
    ctxkit_store_close(store);
  }
};

// ---- other processes ----

// Runs `argv` with `input` on standard input; its standard output.
std::string Run(const std::vector<std::string>& argv, const std::string& dir,
                const std::string& input = {}) {
  const std::string in_path = dir + "/stdin";
  {
    std::ofstream in(in_path, std::ios::binary | std::ios::trunc);
    in << input;
  }
  int out_pipe[2];
  REQUIRE(pipe(out_pipe) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int in_fd = open(in_path.c_str(), O_RDONLY);
    dup2(in_fd, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    close(out_pipe[0]);
    std::vector<char*> args;
    for (const std::string& arg : argv) {
      args.push_back(const_cast<char*>(arg.c_str()));
    }
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  std::string out;
  char buffer[65536];
  ssize_t n;
  while ((n = read(out_pipe[0], buffer, sizeof buffer)) > 0) {
    out.append(buffer, static_cast<size_t>(n));
  }
  close(out_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MESSAGE(WIFEXITED(status), argv[1]);
  CHECK_MESSAGE(WEXITSTATUS(status) == 0, argv[1] << " " << argv[2]);
  return out;
}

class Surfaces {
 public:
  Surfaces() {
    std::string dir =
        (std::filesystem::temp_directory_path() / "ctxkit-one-writer-XXXXXX")
            .string();
    REQUIRE(mkdtemp(dir.data()) != nullptr);
    dir_ = dir;
    db_ = dir_ + "/db";
  }
  ~Surfaces() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  const std::string& db() const { return db_; }

  // `ctxkit ARGS... --db DB`'s one line, without its newline.
  std::string Cli(std::vector<std::string> args, bool with_db = true) {
    args.insert(args.begin(), CTXKIT_PROGRAM_PATH);
    if (with_db) {
      args.push_back("--db");
      args.push_back(db_);
    }
    std::string out = Run(args, dir_);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    CHECK_MESSAGE(out.find('\n') == std::string::npos, out);
    return out;
  }

  // One `ctxkit mcp` session answering `requests` (each a method and its
  // params), in order; each answer's text (a tool's content[0].text, which
  // is its structuredContent as text, or a resource's contents[0].text).
  std::vector<std::string> Mcp(
      const std::vector<std::pair<std::string, std::string>>& requests) {
    std::string script =
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"one_writer_test","version":"1"}}})"
        "\n"
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
        "\n";
    for (size_t i = 0; i < requests.size(); ++i) {
      script += R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 1) +
                R"(,"method":")" + requests[i].first + R"(","params":)" +
                requests[i].second + "}\n";
    }
    const std::string out =
        Run({CTXKIT_PROGRAM_PATH, "mcp", "--db", db_}, dir_, script);
    std::vector<std::string> answers(requests.size());
    simdjson::dom::parser parser;
    size_t begin = 0;
    while (begin < out.size()) {
      size_t end = out.find('\n', begin);
      if (end == std::string::npos) end = out.size();
      simdjson::dom::element reply;
      REQUIRE(parser.parse(out.data() + begin, end - begin).get(reply) ==
              simdjson::SUCCESS);
      begin = end + 1;
      int64_t id = 0;
      if (reply["id"].get_int64().get(id) != simdjson::SUCCESS || id == 0) {
        continue;
      }
      simdjson::dom::element result;
      if (reply["result"].get(result) != simdjson::SUCCESS) {
        FAIL_CHECK("request " << id << " failed: " << simdjson::minify(reply));
        continue;
      }
      std::string_view text;
      simdjson::dom::array items;
      if (result["contents"].get_array().get(items) != simdjson::SUCCESS) {
        REQUIRE(result["content"].get_array().get(items) == simdjson::SUCCESS);
        bool is_error = false;
        if (result["isError"].get_bool().get(is_error) != simdjson::SUCCESS) {
          is_error = false;  // absent: not an error
        }
        CHECK_MESSAGE(!is_error, simdjson::minify(result));
      }
      REQUIRE(items.at(0)["text"].get_string().get(text) == simdjson::SUCCESS);
      answers[static_cast<size_t>(id) - 1] = std::string(text);
    }
    return answers;
  }

 private:
  std::string dir_;
  std::string db_;
};

std::string ToolCall(std::string_view tool, std::string_view arguments) {
  return R"({"name":")" + std::string(tool) + R"(","arguments":)" +
         std::string(arguments) + "}";
}

std::string ResourceRead(std::string_view uri) {
  return R"({"uri":")" + std::string(uri) + R"("})";
}

// A tool's answer without seed 000's envelope: "success":true first and,
// when `message` is set, "message":<that string> last. Anything else the
// host added would remain and fail the comparison.
std::string WithoutEnvelope(const std::string& answer, bool message) {
  constexpr std::string_view kSuccess = R"({"success":true,)";
  if (answer.rfind(kSuccess, 0) != 0) return "no envelope: " + answer;
  std::string doc = "{" + answer.substr(kSuccess.size());
  if (message) {
    // The message is a JSON string; the last `,"message":"` begins it.
    const size_t at = doc.rfind(R"(,"message":")");
    if (at == std::string::npos || doc.back() != '}') {
      return "no message: " + answer;
    }
    doc = doc.substr(0, at) + "}";
  }
  return doc;
}

// Whether `served` is `document` (a JSON object's text) with members
// appended, the first of them `first_member`: what the resources whose seed
// shape names more than the library's document serve.
bool StartsWithAndAppends(const std::string& served,
                          const std::string& document,
                          std::string_view first_member) {
  const std::string head =
      document.substr(0, document.size() - 1) + "," + std::string(first_member);
  return served.rfind(head, 0) == 0;
}

// Values that differ between records each surface created on its own.
std::string Masked(const std::string& doc) {
  static const std::regex kVolatile(
      R"re("(id|conversation_id|key|created_at|updated_at|last_message_at|last_accessed|hit_count|timestamp)":("[^"]*"|[0-9]+))re");
  return std::regex_replace(doc, kVolatile, "\"$1\":_");
}

std::string IdOf(const std::string& doc, std::string_view pointer) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE(parser.parse(doc).get(root) == simdjson::SUCCESS);
  std::string_view id;
  REQUIRE(root.at_pointer(pointer).get_string().get(id) == simdjson::SUCCESS);
  return std::string(id);
}

constexpr char kQuery[] = "I was just wondering if you could maybe help me";
constexpr char kBatch[] =
    R"([{"role":"user","content":"one"},{"role":"assistant","content":"two"}])";
constexpr char kMessages[] =
    R"([{"role":"system","content":"You review code."},)"
    R"({"role":"user","content":"Please review: def add(a, b): return a + b"}])";

TEST_CASE("the C ABI, the CLI and the MCP server write each document alike") {
  Surfaces s;
  std::string conv, empty, ref, loose_ref, key, tied_key;
  std::map<std::string, std::string> c;  // record -> C ABI document

  // The store, written through the C ABI, and every read document.
  {
    CParts p(s.db());
    conv = IdOf(CDoc("create",
                     [&](char** j, size_t* n, char** e) {
                       return ctxkit_conversations_create(
                           p.convs, S("Code Review"), S("gpt-4o"),
                           S(R"({"project":"x"})"), j, n, e);
                     }),
                "/conversation/id");
    CDoc("add", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_add_message(
          p.convs, V(conv), S("system"), S("You review code."), nullptr, 0,
          nullptr, 0, nullptr, 0, 0, j, n, e);
    });
    CDoc("add", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_add_message(
          p.convs, V(conv), S("assistant"), S(""), nullptr, 0,
          S(R"([{"id":"call_1","type":"function","function":{"name":"read","arguments":"{}"}}])"),
          nullptr, 0, 0, j, n, e);
    });
    CDoc("add", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_add_message(
          p.convs, V(conv), S("tool"), S("def add(a, b): return a + b"),
          S("read"), nullptr, 0, S("call_1"), 0, j, n, e);
    });
    empty =
        IdOf(CDoc("create",
                  [&](char** j, size_t* n, char** e) {
                    return ctxkit_conversations_create(
                        p.convs, S("Empty"), S("gpt-4o"), nullptr, 0, j, n, e);
                  }),
             "/conversation/id");
    ref = IdOf(CDoc("ref add",
                    [&](char** j, size_t* n, char** e) {
                      return ctxkit_references_add(
                          p.refs, V(conv), S("code"), S("Adder"),
                          S("def add(a, b): return a + b"),
                          S(R"({"lang":"py"})"), j, n, e);
                    }),
               "/reference/id");
    loose_ref = IdOf(CDoc("ref add",
                          [&](char** j, size_t* n, char** e) {
                            return ctxkit_references_add(
                                p.refs, nullptr, 0, S("note"), S("Loose"),
                                S("type hints help"), nullptr, 0, j, n, e);
                          }),
                     "/reference/id");
    key = IdOf(CDoc("cache put",
                    [&](char** j, size_t* n, char** e) {
                      return ctxkit_cache_put(
                          p.cache, S("You are a helpful assistant."),
                          S("system"), 0, S("gpt-4o"), nullptr, 0, j, n, e);
                    }),
               "/key");
    tied_key = IdOf(CDoc("cache put",
                         [&](char** j, size_t* n, char** e) {
                           return ctxkit_cache_put(
                               p.cache, S("Tied to a conversation."), S("conv"),
                               0, S("gpt-4o"), V(conv), j, n, e);
                         }),
                    "/key");

    c["conv get"] = CDoc("get", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_get(p.convs, V(conv), 1, j, n, e);
    });
    c["conv get empty"] = CDoc("get", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_get(p.convs, V(empty), 0, j, n, e);
    });
    c["conv list"] = CDoc("list", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_list(p.convs, 20, nullptr, 0, j, n, e);
    });
    c["stats"] = CDoc("stats", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_stats(p.convs, nullptr, j, n, e);
    });
    c["stats with cache"] = CDoc("stats", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_stats(p.convs, p.cache, j, n, e);
    });
    c["conv stats"] = CDoc("conv stats", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_get_stats(p.convs, V(conv), 1000, j, n, e);
    });
    c["tips"] = CDoc("tips", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_tips(p.convs, nullptr, 0, nullptr, j, n, e);
    });
    c["conv tips"] = CDoc("tips", [&](char** j, size_t* n, char** e) {
      return ctxkit_conversations_tips(p.convs, V(conv), nullptr, j, n, e);
    });
    c["ref get"] = CDoc("ref get", [&](char** j, size_t* n, char** e) {
      return ctxkit_references_get(p.refs, V(ref), j, n, e);
    });
    c["ref get loose"] = CDoc("ref get", [&](char** j, size_t* n, char** e) {
      return ctxkit_references_get(p.refs, V(loose_ref), j, n, e);
    });
    c["ref list"] = CDoc("ref list", [&](char** j, size_t* n, char** e) {
      return ctxkit_references_list(p.refs, nullptr, 0, 0, j, n, e);
    });
    c["ref list content"] =
        CDoc("ref list", [&](char** j, size_t* n, char** e) {
          return ctxkit_references_list(p.refs, V(conv), 1, j, n, e);
        });
    c["ref search"] = CDoc("search", [&](char** j, size_t* n, char** e) {
      return ctxkit_references_search(p.refs, S("add"), 10, nullptr, 0, j, n,
                                      e);
    });
    c["ref stats"] = CDoc("ref stats", [&](char** j, size_t* n, char** e) {
      return ctxkit_references_stats(p.refs, nullptr, 0, j, n, e);
    });
    c["cache stats"] = CDoc("cache stats", [&](char** j, size_t* n, char** e) {
      return ctxkit_cache_stats(p.cache, 10, j, n, e);
    });
    c["optimize"] = CDoc("optimize", [&](char** j, size_t* n, char** e) {
      return ctxkit_query_optimize(S(kQuery), S("gpt-4o"), nullptr, 0, nullptr,
                                   0, 0, j, n, e);
    });
    c["count messages"] = CDoc("count", [&](char** j, size_t* n, char** e) {
      size_t total = 0;
      return ctxkit_chat_count(S("gpt-4o"), S(kMessages), 0, &total, j, n, e);
    });
  }

  SUBCASE("reads") {
    // The store's figures: one writer (StoreInfoToJson) for the C ABI and
    // `store info --json`. "read_only" and "readers_in_use" describe the
    // opener (the CLI opens read-only), not the store.
    {
      ctxkit_store* store = nullptr;
      REQUIRE(ctxkit_store_open(V(s.db()), nullptr, &store, nullptr) ==
              CTXKIT_OK);
      c["store info"] = CDoc("store info", [&](char** j, size_t* n, char** e) {
        return ctxkit_store_info_json(store, j, n, e);
      });
      ctxkit_store_close(store);
    }
    static const std::regex kOpener(
        R"re("(read_only|readers_in_use)":(true|false|[0-9]+))re");
    CHECK(std::regex_replace(s.Cli({"store", "info", "--json"}), kOpener,
                             "\"$1\":_") ==
          std::regex_replace(c["store info"], kOpener, "\"$1\":_"));

    // The CLI.
    CHECK(s.Cli({"conv", "get", conv}) == c["conv get"]);
    CHECK(s.Cli({"conv", "get", empty, "--no-messages"}) ==
          c["conv get empty"]);
    CHECK(s.Cli({"conv", "list"}) == c["conv list"]);
    CHECK(s.Cli({"conv", "stats"}) == c["stats"]);
    CHECK(s.Cli({"conv", "stats", conv, "--timeline-points", "1000"}) ==
          c["conv stats"]);
    // `stats` is the aggregate document with the cache's and the
    // references' documents appended.
    CHECK(s.Cli({"stats"}) ==
          c["stats with cache"].substr(0, c["stats with cache"].size() - 1) +
              ",\"cache\":" + c["cache stats"] +
              ",\"references\":" + c["ref stats"] + "}");
    CHECK(s.Cli({"ref", "get", ref}) == c["ref get"]);
    CHECK(s.Cli({"ref", "get", loose_ref}) == c["ref get loose"]);
    CHECK(s.Cli({"ref", "list"}) == c["ref list"]);
    CHECK(s.Cli({"ref", "list", "--conversation", conv, "--content"}) ==
          c["ref list content"]);
    CHECK(s.Cli({"ref", "search", "add"}) == c["ref search"]);
    CHECK(s.Cli({"cache", "stats"}) == c["cache stats"]);
    CHECK(s.Cli({"optimize", "--model", "gpt-4o", kQuery}, false) ==
          c["optimize"]);
    {
      const std::string file = s.db() + ".messages.json";
      std::ofstream(file) << kMessages;
      CHECK(s.Cli({"count", "--messages", "--json", "--model", "gpt-4o", file},
                  false) == c["count messages"]);
    }

    // The MCP server: tools in seed 000's envelope, resources bare.
    const std::vector<std::string> mcp = s.Mcp({
        {"tools/call",
         ToolCall("manage_conversation",
                  R"({"action":"get","conversation_id":")" + conv + R"("})")},
        {"tools/call", ToolCall("manage_conversation",
                                R"({"action":"get","conversation_id":")" +
                                    empty + R"(","include_messages":false})")},
        {"tools/call", ToolCall("manage_conversation", R"({"action":"list"})")},
        {"resources/read", ResourceRead("token-stats://aggregate")},
        {"resources/read", ResourceRead("token-stats://" + conv)},
        {"resources/read", ResourceRead("optimization-tips://general")},
        {"resources/read", ResourceRead("optimization-tips://" + conv)},
        {"resources/read", ResourceRead("conversation-history://" + conv)},
        {"resources/read", ResourceRead("conversation-history://all")},
        {"tools/call",
         ToolCall("track_references",
                  R"({"action":"get","reference_id":")" + ref + R"("})")},
        {"tools/call",
         ToolCall("track_references",
                  R"({"action":"get","reference_id":")" + loose_ref + R"("})")},
        {"tools/call", ToolCall("track_references", R"({"action":"list"})")},
        {"tools/call", ToolCall("track_references",
                                R"({"action":"list","conversation_id":")" +
                                    conv + R"(","include_content":true})")},
        {"tools/call", ToolCall("track_references",
                                R"({"action":"search","search_query":"add"})")},
        {"resources/read", ResourceRead("reference-library://all")},
        {"resources/read", ResourceRead("reference-library://" + conv)},
        {"tools/call", ToolCall("smart_cache", R"({"action":"stats"})")},
        {"resources/read", ResourceRead("cache-stats://current")},
        {"tools/call",
         ToolCall("optimize_query", std::string(R"({"query":")") + kQuery +
                                        R"(","model":"gpt-4o"})")},
    });
    REQUIRE(mcp.size() == 19);
    CHECK(WithoutEnvelope(mcp[0], false) == c["conv get"]);
    CHECK(WithoutEnvelope(mcp[1], false) == c["conv get empty"]);
    CHECK(WithoutEnvelope(mcp[2], false) == c["conv list"]);
    CHECK(mcp[3] == c["stats with cache"]);
    CHECK(mcp[4] == c["conv stats"]);
    // The caching tip needs a used cache; nothing has been looked up yet.
    CHECK(StartsWithAndAppends(mcp[5], c["tips"], "\"resources\":"));
    CHECK(mcp[6] == c["conv tips"]);
    CHECK(StartsWithAndAppends(mcp[7], c["conv get"], "\"statistics\":"));
    CHECK(mcp[8] == c["conv list"]);  // every page, here one
    CHECK(WithoutEnvelope(mcp[9], false) == c["ref get"]);
    CHECK(WithoutEnvelope(mcp[10], false) == c["ref get loose"]);
    CHECK(WithoutEnvelope(mcp[11], false) == c["ref list"]);
    CHECK(WithoutEnvelope(mcp[12], false) == c["ref list content"]);
    CHECK(WithoutEnvelope(mcp[13], false) == c["ref search"]);
    CHECK(mcp[14] == c["ref list"].substr(0, c["ref list"].size() - 1) +
                         ",\"overview\":" + c["ref stats"] + "}");
    CHECK(StartsWithAndAppends(mcp[15], c["ref list content"],
                               "\"conversation\":"));
    // Seed 000 names smart_cache's summary "stats"; the library's document
    // is its "report".
    const std::string report = ",\"report\":" + c["cache stats"] + "}";
    CHECK(mcp[16].size() > report.size());
    CHECK(mcp[16].compare(mcp[16].size() - report.size(), report.size(),
                          report) == 0);
    CHECK(mcp[17] == c["cache stats"]);
    CHECK(WithoutEnvelope(mcp[18], false) == c["optimize"]);
  }

  SUBCASE("writes and cache reads, each surface on its own records") {
    std::map<std::string, std::string> cw;  // record -> C ABI document
    std::string c_conv;
    {
      CParts p(s.db());
      cw["create"] = CDoc("create", [&](char** j, size_t* n, char** e) {
        return ctxkit_conversations_create(p.convs, S("Mine"), S("gpt-4o"),
                                           S(R"({"k":1})"), j, n, e);
      });
      c_conv = IdOf(cw["create"], "/conversation/id");
      cw["add"] = CDoc("add", [&](char** j, size_t* n, char** e) {
        return ctxkit_conversations_add_message(
            p.convs, V(c_conv), S("user"), S("Hello there"), nullptr, 0,
            nullptr, 0, nullptr, 0, 0, j, n, e);
      });
      cw["update"] = CDoc("update", [&](char** j, size_t* n, char** e) {
        // The same title again: the MCP server has no update, and the
        // deleted conversation's document below must read alike everywhere.
        return ctxkit_conversations_update(p.convs, V(c_conv), S("Mine"),
                                           nullptr, 0, j, n, e);
      });
      cw["ref add"] = CDoc("ref add", [&](char** j, size_t* n, char** e) {
        return ctxkit_references_add(p.refs, V(conv), S("url"), S("Docs"),
                                     S("https://example.org/docs"),
                                     S(R"({"k":1})"), j, n, e);
      });
      cw["cache put"] = CDoc("put", [&](char** j, size_t* n, char** e) {
        return ctxkit_cache_put(p.cache, S("content one"), S("mine"), 0,
                                S("gpt-4o"), nullptr, 0, j, n, e);
      });
      cw["cache get"] = CDoc("get", [&](char** j, size_t* n, char** e) {
        return ctxkit_cache_get(p.cache, V(key), j, n, e);
      });
      cw["cache get tied"] = CDoc("get", [&](char** j, size_t* n, char** e) {
        return ctxkit_cache_get(p.cache, V(tied_key), j, n, e);
      });
      cw["cache check"] = CDoc("check", [&](char** j, size_t* n, char** e) {
        return ctxkit_cache_check(p.cache, S("You are a helpful assistant."),
                                  nullptr, 0, j, n, e);
      });
      cw["cache check miss"] =
          CDoc("check", [&](char** j, size_t* n, char** e) {
            return ctxkit_cache_check(p.cache, S("never stored"), nullptr, 0, j,
                                      n, e);
          });
      cw["delete"] = CDoc("delete", [&](char** j, size_t* n, char** e) {
        return ctxkit_conversations_delete(p.convs, V(c_conv), j, n, e);
      });
      const std::string batch_conv = IdOf(
          CDoc("create",
               [&](char** j, size_t* n, char** e) {
                 return ctxkit_conversations_create(
                     p.convs, S("Batch"), S("gpt-4o"), nullptr, 0, j, n, e);
               }),
          "/conversation/id");
      cw["add batch"] = CDoc("add batch", [&](char** j, size_t* n, char** e) {
        return ctxkit_conversations_add_messages(p.convs, V(batch_conv),
                                                 S(kBatch), j, n, e);
      });
    }

    // The CLI.
    const std::string created =
        s.Cli({"conv", "create", "--title", "Mine", "--model", "gpt-4o",
               "--metadata", R"({"k":1})"});
    CHECK(Masked(created) == Masked(cw["create"]));
    const std::string cli_conv = IdOf(created, "/conversation/id");
    CHECK(Masked(s.Cli({"conv", "add", cli_conv, "--role", "user", "--content",
                        "Hello there"})) == Masked(cw["add"]));
    CHECK(Masked(s.Cli({"conv", "update", cli_conv, "--title", "Mine"})) ==
          Masked(cw["update"]));
    CHECK(Masked(s.Cli({"ref", "add", "--type", "url", "--title", "Docs",
                        "--conversation", conv, "--metadata", R"({"k":1})",
                        "--content", "https://example.org/docs"})) ==
          Masked(cw["ref add"]));
    CHECK(Masked(s.Cli({"cache", "put", "--content", "content two", "--prefix",
                        "mine", "--model", "gpt-4o"})) ==
          Masked(cw["cache put"]));
    CHECK(Masked(s.Cli({"cache", "get", key})) == Masked(cw["cache get"]));
    CHECK(Masked(s.Cli({"cache", "get", tied_key})) ==
          Masked(cw["cache get tied"]));
    CHECK(s.Cli({"cache", "check", "--content",
                 "You are a helpful assistant."}) == cw["cache check"]);
    CHECK(s.Cli({"cache", "check", "--content", "never stored"}) ==
          cw["cache check miss"]);
    CHECK(Masked(s.Cli({"conv", "delete", cli_conv})) == Masked(cw["delete"]));

    // The MCP server.
    const std::vector<std::string> made = s.Mcp({
        {"tools/call",
         ToolCall(
             "manage_conversation",
             R"({"action":"create","title":"Mine","model":"gpt-4o","metadata":{"k":1}})")},
        {"tools/call",
         ToolCall("manage_conversation",
                  R"({"action":"create","title":"Batch","model":"gpt-4o"})")},
    });
    REQUIRE(made.size() == 2);
    const std::string mcp_batch_conv =
        IdOf(WithoutEnvelope(made[1], true), "/conversation/id");
    CHECK(Masked(WithoutEnvelope(made[0], true)) == Masked(cw["create"]));
    const std::string mcp_conv =
        IdOf(WithoutEnvelope(made[0], true), "/conversation/id");
    const std::vector<std::string> mcp = s.Mcp({
        {"tools/call",
         ToolCall("manage_conversation",
                  R"({"action":"add_message","conversation_id":")" + mcp_conv +
                      R"(","role":"user","content":"Hello there"})")},
        {"tools/call",
         ToolCall(
             "track_references",
             R"({"action":"add","conversation_id":")" + conv +
                 R"(","type":"url","title":"Docs","content":"https://example.org/docs","metadata":{"k":1}})")},
        {"tools/call",
         ToolCall(
             "smart_cache",
             R"({"action":"store","content":"content six","prefix":"mine","model":"gpt-4o"})")},
        {"tools/call",
         ToolCall("smart_cache",
                  R"({"action":"retrieve","key":")" + key + R"("})")},
        {"tools/call",
         ToolCall("smart_cache",
                  R"({"action":"retrieve","key":")" + tied_key + R"("})")},
        {"tools/call",
         ToolCall(
             "smart_cache",
             R"({"action":"check","content":"You are a helpful assistant."})")},
        {"tools/call",
         ToolCall("smart_cache",
                  R"({"action":"check","content":"never stored"})")},
        {"tools/call", ToolCall("manage_conversation",
                                R"({"action":"delete","conversation_id":")" +
                                    mcp_conv + R"("})")},
        {"tools/call",
         ToolCall("manage_conversation",
                  R"({"action":"add_message","conversation_id":")" +
                      mcp_batch_conv + R"(","messages":)" + kBatch + "}")},
    });
    REQUIRE(mcp.size() == 9);
    CHECK(Masked(WithoutEnvelope(mcp[0], false)) == Masked(cw["add"]));
    CHECK(Masked(WithoutEnvelope(mcp[1], true)) == Masked(cw["ref add"]));
    CHECK(Masked(WithoutEnvelope(mcp[2], true)) == Masked(cw["cache put"]));
    CHECK(Masked(WithoutEnvelope(mcp[3], false)) == Masked(cw["cache get"]));
    CHECK(Masked(WithoutEnvelope(mcp[4], false)) ==
          Masked(cw["cache get tied"]));
    CHECK(WithoutEnvelope(mcp[5], true) == cw["cache check"]);
    CHECK(WithoutEnvelope(mcp[6], true) == cw["cache check miss"]);
    CHECK(Masked(WithoutEnvelope(mcp[7], true)) == Masked(cw["delete"]));
    // A batch's answer also says how many were added (a tool-only member,
    // after the library document).
    CHECK(Masked(WithoutEnvelope(mcp[8], false)) ==
          Masked(cw["add batch"].substr(0, cw["add batch"].size() - 1) +
                 ",\"added\":2}"));
  }
}

}  // namespace
