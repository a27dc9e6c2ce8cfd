// The compaction engine: plans which units of a history to drop so that the
// exact token count meets the target, then assembles the output with one
// summary per dropped span.
//
// Why it is linear. Every message is parsed, counted and classified once.
// Dropping a unit changes the total by its tokens and by the reservation of
// at most one summary, computed in O(1) from the dropped runs on either side
// (their endpoints are kept in arrays, as in interval merging), so the plan
// visits each unit once per pass and there are at most two passes (with and
// without summaries), each followed by one assembly over the units.

#include "ctxkit/compactor.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "ctxkit/analytics.h"
#include "ctxkit/cache.h"
#include "ctxkit/conversations.h"
#include "lib/compactor/chat_history.h"
#include "lib/compactor/compaction_json.h"
#include "lib/compactor/compactor_access.h"
#include "lib/compactor/summary.h"
#include "lib/compactor/task_finder.h"
#include "lib/json/json_reader.h"
#include "lib/status/status_internal.h"
#include "lib/tokenizer/message_counter.h"
#include "simdjson.h"

namespace ctxkit {

namespace {

using internal::ChatHistory;
using internal::ChatMessage;
using internal::MessageCounter;
using internal::SpanDigest;

#define CTXKIT_CP_CONCAT_INNER(a, b) a##b
#define CTXKIT_CP_CONCAT(a, b) CTXKIT_CP_CONCAT_INNER(a, b)
#define CTXKIT_CP_ASSIGN_OR_RETURN(lhs, expr)                          \
  auto CTXKIT_CP_CONCAT(cp_result_, __LINE__) = (expr);                \
  if (!CTXKIT_CP_CONCAT(cp_result_, __LINE__).ok()) {                  \
    return std::move(CTXKIT_CP_CONCAT(cp_result_, __LINE__)).status(); \
  }                                                                    \
  lhs = std::move(*CTXKIT_CP_CONCAT(cp_result_, __LINE__))

constexpr int64_t kMaxBudget = int64_t{1} << 40;
constexpr int64_t kMaxCount = int64_t{1} << 31;
// A summary reservation below this would hold nothing useful.
constexpr int64_t kMinSummaryTokens = 16;
constexpr std::string_view kCachePrefix = "compact";

absl::Status CheckOptions(const CompactionOptions& o) {
  auto range = [](std::string_view name, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s must be between %d and %d (got %d)", name, lo, hi, v));
    }
    return absl::OkStatus();
  };
  absl::Status s = range("max_tokens", o.max_tokens, 1, kMaxBudget);
  if (s.ok()) s = range("recent_window", o.recent_window, 0, kMaxCount);
  if (s.ok()) {
    s = range("min_important_messages", o.min_important_messages, 0,
              kMaxCount);
  }
  if (s.ok()) {
    s = range("max_summary_tokens", o.max_summary_tokens, kMinSummaryTokens,
              4096);
  }
  if (s.ok()) s = range("cache_ttl_ms", o.cache_ttl_ms, 0, kCacheMaxTtlMs);
  if (s.ok() && o.target_ratio.has_value() &&
      !(*o.target_ratio >= 0.1 && *o.target_ratio <= 0.9)) {
    s = absl::InvalidArgumentError(absl::StrFormat(
        "target_ratio must be between 0.1 and 0.9 (got %g)", *o.target_ratio));
  }
  return s;
}

// One unit of the plan: messages kept or dropped together.
struct Item {
  size_t begin = 0;
  size_t end = 0;
  Tier tier = Tier::kRoutine;
  int64_t tokens = 0;
  bool transient = false;  // every message transient: no summary needed
  bool must_keep = false;
  bool recent = false;
  bool min_important = false;
  bool forced = false;      // dropped by the strategy, whatever the budget
  bool duplicate = false;   // compress_similar: a later copy exists
  // compress_similar: the merged message replacing [begin, end).
  std::string merged_json;
  std::string merged_text;
  int64_t merged_tokens = 0;
  std::string_view keep_reason;
};

// Dropped runs of items. A run's summary may cost up to min(reserve, the
// tokens of its items that want one): a summary never costs more than what
// it replaces, and one below kMinSummaryTokens is not written. In the
// Anthropic format a run of an odd number of messages leaves the same role
// on both sides (or an assistant first), so it always needs a message of
// the other role: at least `placeholder` tokens. Each run's weight (those
// tokens) and message count are kept at its endpoints, so that a drop
// updates runs and the total summary cost in O(1).
class Runs {
 public:
  Runs(size_t n, int64_t reserve, int64_t placeholder)
      : reserve_(reserve),
        placeholder_(placeholder),
        start_(n),
        end_(n),
        weight_(n, 0),
        messages_(n, 0),
        dropped_(n) {}

  bool dropped(size_t i) const { return dropped_[i]; }
  int64_t reserve() const { return reserve_; }
  int64_t placeholder() const { return placeholder_; }
  // The summary allowance of the run starting at item i.
  int64_t CostOfRunAt(size_t i) const { return Cost(weight_[i], messages_[i]); }

  // Drops item i, of `messages` messages whose summary-wanting tokens are
  // `w`; returns the change in the total summary cost.
  int64_t Drop(size_t i, int64_t w, size_t messages) {
    const bool l = i > 0 && dropped_[i - 1];
    const bool r = i + 1 < dropped_.size() && dropped_[i + 1];
    const size_t a = l ? start_[i - 1] : i;
    const size_t b = r ? end_[i + 1] : i;
    const int64_t before = (l ? Cost(weight_[a], messages_[a]) : 0) +
                           (r ? Cost(weight_[i + 1], messages_[i + 1]) : 0);
    weight_[a] = (l ? weight_[a] : 0) + (r ? weight_[i + 1] : 0) + w;
    messages_[a] =
        (l ? messages_[a] : 0) + (r ? messages_[i + 1] : 0) + messages;
    end_[a] = b;
    start_[b] = a;
    dropped_[i] = true;
    return Cost(weight_[a], messages_[a]) - before;
  }

 private:
  int64_t Cost(int64_t w, size_t messages) const {
    int64_t cost = 0;
    if (reserve_ > 0 && w >= kMinSummaryTokens) cost = std::min(reserve_, w);
    if (messages % 2 == 1) cost = std::max(cost, placeholder_);
    return cost;
  }

  int64_t reserve_;
  int64_t placeholder_;         // 0 unless the format alternates roles
  std::vector<size_t> start_;   // at a run's last item: its first
  std::vector<size_t> end_;     // at a run's first item: its last
  std::vector<int64_t> weight_; // at a run's first item
  std::vector<size_t> messages_;  // at a run's first item
  std::vector<bool> dropped_;
};

// The file a file-view call reads: its "path", "file_path", "filename" or
// "file" argument, else the first operand of a shell "cat"/"head"/"tail"
// command. Empty when none is found. A scan of the arguments' JSON text,
// enough for the usual agent tools; escapes in paths are kept as written.
std::string ViewedPath(std::string_view arguments) {
  for (std::string_view name :
       {"\"path\"", "\"file_path\"", "\"filename\"", "\"file\""}) {
    size_t at = arguments.find(name);
    if (at == std::string_view::npos) continue;
    at = arguments.find('"', at + name.size());
    if (at == std::string_view::npos) continue;
    const size_t end = arguments.find('"', at + 1);
    if (end == std::string_view::npos) continue;
    return std::string(arguments.substr(at + 1, end - at - 1));
  }
  for (std::string_view command : {"cat ", "head ", "tail "}) {
    size_t at = arguments.find(command);
    if (at == std::string_view::npos) continue;
    at += command.size();
    while (at < arguments.size() && arguments[at] == '-') {
      // Skip options such as "-n" or "-n 20".
      at = arguments.find(' ', at);
      if (at == std::string_view::npos) return std::string();
      ++at;
      if (at < arguments.size() && arguments[at] >= '0' && arguments[at] <= '9') {
        at = arguments.find(' ', at);
        if (at == std::string_view::npos) return std::string();
        ++at;
      }
    }
    size_t end = at;
    while (end < arguments.size() && arguments[end] != ' ' &&
           arguments[end] != '"' && arguments[end] != '\\' &&
           arguments[end] != ';' && arguments[end] != '|') {
      ++end;
    }
    return std::string(arguments.substr(at, end - at));
  }
  return std::string();
}

// What stands for a dropped run that gets no summary but needs a message.
std::string PlaceholderText(size_t messages) {
  return absl::StrFormat("[Compressed context: %d %s compressed]", messages,
                         messages == 1 ? "message" : "messages");
}

bool IsSystemRole(std::string_view role) {
  return role == "system" || role == "developer";
}

// The text of `text` that fits `max_tokens`, cut at a token (and character)
// boundary.
absl::StatusOr<std::string> FitPrefix(MessageCounter& counter,
                                      std::string_view text,
                                      int64_t max_tokens) {
  if (max_tokens <= 0) return std::string();
  if (const Tokenizer* tokenizer = counter.tokenizer()) {
    EncodeOptions ordinary;
    ordinary.allowed_special = SpecialTokenSet::None();
    ordinary.disallowed_special = SpecialTokenSet::None();
    StatusOr<Truncation> cut =
        tokenizer->Truncate(text, static_cast<size_t>(max_tokens), ordinary);
    if (!cut.ok()) return internal::ToAbsl(cut.status());
    return std::string(cut->text);
  }
  // The estimate is monotone in the prefix length, so bisect on bytes.
  size_t lo = 0;
  size_t hi = text.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    size_t cut = mid;
    while (cut > 0 && cut < text.size() &&
           (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
      --cut;
    }
    if (static_cast<int64_t>(EstimateTokens(text.substr(0, cut))) <=
        max_tokens) {
      lo = std::max(lo, cut);
      if (cut < mid) {
        // Character boundary moved back; stop if no progress is possible.
        if (cut <= lo && mid - 1 <= lo) break;
        hi = mid - 1;
        continue;
      }
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  size_t cut = lo;
  while (cut > 0 && cut < text.size() &&
         (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return std::string(text.substr(0, cut));
}

}  // namespace

Summarizer::~Summarizer() = default;

const char* CompactionStrategyName(CompactionStrategy s) noexcept {
  switch (s) {
    case CompactionStrategy::kSmart:
      return "smart";
    case CompactionStrategy::kSummarize:
      return "summarize";
    case CompactionStrategy::kRemoveOld:
      return "remove_old";
    case CompactionStrategy::kCompressSimilar:
      return "compress_similar";
  }
  return "smart";
}

StatusOr<CompactionStrategy> ParseCompactionStrategy(std::string_view name) {
  for (CompactionStrategy s :
       {CompactionStrategy::kSmart, CompactionStrategy::kSummarize,
        CompactionStrategy::kRemoveOld, CompactionStrategy::kCompressSimilar}) {
    if (name == CompactionStrategyName(s)) return s;
  }
  return Status(StatusCode::kInvalidArgument,
                absl::StrFormat("strategy must be one of smart, summarize, "
                                "remove_old, compress_similar (got \"%s\")",
                                name));
}

const char* DecisionActionName(MessageDecision::Action a) noexcept {
  switch (a) {
    case MessageDecision::Action::kKept:
      return "kept";
    case MessageDecision::Action::kTruncated:
      return "truncated";
    case MessageDecision::Action::kSummarized:
      return "summarized";
    case MessageDecision::Action::kDropped:
      return "dropped";
    case MessageDecision::Action::kMerged:
      return "merged";
  }
  return "kept";
}

namespace {

// The classifier a compaction uses: the caller's or the built-in one,
// without the "tool_result" and "schema_info" rules when the options say
// so. Removing a rule recompiles the phrase automaton, so the variants of
// the built-in table are made once per Compactor.
class ClassifierVariants {
 public:
  std::shared_ptr<const Classifier> For(
      const std::shared_ptr<const Classifier>& given, bool tool_results,
      bool schema_info) {
    const bool default_table = given == nullptr;
    const std::shared_ptr<const Classifier> base =
        default_table ? Classifier::Default() : given;
    if (tool_results && schema_info) return base;
    const size_t slot = (tool_results ? 0 : 1) + (schema_info ? 0 : 2) - 1;
    if (default_table) {
      std::lock_guard<std::mutex> lock(mu_);
      if (made_[slot] != nullptr) return made_[slot];
    }
    auto adjusted = std::make_shared<Classifier>(*base);
    if (!tool_results) (void)adjusted->RemoveRule("tool_result");
    if (!schema_info) (void)adjusted->RemoveRule("schema_info");
    if (default_table) {
      std::lock_guard<std::mutex> lock(mu_);
      if (made_[slot] == nullptr) made_[slot] = adjusted;
      return made_[slot];
    }
    return adjusted;
  }

 private:
  std::mutex mu_;
  std::shared_ptr<const Classifier> made_[3];
};

}  // namespace

struct Compactor::Impl {
  CompactorServices services;
  ClassifierVariants variants;
};

namespace {

// Everything one compaction computes, shared by its attempts.
class Engine {
 public:
  Engine(const CompactionOptions& options, const CompactorServices& services,
         ChatHistory history, MessageCounter& counter)
      : options_(options),
        services_(services),
        history_(std::move(history)),
        counter_(counter) {}

  absl::Status Prepare(simdjson::dom::array messages,
                       const Classifier& classifier);
  absl::StatusOr<CompactionResult> Compact();

 private:
  struct Attempt {
    std::vector<CompactedMessage> out;
    std::vector<MessageDecision::Action> actions;  // per input message
    std::vector<std::string_view> reasons;         // per input message
    internal::SpanDigester overall;  // everything summarized
    int64_t total = 0;
    size_t summaries = 0;
    size_t summarizer_failures = 0;
  };

  absl::StatusOr<int64_t> CountJson(std::string_view json);
  void BuildItems();
  void ApplyCompressSimilar();
  std::vector<size_t> DropOrder() const;
  // Plans drops into `runs`; returns the estimated total (exact for kept
  // messages, an upper bound for summaries).
  // Plans drops into `runs` until the estimate is at most `target`.
  int64_t Plan(Runs& runs, int64_t target) const;
  // Writes the output of the plan in `runs`; `use_summarizer` lets the
  // host's Summarizer write the summaries.
  absl::StatusOr<Attempt> Assemble(const Runs& runs, bool allow_truncation,
                                   bool use_summarizer);
  absl::StatusOr<std::string> SummaryFor(size_t first_item, size_t last_item,
                                         int64_t allowance,
                                         bool use_summarizer,
                                         Attempt& attempt);
  // Cuts message m's largest text so that it loses at least `need` more
  // tokens (as far as its text allows), marking the cut; returns the tokens
  // saved. The cut is made from the original text each time.
  absl::StatusOr<int64_t> CutMessage(size_t m, int64_t need);
  // Cuts must-keep messages, largest first, to bring `total` to target_.
  absl::Status Truncate(Attempt& attempt);
  // When the messages that must be kept alone exceed the target, cuts them
  // down to half of it, so that summaries and the newest messages keep some
  // room: a truncated anchor beats a history reduced to its anchors.
  absl::Status CapMustKeep();
  void RefreshItemTokens();
  // The message as emitted when kept: cut, or as given.
  const std::string& KeptJson(size_t m) const {
    return replaced_[m].empty() ? history_.messages[m].json : replaced_[m];
  }

  const CompactionOptions& options_;
  const CompactorServices& services_;
  ChatHistory history_;
  MessageCounter& counter_;
  std::vector<int64_t> tokens_;
  std::vector<Classification> classes_;
  internal::TaskFinding opening_;
  std::vector<Item> items_;
  std::vector<std::string> replaced_;  // per message: the cut JSON, or empty
  std::vector<int64_t> removed_;       // per message: text tokens cut
  int64_t original_total_ = 0;
  int64_t target_ = 0;
  simdjson::dom::parser scratch_parser_;
};

absl::StatusOr<int64_t> Engine::CountJson(std::string_view json) {
  CTXKIT_CP_ASSIGN_OR_RETURN(
      simdjson::dom::element root,
      internal::ParseJson(scratch_parser_, json, "compacted message"));
  return counter_.Message(root, "message");
}

absl::Status Engine::Prepare(simdjson::dom::array messages,
                             const Classifier& classifier) {
  const size_t n = history_.messages.size();
  tokens_.resize(n);
  replaced_.assign(n, std::string());
  removed_.assign(n, 0);
  size_t i = 0;
  int64_t total = counter_.reply_priming();
  for (simdjson::dom::element message : messages) {
    if (i >= n) break;
    CTXKIT_CP_ASSIGN_OR_RETURN(
        int64_t t, counter_.Message(message, internal::JsonIndexPath(
                                                 "messages", i)));
    tokens_[i] = t;
    total += t;
    ++i;
  }
  original_total_ = total;

  classes_.resize(n);
  opening_ = internal::FindTask(history_);
  std::vector<std::string_view> names;
  std::vector<std::string_view> arguments;
  for (size_t k = 0; k < n; ++k) {
    const ChatMessage& m = history_.messages[k];
    names.clear();
    arguments.clear();
    for (const internal::ToolCall& call : m.calls) {
      names.push_back(call.name);
      arguments.push_back(call.arguments);
    }
    MessageFacts facts;
    facts.index = k;
    facts.role = m.role;
    facts.text = m.text;
    facts.tool_names = names;
    facts.tool_arguments = arguments;
    facts.result_tool_name = m.result_tool_name;
    facts.is_tool_result = !m.result_ids.empty();
    facts.is_error = m.is_error;
    facts.is_task = k == opening_.task;
    facts.is_demonstration =
        opening_.roles[k] == internal::OpeningRole::kDemonstration;
    classes_[k] = classifier.Classify(facts);
  }

  target_ = options_.max_tokens;
  if (options_.target_ratio.has_value()) {
    const int64_t share = static_cast<int64_t>(
        static_cast<double>(original_total_) * *options_.target_ratio);
    target_ = std::min(target_, std::max<int64_t>(share, 1));
  }
  BuildItems();
  return absl::OkStatus();
}

void Engine::BuildItems() {
  const size_t n = history_.messages.size();
  items_.clear();
  items_.reserve(history_.units.size());
  const size_t recent_from =
      n > static_cast<size_t>(options_.recent_window)
          ? n - static_cast<size_t>(options_.recent_window)
          : 0;
  for (const auto& [begin, end] : history_.units) {
    Item item;
    item.begin = begin;
    item.end = end;
    item.transient = true;
    bool system = false;
    for (size_t k = begin; k < end; ++k) {
      item.tokens += tokens_[k];
      item.tier = std::min(item.tier, classes_[k].tier);
      if (classes_[k].tier != Tier::kTransient) item.transient = false;
      if (IsSystemRole(history_.messages[k].role)) system = true;
    }
    item.recent = end > recent_from;
    if (system) {
      item.must_keep = true;
      item.keep_reason = "system";
    } else if (options_.keep_anchors && item.tier == Tier::kAnchor) {
      item.must_keep = true;
      item.keep_reason = "anchor";
    }
    items_.push_back(std::move(item));
  }
  if (!items_.empty() && !items_.back().must_keep) {
    items_.back().must_keep = true;
    items_.back().keep_reason = "last_message";
  }
  int64_t important_left = options_.min_important_messages;
  for (size_t k = items_.size(); k-- > 0 && important_left > 0;) {
    if (items_[k].tier == Tier::kImportant && !items_[k].must_keep) {
      items_[k].min_important = true;
      --important_left;
    }
  }
}

// Near-duplicates: the same tool called with the same arguments, or the same
// text from the same role, keeps only its last occurrence; then runs of
// consecutive same-role text messages are merged into one.
void Engine::ApplyCompressSimilar() {
  absl::flat_hash_map<std::string, size_t> last_seen;
  std::vector<std::string> keys(items_.size());
  for (size_t k = 0; k < items_.size(); ++k) {
    const Item& item = items_[k];
    if (item.must_keep) continue;
    const ChatMessage& first = history_.messages[item.begin];
    std::string key;
    if (first.calls.size() == 1) {
      // Views of one file are near-duplicates whatever their other
      // arguments (ranges, line numbers): the last one shows it best.
      const std::string path =
          classes_[item.begin].rule.starts_with("file_view")
              ? ViewedPath(first.calls[0].arguments)
              : std::string();
      key = path.empty()
                ? absl::StrFormat("call\x1f%s\x1f%s", first.calls[0].name,
                                  first.calls[0].arguments)
                : absl::StrFormat("view\x1f%s", path);
    } else if (item.end - item.begin == 1 && first.text_only &&
               !first.text.empty()) {
      key = absl::StrFormat("text\x1f%s\x1f%s", first.role, first.text);
    }
    if (key.empty()) continue;
    last_seen[key] = k;  // later occurrences overwrite: the last wins
    keys[k] = std::move(key);
  }
  for (size_t k = 0; k < items_.size(); ++k) {
    if (keys[k].empty()) continue;
    if (last_seen[keys[k]] != k) {
      items_[k].duplicate = true;
      items_[k].forced = true;
    }
  }

  // Merge runs of single text-only messages of one role (not system, not
  // carrying cache_control, which a merge would lose).
  std::vector<Item> merged;
  merged.reserve(items_.size());
  auto mergeable = [&](const Item& item) {
    if (item.end - item.begin != 1 || item.duplicate || item.must_keep) {
      return false;
    }
    const ChatMessage& m = history_.messages[item.begin];
    return m.text_only && !IsSystemRole(m.role) &&
           m.json.find("\"cache_control\"") == std::string::npos;
  };
  for (size_t k = 0; k < items_.size();) {
    size_t j = k + 1;
    if (mergeable(items_[k])) {
      const std::string& role = history_.messages[items_[k].begin].role;
      while (j < items_.size() && mergeable(items_[j]) &&
             history_.messages[items_[j].begin].role == role &&
             items_[j].recent == items_[k].recent) {
        ++j;
      }
    }
    if (j - k == 1) {
      merged.push_back(std::move(items_[k]));
      k = j;
      continue;
    }
    Item group = std::move(items_[k]);
    std::string text = history_.messages[group.begin].text;
    for (size_t g = k + 1; g < j; ++g) {
      text += "\n\n";
      text += history_.messages[items_[g].begin].text;
      group.tier = std::min(group.tier, items_[g].tier);
      group.transient = group.transient && items_[g].transient;
      group.min_important = group.min_important || items_[g].min_important;
    }
    group.end = items_[j - 1].end;
    group.merged_json = internal::TextMessageJson(
        history_.messages[group.begin].role, text);
    group.merged_text = std::move(text);
    merged.push_back(std::move(group));
    k = j;
  }
  items_ = std::move(merged);
}

std::vector<size_t> Engine::DropOrder() const {
  std::vector<size_t> order;
  order.reserve(items_.size());
  auto add = [&](auto&& pred) {
    for (size_t k = 0; k < items_.size(); ++k) {
      const Item& item = items_[k];
      if (!item.must_keep && !item.forced && pred(item)) order.push_back(k);
    }
  };
  if (options_.strategy == CompactionStrategy::kRemoveOld) {
    add([](const Item& i) { return !i.recent; });
    add([](const Item& i) { return i.recent; });
    return order;
  }
  auto old = [](const Item& i) { return !i.recent && !i.min_important; };
  add([&](const Item& i) { return old(i) && i.tier == Tier::kTransient; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kRoutine; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kContextual; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kImportant; });
  add([&](const Item& i) { return old(i) && i.tier == Tier::kAnchor; });
  add([](const Item& i) { return !i.recent && i.min_important; });
  add([](const Item& i) { return i.recent; });
  return order;
}

int64_t Engine::Plan(Runs& runs, int64_t target) const {
  auto item_tokens = [](const Item& item) {
    return item.merged_json.empty() ? item.tokens : item.merged_tokens;
  };
  // Transient items are dropped without a summary.
  auto wants_summary = [&](const Item& item) {
    return item.transient ? int64_t{0} : item_tokens(item);
  };
  int64_t total = counter_.reply_priming();
  for (const Item& item : items_) total += item_tokens(item);
  for (size_t k = 0; k < items_.size(); ++k) {
    if (!items_[k].forced) continue;
    total += runs.Drop(k, wants_summary(items_[k]), items_[k].end - items_[k].begin) -
             item_tokens(items_[k]);
  }
  const bool must_fit = options_.strategy == CompactionStrategy::kSmart ||
                        options_.strategy == CompactionStrategy::kRemoveOld;
  if (total <= target && must_fit) return total;
  std::vector<size_t> dropped;
  for (size_t k : DropOrder()) {
    if (total <= target) break;
    total += runs.Drop(k, wants_summary(items_[k]), items_[k].end - items_[k].begin) -
             item_tokens(items_[k]);
    dropped.push_back(k);
  }
  // remove_old promises a suffix; transient messages are never wanted back.
  if (total > target || dropped.empty() ||
      options_.strategy == CompactionStrategy::kRemoveOld) {
    return total;
  }
  // The last drop may have overshot (one large message): give back, most
  // valuable first (the reverse of the drop order), what still fits, each
  // with the worst case of the summaries it might split.
  std::vector<bool> keep(items_.size(), false);
  int64_t estimate = total;
  bool restored = false;
  for (auto it = dropped.rbegin(); it != dropped.rend(); ++it) {
    if (items_[*it].transient) continue;
    const int64_t cost =
        item_tokens(items_[*it]) + runs.reserve() + runs.placeholder();
    if (estimate + cost <= target) {
      keep[*it] = true;
      estimate += cost;
      restored = true;
    }
  }
  if (!restored) return total;
  Runs replanned(items_.size(), runs.reserve(), runs.placeholder());
  total = counter_.reply_priming();
  for (const Item& item : items_) total += item_tokens(item);
  for (size_t k = 0; k < items_.size(); ++k) {
    if (!runs.dropped(k) || keep[k]) continue;
    total += replanned.Drop(k, wants_summary(items_[k]),
                            items_[k].end - items_[k].begin) -
             item_tokens(items_[k]);
  }
  runs = std::move(replanned);
  return total;
}

absl::StatusOr<std::string> Engine::SummaryFor(size_t first_item,
                                               size_t last_item,
                                               int64_t allowance,
                                               bool use_summarizer,
                                               Attempt& attempt) {
  internal::SpanDigester digester;
  for (size_t k = first_item; k <= last_item; ++k) {
    for (size_t m = items_[k].begin; m < items_[k].end; ++m) {
      digester.Add(history_.messages[m], classes_[m].tier);
    }
  }
  attempt.overall.Merge(digester.digest());
  // Every summary carries entities, errors, actions and decisions: they
  // are what a reader of the compacted history needs next.
  std::string text = internal::SummaryText(digester.digest(), true);
  if (use_summarizer) {
    SummaryRequest request;
    request.messages_json = "[";
    for (size_t k = first_item; k <= last_item; ++k) {
      for (size_t m = items_[k].begin; m < items_[k].end; ++m) {
        if (request.messages_json.size() > 1) request.messages_json += ",";
        request.messages_json += history_.messages[m].json;
      }
    }
    request.messages_json += "]";
    request.extractive = text;
    request.message_count = digester.digest().message_count;
    request.max_tokens = static_cast<size_t>(allowance);
    StatusOr<std::string> written = services_.summarizer->Summarize(request);
    bool used = false;
    if (written.ok() && !written->empty()) {
      absl::StatusOr<int64_t> n = counter_.Text(*written);
      if (n.ok() && *n <= allowance) {
        text = std::move(*written);
        used = true;
      }
    }
    if (!used) ++attempt.summarizer_failures;
  }
  CTXKIT_CP_ASSIGN_OR_RETURN(int64_t n, counter_.Text(text));
  if (n > allowance) {
    constexpr std::string_view kEllipsis = "...]";
    CTXKIT_CP_ASSIGN_OR_RETURN(int64_t ellipsis, counter_.Text(kEllipsis));
    CTXKIT_CP_ASSIGN_OR_RETURN(text,
                               FitPrefix(counter_, text, allowance - ellipsis));
    text += kEllipsis;
  }
  return text;
}

absl::StatusOr<Engine::Attempt> Engine::Assemble(const Runs& runs,
                                                 bool allow_truncation,
                                                 bool use_summarizer) {
  Attempt a;
  const size_t n = history_.messages.size();
  a.actions.assign(n, MessageDecision::Action::kKept);
  a.reasons.assign(n, std::string_view());
  a.total = counter_.reply_priming();
  const bool anthropic = history_.format == ChatFormat::kAnthropic;
  // Per-message overhead of a summary message, so its text fits the run's
  // allowance.
  CTXKIT_CP_ASSIGN_OR_RETURN(
      int64_t empty, CountJson(internal::TextMessageJson("assistant", "")));
  const int64_t overhead = empty + 2;  // + a separator when folded
  std::string pending_summary;  // to fold into the next kept message
  std::string_view last_role;   // of the last emitted non-system message

  for (size_t k = 0; k < items_.size();) {
    const Item& item = items_[k];
    if (runs.dropped(k)) {
      size_t j = k;
      while (j < items_.size() && runs.dropped(j)) ++j;
      // Below this a summary could not even say how many messages it
      // stands for.
      constexpr int64_t kMinSummaryText = 8;
      const int64_t allowance = runs.CostOfRunAt(k) - overhead;
      bool summarize = allowance >= kMinSummaryText;
      size_t run_messages = 0;
      for (size_t d = k; d < j; ++d) run_messages += items_[d].end - items_[d].begin;
      for (size_t d = k; d < j; ++d) {
        for (size_t m = items_[d].begin; m < items_[d].end; ++m) {
          a.actions[m] = summarize ? MessageDecision::Action::kSummarized
                                   : MessageDecision::Action::kDropped;
          a.reasons[m] = items_[d].duplicate ? "duplicate"
                         : items_[d].forced  ? "strategy"
                         : items_[d].transient ? "transient"
                                               : "budget";
        }
      }
      // The next kept message exists: the last item is always kept.
      const std::string_view next_role =
          history_.messages[items_[j].begin].role;
      const bool needs_marker =
          anthropic && !summarize &&
          (last_role.empty() ? next_role == "assistant"
                             : last_role == next_role);
      if (summarize || needs_marker) {
        std::string text;
        if (summarize) {
          CTXKIT_CP_ASSIGN_OR_RETURN(
              text, SummaryFor(k, j - 1, allowance, use_summarizer, a));
        } else {
          text = PlaceholderText(run_messages);
        }
        ++a.summaries;
        std::string_view role = "assistant";
        bool fold = false;
        if (anthropic) {
          if (last_role.empty()) {
            role = "user";
            fold = next_role != "assistant";
          } else {
            role = last_role == "user" ? "assistant" : "user";
            fold = next_role == role;
          }
        }
        if (fold) {
          pending_summary = std::move(text);
        } else {
          CompactedMessage summary;
          summary.json = internal::TextMessageJson(role, text);
          CTXKIT_CP_ASSIGN_OR_RETURN(int64_t t, CountJson(summary.json));
          summary.tokens = static_cast<size_t>(t);
          summary.is_compressed = true;
          a.out.push_back(std::move(summary));
          last_role = role;
        }
      }
      k = j;
      continue;
    }
    // Kept.
    const size_t first_out = a.out.size();
    if (!item.merged_json.empty()) {
      CompactedMessage out;
      out.json = item.merged_json;
      out.tokens = static_cast<size_t>(item.merged_tokens);
      out.is_compressed = true;
      out.source_index = item.begin;
      a.out.push_back(std::move(out));
      for (size_t m = item.begin; m < item.end; ++m) {
        a.actions[m] = m == item.begin ? MessageDecision::Action::kKept
                                       : MessageDecision::Action::kMerged;
        a.reasons[m] = "merged";
      }
    } else {
      for (size_t m = item.begin; m < item.end; ++m) {
        CompactedMessage out;
        out.json = KeptJson(m);
        out.tokens = static_cast<size_t>(tokens_[m]);
        out.is_compressed = !replaced_[m].empty();
        out.source_index = m;
        a.out.push_back(std::move(out));
        a.reasons[m] = !item.keep_reason.empty() ? item.keep_reason
                       : item.recent             ? "recent_window"
                       : item.min_important      ? "min_important"
                                                 : "within_budget";
      }
    }
    if (!pending_summary.empty()) {
      // Fold into the first message of this unit (never a tool-result
      // carrier: those do not start units).
      CompactedMessage& first = a.out[first_out];
      if (item.merged_json.empty()) {
        ChatMessage kept = history_.messages[item.begin];
        kept.json = KeptJson(item.begin);
        CTXKIT_CP_ASSIGN_OR_RETURN(
            first.json, internal::PrependText(kept, pending_summary));
      } else {
        first.json = internal::TextMessageJson(
            history_.messages[item.begin].role,
            absl::StrFormat("%s\n\n%s", pending_summary, item.merged_text));
      }
      CTXKIT_CP_ASSIGN_OR_RETURN(int64_t t, CountJson(first.json));
      first.tokens = static_cast<size_t>(t);
      first.is_compressed = true;
      pending_summary.clear();
    }
    for (size_t m = item.begin; m < item.end; ++m) {
      if (!IsSystemRole(history_.messages[m].role)) {
        last_role = history_.messages[m].role;
      }
    }
    k += 1;
  }
  for (const CompactedMessage& m : a.out) {
    a.total += static_cast<int64_t>(m.tokens);
  }
  if (allow_truncation && a.total > target_) {
    if (absl::Status s = Truncate(a); !s.ok()) return s;
  }
  return a;
}

absl::StatusOr<int64_t> Engine::CutMessage(size_t m, int64_t need) {
  const ChatMessage& message = history_.messages[m];
  if (message.largest_text_bytes == 0 || need <= 0) return 0;
  CTXKIT_CP_ASSIGN_OR_RETURN(std::string text, internal::LargestText(message));
  CTXKIT_CP_ASSIGN_OR_RETURN(int64_t text_tokens, counter_.Text(text));
  const std::string marker_probe = absl::StrFormat(
      "\n[... truncated by ctxkit: %d of %d tokens removed]", text_tokens,
      text_tokens);
  CTXKIT_CP_ASSIGN_OR_RETURN(int64_t marker_tokens,
                             counter_.Text(marker_probe));
  // Two tokens of slack for merges across the cut.
  const int64_t keep =
      text_tokens - removed_[m] - need - marker_tokens - 2;
  CTXKIT_CP_ASSIGN_OR_RETURN(std::string prefix,
                             FitPrefix(counter_, text, keep));
  CTXKIT_CP_ASSIGN_OR_RETURN(int64_t kept_tokens, counter_.Text(prefix));
  const std::string replacement = absl::StrFormat(
      "%s\n[... truncated by ctxkit: %d of %d tokens removed]", prefix,
      text_tokens - kept_tokens, text_tokens);
  CTXKIT_CP_ASSIGN_OR_RETURN(std::string json,
                             internal::ReplaceLargestText(message, replacement));
  CTXKIT_CP_ASSIGN_OR_RETURN(int64_t t, CountJson(json));
  if (t >= tokens_[m]) return 0;
  const int64_t saved = tokens_[m] - t;
  replaced_[m] = std::move(json);
  tokens_[m] = t;
  removed_[m] = text_tokens - kept_tokens;
  return saved;
}

void Engine::RefreshItemTokens() {
  for (Item& item : items_) {
    if (!item.merged_json.empty()) continue;  // merges hold no must-keep text
    item.tokens = 0;
    for (size_t m = item.begin; m < item.end; ++m) item.tokens += tokens_[m];
  }
}

absl::Status Engine::CapMustKeep() {
  int64_t must = counter_.reply_priming();
  std::vector<size_t> candidates;
  for (const Item& item : items_) {
    if (!item.must_keep) continue;
    must += item.tokens;
    for (size_t m = item.begin; m < item.end; ++m) candidates.push_back(m);
  }
  if (must <= target_) return absl::OkStatus();
  // The newest message is cut last (it is where the history stands), the
  // task before it (what the history is about); otherwise the largest
  // first.
  const size_t last = history_.messages.size() - 1;
  auto rank = [&](size_t m) {
    if (m == last) return 2;
    return m == opening_.task ? 1 : 0;
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](size_t x, size_t y) {
                     if (rank(x) != rank(y)) return rank(x) < rank(y);
                     return tokens_[x] > tokens_[y];
                   });
  int64_t need = must - target_ / 2;
  for (size_t m : candidates) {
    if (need <= 0) break;
    CTXKIT_CP_ASSIGN_OR_RETURN(int64_t saved, CutMessage(m, need));
    need -= saved;
  }
  RefreshItemTokens();
  return absl::OkStatus();
}

absl::Status Engine::Truncate(Attempt& a) {
  // Largest kept messages with readable text first; ties by position.
  std::vector<size_t> order;
  for (size_t o = 0; o < a.out.size(); ++o) {
    const CompactedMessage& m = a.out[o];
    // Summaries, merges and messages holding a folded summary are not cut.
    if (!m.source_index.has_value()) continue;
    if (m.json != KeptJson(*m.source_index)) continue;
    order.push_back(o);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return a.out[x].tokens > a.out[y].tokens;
  });
  for (size_t o : order) {
    if (a.total <= target_) break;
    CompactedMessage& out = a.out[o];
    const size_t m = *out.source_index;
    CTXKIT_CP_ASSIGN_OR_RETURN(int64_t saved, CutMessage(m, a.total - target_));
    if (saved == 0) continue;
    a.total -= saved;
    out.json = replaced_[m];
    out.tokens = static_cast<size_t>(tokens_[m]);
    out.is_compressed = true;
  }
  RefreshItemTokens();
  return absl::OkStatus();
}

absl::StatusOr<CompactionResult> Engine::Compact() {
  if (options_.strategy == CompactionStrategy::kCompressSimilar) {
    ApplyCompressSimilar();
    for (Item& item : items_) {
      if (item.merged_json.empty()) continue;
      CTXKIT_CP_ASSIGN_OR_RETURN(item.merged_tokens, CountJson(item.merged_json));
    }
  } else if (options_.strategy == CompactionStrategy::kSummarize) {
    for (Item& item : items_) {
      if (!item.must_keep && !item.recent) item.forced = true;
    }
  }

  const bool summaries =
      options_.enable_summarization &&
      options_.strategy != CompactionStrategy::kRemoveOld;
  int64_t reserve = 0;
  if (summaries) {
    reserve = std::min<int64_t>(options_.max_summary_tokens, target_ / 4);
    if (reserve < kMinSummaryTokens) reserve = 0;
  }

  // Anthropic roles alternate: a run dropped from between two messages of
  // one role needs a marker message of the other.
  int64_t placeholder = 0;
  if (history_.format == ChatFormat::kAnthropic) {
    CTXKIT_CP_ASSIGN_OR_RETURN(
        placeholder, CountJson(internal::TextMessageJson(
                         "assistant", PlaceholderText(99999999))));
  }
  if (absl::Status s = CapMustKeep(); !s.ok()) return s;
  // With summaries, then without; each attempt plans and assembles once,
  // cutting must-keep messages only when the plan cannot meet the target.
  std::optional<Attempt> chosen;
  if (reserve > 0) {
    Runs runs(items_.size(), reserve, placeholder);
    const bool fits = Plan(runs, target_) <= target_;
    CTXKIT_CP_ASSIGN_OR_RETURN(Attempt a, Assemble(runs, !fits, false));
    if (a.total <= target_) {
      chosen = std::move(a);
      // The plan reserves each summary's allowance, and summaries are
      // usually shorter: plan again for the target plus what was left
      // unused, keeping the fuller result while it still fits (at most two
      // more linear passes).
      for (int pass = 0; pass < 2; ++pass) {
        const int64_t slack = target_ - chosen->total;
        if (slack * 20 < target_) break;
        Runs looser(items_.size(), reserve, placeholder);
        Plan(looser, target_ + slack);
        CTXKIT_CP_ASSIGN_OR_RETURN(Attempt b, Assemble(looser, false, false));
        if (b.total > target_ || b.total <= chosen->total) break;
        chosen = std::move(b);
        runs = std::move(looser);
      }
      const bool summarizer = options_.enable_llm_summarization &&
                              services_.summarizer != nullptr &&
                              chosen->summaries > 0;
      if (summarizer) {
        // The host writes the summaries of the plan chosen; if its texts
        // make the whole exceed the target, the extractive result stands.
        CTXKIT_CP_ASSIGN_OR_RETURN(Attempt c, Assemble(runs, false, true));
        if (c.total <= target_) {
          chosen = std::move(c);
        } else {
          chosen->summarizer_failures = c.summaries;
        }
      }
    }
  }
  if (!chosen.has_value()) {
    RefreshItemTokens();
    Runs runs(items_.size(), 0, placeholder);
    Plan(runs, target_);
    CTXKIT_CP_ASSIGN_OR_RETURN(Attempt a, Assemble(runs, true, false));
    chosen = std::move(a);
  }
  Attempt& a = *chosen;

  CompactionResult result;
  result.format = history_.format;
  result.strategy = options_.strategy;
  result.original_tokens = static_cast<size_t>(original_total_);
  result.compacted_tokens = static_cast<size_t>(a.total);
  result.target_tokens = static_cast<size_t>(target_);
  result.budget_met = a.total <= target_;
  result.over_budget_by =
      result.budget_met ? 0 : static_cast<size_t>(a.total - target_);
  result.original_count = history_.messages.size();
  result.compacted_count = a.out.size();
  result.summary_count = a.summaries;
  result.summarizer_failures = a.summarizer_failures;
  result.compression_ratio =
      original_total_ > 0 ? static_cast<double>(a.total) /
                                static_cast<double>(original_total_)
                          : 1.0;
  for (size_t m = 0; m < history_.messages.size(); ++m) {
    if (a.actions[m] != MessageDecision::Action::kKept) ++result.dropped_count;
    if (a.actions[m] == MessageDecision::Action::kKept &&
        classes_[m].tier == Tier::kAnchor) {
      ++result.anchor_count;
    }
    if (!replaced_[m].empty() &&
        a.actions[m] == MessageDecision::Action::kKept) {
      ++result.truncated_count;
    }
  }
  result.messages_json.reserve(static_cast<size_t>(original_total_) * 4 + 2);
  result.messages_json = "[";
  for (size_t o = 0; o < a.out.size(); ++o) {
    if (o > 0) result.messages_json += ",";
    result.messages_json += a.out[o].json;
  }
  result.messages_json += "]";
  const SpanDigest& overall = a.overall.digest();
  result.summary.topics = overall.topics;
  result.summary.tables = overall.tables;
  result.summary.tools = overall.tools;
  if (overall.message_count > 0) {
    result.summary.description = internal::SummaryText(overall, false);
  }
  if (options_.explain) {
    result.decisions.reserve(history_.messages.size());
    for (size_t m = 0; m < history_.messages.size(); ++m) {
      MessageDecision d;
      d.index = m;
      d.tier = classes_[m].tier;
      d.rule = std::string(classes_[m].rule);
      d.action = !replaced_[m].empty() &&
                         a.actions[m] == MessageDecision::Action::kKept
                     ? MessageDecision::Action::kTruncated
                     : a.actions[m];
      d.reason = std::string(a.reasons[m]);
      d.detail = opening_.details[m];
      d.tokens = static_cast<size_t>(tokens_[m]);
      result.decisions.push_back(std::move(d));
    }
  }
  result.messages = std::move(a.out);
  return result;
}

// A free function rather than a member of Compactor::Impl: members of a
// class nested in an exported class would be exported too.
absl::StatusOr<CompactionResult> RunCompaction(
    const CompactorServices& services, ClassifierVariants& variants,
    simdjson::dom::array messages, const CompactionOptions& options) {
  const ModelRegistry& registry = services.registry != nullptr
                                      ? *services.registry
                                      : ModelRegistry::Default();
  const auto started = std::chrono::steady_clock::now();
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  CTXKIT_CP_ASSIGN_OR_RETURN(ChatHistory history,
                             internal::ParseChatHistory(messages, options.format));
  std::string counter_type = options.token_counter_type;
  if (options.model.empty() && counter_type.empty()) {
    counter_type =
        history.format == ChatFormat::kAnthropic ? "anthropic" : "openai";
  }
  CTXKIT_CP_ASSIGN_OR_RETURN(
      internal::CountingChoice choice,
      internal::ChooseCounting(options.model, counter_type, registry));
  MessageCountOptions count_options;
  count_options.format = choice.format;
  MessageCounter counter(choice.tokenizer, count_options, choice.format);

  std::string cache_lookup;
  if (options.enable_caching && services.cache != nullptr) {
    cache_lookup = internal::CacheLookupKey(history, options, choice.encoding);
    // A history too large to key is compacted uncached.
    if (cache_lookup.size() > kCacheMaxLookupBytes) cache_lookup.clear();
  }
  if (!cache_lookup.empty()) {
    StatusOr<CacheEntry> hit =
        services.cache->GetKeyed(cache_lookup, kCachePrefix);
    if (hit.ok()) {
      absl::StatusOr<CompactionResult> cached =
          internal::DecodeResult(hit->content);
      if (cached.ok()) {
        cached->from_cache = true;
        return cached;
      }
    } else if (hit.status().code() != StatusCode::kNotFound) {
      return internal::ToAbsl(hit.status());
    }
  }

  const std::shared_ptr<const Classifier> classifier =
      variants.For(options.classifier, options.preserve_tool_results,
                   options.preserve_schema_info);

  Engine engine(options, services, std::move(history), counter);
  if (absl::Status s = engine.Prepare(messages, *classifier); !s.ok()) {
    return s;
  }
  absl::StatusOr<CompactionResult> result = engine.Compact();
  if (!result.ok()) return result;
  absl::StatusOr<std::string> encoded_result;
  result->encoding = choice.tokenizer != nullptr ? choice.tokenizer->name() : "";
  result->method = choice.tokenizer != nullptr ? CountMethod::kTokenizer
                                               : CountMethod::kHeuristic;

  if (!cache_lookup.empty()) {
    encoded_result = internal::EncodeResult(*result);
    if (!encoded_result.ok()) return encoded_result.status();
    if (encoded_result->size() > kCacheMaxContentBytes) cache_lookup.clear();
  }
  if (!cache_lookup.empty()) {
    CachePutOptions put;
    put.prefix = std::string(kCachePrefix);
    put.ttl_ms = options.cache_ttl_ms;
    put.model = options.model.empty() ? "gpt-4o" : options.model;
    StatusOr<CachePutResult> stored =
        services.cache->PutKeyed(cache_lookup, *encoded_result, put);
    if (!stored.ok()) return internal::ToAbsl(stored.status());
  }
  if (options.enable_analytics && services.analytics != nullptr) {
    const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - started)
                           .count();
    (void)services.analytics->Record("compact", us, true);
    const AnalyticsCount counts[] = {
        {"compact.messages_in", static_cast<int64_t>(result->original_count)},
        {"compact.messages_out", static_cast<int64_t>(result->compacted_count)},
        {"compact.tokens_in", static_cast<int64_t>(result->original_tokens)},
        {"compact.tokens_out", static_cast<int64_t>(result->compacted_tokens)},
        {"compact.tokens_saved", result->tokens_saved()},
    };
    (void)services.analytics->AddCounts(std::span<const AnalyticsCount>(counts));
  }
  return result;
}

}  // namespace

absl::StatusOr<CompactionResult> internal::CompactorAccess::Compact(
    const Compactor& compactor, simdjson::dom::array messages,
    const CompactionOptions& options) {
  return RunCompaction(compactor.impl_->services, compactor.impl_->variants,
                       messages, options);
}

Compactor::Compactor(CompactorServices services)
    : impl_(std::make_unique<Impl>()) {
  impl_->services = std::move(services);
}

Compactor::~Compactor() = default;

StatusOr<CompactionResult> Compactor::Compact(
    std::string_view history_json, const CompactionOptions& options) const {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      internal::ParseJson(parser, history_json, "chat history");
  if (!root.ok()) return internal::ToPublic(root.status());
  absl::StatusOr<simdjson::dom::array> messages =
      internal::HistoryMessages(*root);
  if (!messages.ok()) return internal::ToPublic(messages.status());
  return internal::ToPublic(RunCompaction(impl_->services, impl_->variants, *messages, options));
}

StatusOr<std::string> Compactor::CompactJson(
    std::string_view request_json) const {
  simdjson::dom::parser parser;
  absl::StatusOr<internal::CompactionRequest> request =
      internal::ParseCompactionRequest(parser, request_json);
  if (!request.ok()) return internal::ToPublic(request.status());
  absl::StatusOr<CompactionResult> result =
      RunCompaction(impl_->services, impl_->variants, request->messages, request->options);
  if (!result.ok()) return internal::ToPublic(result.status());
  return internal::ToPublic(internal::ResponseJson(*result, *request));
}

StatusOr<CompactionResult> Compactor::CompactConversation(
    ConversationStore& conversations, std::string_view conversation_id,
    const CompactionOptions& options, uint64_t* version) const {
  StatusOr<ConversationDetail> detail =
      conversations.Get(conversation_id, /*with_messages=*/true);
  if (!detail.ok()) return detail.status();
  if (detail->messages.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  absl::StrFormat("conversation %s has no messages to compact",
                                  conversation_id));
  }
  absl::StatusOr<std::string> history =
      internal::StoredMessagesJson(detail->messages);
  if (!history.ok()) return internal::ToPublic(history.status());
  CompactionOptions stored_options = options;
  if (stored_options.model.empty() &&
      stored_options.token_counter_type.empty()) {
    stored_options.model = detail->conversation.model;
  }
  StatusOr<CompactionResult> result = Compact(*history, stored_options);
  if (!result.ok()) return result;
  absl::StatusOr<std::string> info = internal::CompactionInfoJson(*result);
  if (!info.ok()) return internal::ToPublic(info.status());
  NewCompactedView view;
  view.messages_json = result->messages_json;
  view.info_json = *info;
  view.source_message_count = detail->messages.size();
  view.source_last_seq = detail->messages.back().seq;
  view.tokens = result->compacted_tokens;
  StatusOr<CompactedView> saved =
      conversations.SaveCompactedView(conversation_id, view);
  if (!saved.ok()) return saved.status();
  if (version != nullptr) *version = saved->version;
  return result;
}

}  // namespace ctxkit

#undef CTXKIT_CP_ASSIGN_OR_RETURN
#undef CTXKIT_CP_CONCAT
#undef CTXKIT_CP_CONCAT_INNER
