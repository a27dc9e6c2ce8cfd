#include "lib/compactor/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "lib/compactor/next_turn.h"
#include "lib/json/json_reader.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"

namespace ctxkit::internal {
namespace {

// Below this a summary could not even say how many messages it stands for.
constexpr int64_t kMinSummaryText = 8;
// A must-keep cut smaller than this saves less than its marker costs.
constexpr int64_t kMinUsefulCut = 24;

// Why what the next turn needs is kept (the decision's "reason").
constexpr std::string_view kLatestPlan = "latest_plan";
constexpr std::string_view kLastResult = "last_result";
constexpr std::string_view kLatestRequest = "latest_request";
constexpr std::string_view kFinalDecision = "final_decision";
// The order they are let go in when the budget is short: least needed
// first.
constexpr std::array<std::string_view, 4> kNeededLeastFirst = {
    kLatestPlan, kLastResult, kLatestRequest, kFinalDecision};

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
      if (at < arguments.size() && arguments[at] >= '0' &&
          arguments[at] <= '9') {
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

bool IsOutputRule(std::string_view rule) {
  for (std::string_view r :
       {"shell_output", "stack_trace", "test_failure", "test_result",
        "nonzero_exit", "error_output", "file_view_text", "file_search_text",
        "edit_failed"}) {
    if (rule == r) return true;
  }
  return false;
}

}  // namespace

Engine::Engine(const CompactionOptions& options,
               const CompactorServices& services, ChatHistory history,
               MessageCounter& counter, CancelPoll& poll)
    : options_(options),
      services_(services),
      history_(std::move(history)),
      counter_(counter),
      poll_(poll) {}

absl::StatusOr<int64_t> Engine::CountJson(std::string_view json) {
  CTXKIT_ASSIGN_OR_RETURN(
      simdjson::dom::element root,
      ParseJson(scratch_parser_, json, "compacted message"));
  return counter_.Message(root, "message");
}

absl::Status Engine::Prepare(simdjson::dom::array messages,
                             const Classifier& classifier) {
  const size_t n = history_.messages.size();
  tokens_.resize(n);
  replaced_.assign(n, std::string());
  removed_.assign(n, 0);
  largest_text_.assign(n, std::string());
  cutters_.clear();
  cutters_.resize(n);
  message_digests_.clear();
  message_digests_.resize(n);
  must_keep_message_.assign(n, 0);
  size_t i = 0;
  int64_t total = counter_.reply_priming();
  poll_.NextPhase("counting tokens", n);
  for (simdjson::dom::element message : messages) {
    if (i >= n) break;
    CTXKIT_ASSIGN_OR_RETURN(
        int64_t t, counter_.Message(message, JsonIndexPath("messages", i)));
    tokens_[i] = t;
    total += t;
    CTXKIT_RETURN_IF_ERROR(poll_.Message(history_.messages[i].json.size()));
    ++i;
  }
  original_total_ = total;
  original_tokens_ = tokens_;

  classes_.resize(n);
  opening_ = FindTask(history_);
  std::vector<std::string_view> names;
  std::vector<std::string_view> arguments;
  poll_.NextPhase("classifying", n);
  for (size_t k = 0; k < n; ++k) {
    const ChatMessage& m = history_.messages[k];
    CTXKIT_RETURN_IF_ERROR(poll_.Message(m.json.size()));
    names.clear();
    arguments.clear();
    for (const ToolCall& call : m.calls) {
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
    facts.is_demonstration = opening_.roles[k] == OpeningRole::kDemonstration;
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
  // What the next turn needs is kept as anchors are (and so only while
  // keep_anchors holds).
  std::vector<std::string_view> needed(n);
  if (options_.keep_anchors) {
    const NextTurnNeeds needs = FindNextTurnNeeds(history_);
    if (needs.last_result) needed[*needs.last_result] = kLastResult;
    if (needs.latest_request) needed[*needs.latest_request] = kLatestRequest;
    if (needs.latest_plan) needed[*needs.latest_plan] = kLatestPlan;
    if (needs.final_decision) needed[*needs.final_decision] = kFinalDecision;
  }
  for (const auto& [begin, end] : history_.units) {
    Item item;
    item.begin = begin;
    item.end = end;
    item.transient = true;
    bool system = false;
    std::string_view need;
    for (size_t k = begin; k < end; ++k) {
      item.tokens += tokens_[k];
      item.tier = std::min(item.tier, classes_[k].tier);
      if (classes_[k].tier != Tier::kTransient) item.transient = false;
      if (IsSystemRole(history_.messages[k].role)) system = true;
      if (need.empty()) need = needed[k];
    }
    item.recent = end > recent_from;
    if (system) {
      item.must_keep = true;
      item.keep_reason = "system";
    } else if (options_.keep_anchors && item.tier == Tier::kAnchor) {
      item.must_keep = true;
      item.keep_reason = "anchor";
    } else if (!need.empty() && end < n) {
      // (The last message's reason is "last_message", below.)
      item.must_keep = true;
      item.needed = true;
      item.keep_reason = need;
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
  for (const Item& item : items_) {
    if (!item.must_keep) continue;
    for (size_t k = item.begin; k < item.end; ++k) must_keep_message_[k] = 1;
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
    } else if (item.messages() == 1 && first.text_only && !first.text.empty()) {
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
    if (item.messages() != 1 || item.duplicate || item.must_keep) return false;
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
    group.merged_json =
        TextMessageJson(history_.messages[group.begin].role, text);
    group.merged_text = std::move(text);
    merged.push_back(std::move(group));
    k = j;
  }
  items_ = std::move(merged);
}

TextKind Engine::KindOf(size_t m) const {
  const ChatMessage& message = history_.messages[m];
  if (IsSystemRole(message.role)) return TextKind::kInstructions;
  if (m == opening_.task) return TextKind::kRequest;
  if (!message.result_ids.empty() || message.role == "tool") {
    return TextKind::kOutput;
  }
  if (message.role == "user" && IsOutputRule(classes_[m].rule)) {
    return TextKind::kOutput;
  }
  return TextKind::kProse;
}

absl::StatusOr<TextCutter*> Engine::Cutter(size_t m) {
  if (!cutters_[m].has_value()) {
    CTXKIT_ASSIGN_OR_RETURN(largest_text_[m],
                            LargestText(history_.messages[m]));
    CTXKIT_ASSIGN_OR_RETURN(
        TextCutter cutter,
        TextCutter::Make(counter_, largest_text_[m], KindOf(m)));
    cutters_[m].emplace(std::move(cutter));
  }
  return &*cutters_[m];
}

absl::StatusOr<int64_t> Engine::CutTo(size_t m, int64_t keep) {
  const ChatMessage& message = history_.messages[m];
  if (message.largest_text_bytes == 0) return tokens_[m];
  // A cut counts the message's lines again.
  CTXKIT_RETURN_IF_ERROR(poll_.Message(message.largest_text_bytes));
  CTXKIT_ASSIGN_OR_RETURN(TextCutter * cutter, Cutter(m));
  if (keep >= cutter->tokens()) {
    replaced_[m].clear();
    tokens_[m] = original_tokens_[m];
    removed_[m] = 0;
    return tokens_[m];
  }
  CTXKIT_ASSIGN_OR_RETURN(std::string text, cutter->Cut(keep));
  CTXKIT_ASSIGN_OR_RETURN(int64_t kept_tokens, counter_.Text(text));
  CTXKIT_ASSIGN_OR_RETURN(std::string json, ReplaceLargestText(message, text));
  CTXKIT_ASSIGN_OR_RETURN(int64_t t, CountJson(json));
  if (t >= original_tokens_[m]) {
    // Nothing saved (the marker costs what it replaces): keep it whole.
    replaced_[m].clear();
    tokens_[m] = original_tokens_[m];
    removed_[m] = 0;
    return tokens_[m];
  }
  replaced_[m] = std::move(json);
  tokens_[m] = t;
  removed_[m] = cutter->tokens() - kept_tokens;
  return t;
}

void Engine::RefreshItemTokens() {
  for (Item& item : items_) {
    if (!item.merged_json.empty()) continue;  // merges hold no must-keep text
    item.tokens = 0;
    for (size_t m = item.begin; m < item.end; ++m) item.tokens += tokens_[m];
  }
}

int64_t Engine::RoomForOptional(const PlanInput& input) const {
  Runs runs(items_.size(), input.reserve, input.placeholder);
  int64_t room = 0;
  for (size_t k = 0; k < items_.size(); ++k) {
    if (items_[k].must_keep) continue;
    room += runs.Drop(k, items_[k].summary_weight(), items_[k].messages());
  }
  return std::min(room, std::max<int64_t>(input.placeholder,
                                          target_ / kMaxSummaryShareDivisor));
}

absl::Status Engine::LetGoOfNeeded(int64_t room) {
  // What each must-keep item costs at its floor.
  std::vector<int64_t> floor(items_.size(), 0);
  int64_t floors = counter_.reply_priming();
  for (size_t k = 0; k < items_.size(); ++k) {
    const Item& item = items_[k];
    if (!item.must_keep) continue;
    for (size_t m = item.begin; m < item.end; ++m) {
      if (history_.messages[m].largest_text_bytes == 0) {
        floor[k] += tokens_[m];
        continue;
      }
      CTXKIT_ASSIGN_OR_RETURN(TextCutter * cutter, Cutter(m));
      floor[k] += tokens_[m] - (cutter->tokens() - cutter->floor_tokens());
    }
    floors += floor[k];
  }
  // When the must-keep messages cannot all stay even at their floors, what
  // the next turn needs is let go, one kind at a time, the least needed
  // first: it becomes the last thing dropped rather than a reason for an
  // infeasible result.
  for (std::string_view reason : kNeededLeastFirst) {
    if (floors + room <= target_) break;
    for (size_t k : LetGo(reason)) floors -= floor[k];
  }
  return absl::OkStatus();
}

bool Engine::LetGoOfNextNeeded() {
  for (std::string_view reason : kNeededLeastFirst) {
    if (!LetGo(reason).empty()) return true;
  }
  return false;
}

std::vector<size_t> Engine::LetGo(std::string_view reason) {
  std::vector<size_t> released;
  for (size_t k = 0; k < items_.size(); ++k) {
    Item& item = items_[k];
    if (!item.needed || !item.must_keep || item.keep_reason != reason) {
      continue;
    }
    item.must_keep = false;
    item.keep_reason = {};
    for (size_t m = item.begin; m < item.end; ++m) must_keep_message_[m] = 0;
    released.push_back(k);
  }
  return released;
}

absl::Status Engine::DegradeMustKeep(int64_t room) {
  // Start from the original texts: a second call with more room cuts less.
  std::vector<size_t> candidates;
  int64_t must = counter_.reply_priming();
  for (size_t m = 0; m < history_.messages.size(); ++m) {
    if (!IsMustKeep(m)) continue;
    if (!replaced_[m].empty()) {
      replaced_[m].clear();
      tokens_[m] = original_tokens_[m];
      removed_[m] = 0;
    }
    must += tokens_[m];
    if (history_.messages[m].largest_text_bytes > 0) candidates.push_back(m);
  }
  RefreshItemTokens();
  int64_t need = must + room - target_;
  if (need <= 0) return absl::OkStatus();

  // Each cut is in proportion to the square of what a message holds above
  // its floor: the largest loses most, a small one is touched only once
  // the large ones near their floors, none is cut below its floor, and a
  // cut that would save less than its marker costs is not made.
  std::vector<int64_t> keep(history_.messages.size(), 0);
  std::vector<int64_t> floor(history_.messages.size(), 0);
  for (size_t m : candidates) {
    CTXKIT_ASSIGN_OR_RETURN(TextCutter * cutter, Cutter(m));
    keep[m] = cutter->tokens();
    floor[m] = cutter->floor_tokens();
  }
  bool small_cuts = false;  // once large ones alone no longer do
  for (int round = 0; round < 5 && need > 0; ++round) {
    int64_t excess = 0;
    double weight = 0;
    for (size_t m : candidates) {
      const int64_t above = std::max<int64_t>(keep[m] - floor[m], 0);
      excess += above;
      weight += static_cast<double>(above) * static_cast<double>(above);
    }
    if (excess <= 0) break;
    const bool to_floor = excess <= need;
    int64_t saved = 0;
    for (size_t m : candidates) {
      const int64_t above = keep[m] - floor[m];
      if (above <= 0) continue;
      int64_t cut = above;
      if (!to_floor) {
        const double share =
            static_cast<double>(above) * static_cast<double>(above) / weight;
        cut = std::min<int64_t>(
            above,
            static_cast<int64_t>(std::ceil(static_cast<double>(need) * share)));
        if (!small_cuts && cut < kMinUsefulCut && cut < above) continue;
      }
      keep[m] -= cut;
      const int64_t before = tokens_[m];
      CTXKIT_ASSIGN_OR_RETURN(int64_t after, CutTo(m, keep[m]));
      saved += before - after;
    }
    need -= saved;
    if (to_floor) break;
    if (saved == 0) small_cuts = true;
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
    if (history_.messages[*m.source_index].largest_text_bytes == 0) continue;
    order.push_back(o);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return a.out[x].tokens > a.out[y].tokens;
  });
  for (size_t o : order) {
    if (a.total <= target_) break;
    CompactedMessage& out = a.out[o];
    const size_t m = *out.source_index;
    CTXKIT_ASSIGN_OR_RETURN(TextCutter * cutter, Cutter(m));
    const int64_t current = cutter->tokens() - removed_[m];
    const int64_t floor = IsMustKeep(m) ? cutter->floor_tokens() : 0;
    const int64_t keep = std::max(floor, current - (a.total - target_));
    if (keep >= current) continue;
    const int64_t before = tokens_[m];
    CTXKIT_ASSIGN_OR_RETURN(int64_t after, CutTo(m, keep));
    if (after >= before) continue;
    a.total -= before - after;
    out.json = KeptJson(m);
    out.tokens = static_cast<size_t>(after);
    out.is_compressed = true;
  }
  RefreshItemTokens();
  return absl::OkStatus();
}

absl::StatusOr<SpanDigest> Engine::DigestGroup(const RunGroup& group) {
  SpanDigester digester;
  for (const auto& [begin, end] : group.runs) {
    for (size_t k = begin; k < end; ++k) {
      for (size_t m = items_[k].begin; m < items_[k].end; ++m) {
        // Digesting reads the message's text, merging does not.
        const bool new_digest = message_digests_[m] == nullptr;
        CTXKIT_RETURN_IF_ERROR(
            poll_.Message(new_digest ? history_.messages[m].json.size() : 0));
        if (new_digest) {
          SpanDigester one;
          one.Add(history_.messages[m], classes_[m].tier,
                  opening_.roles[m] == OpeningRole::kDemonstration);
          message_digests_[m] = std::make_unique<SpanDigest>(one.digest());
        }
        digester.Merge(*message_digests_[m]);
      }
    }
  }
  return digester.digest();
}

absl::StatusOr<std::string> Engine::SummaryFor(const RunGroup& group,
                                               const SpanDigest& digest,
                                               int64_t allowance,
                                               bool use_summarizer,
                                               Attempt& attempt) {
  attempt.overall.Merge(digest);
  // Every summary carries entities, errors, actions and decisions: they
  // are what a reader of the compacted history needs next.
  std::string text = SummaryText(digest, true);
  if (use_summarizer) {
    SummaryRequest request;
    request.messages_json = "[";
    for (const auto& [begin, end] : group.runs) {
      for (size_t k = begin; k < end; ++k) {
        for (size_t m = items_[k].begin; m < items_[k].end; ++m) {
          if (request.messages_json.size() > 1) request.messages_json += ",";
          request.messages_json += history_.messages[m].json;
        }
      }
    }
    request.messages_json += "]";
    request.extractive = text;
    request.message_count = digest.message_count;
    request.max_tokens = static_cast<size_t>(allowance);
    // The host's summarizer may be a model call, the dearest step of all.
    CTXKIT_RETURN_IF_ERROR(poll_.Check());
    StatusOr<std::string> written = services_.summarizer->Summarize(request);
    if (written.ok() && !written->empty()) {
      absl::StatusOr<int64_t> n = counter_.Text(*written);
      if (n.ok() && *n <= allowance) return *std::move(written);
    }
    ++attempt.summarizer_failures;
  }
  CTXKIT_ASSIGN_OR_RETURN(int64_t n, counter_.Text(text));
  if (n <= allowance) return text;
  // Too long: write fewer items, the least useful first (SummaryText's
  // order), never the message count. Bisect on the number of items.
  size_t lo = 0;
  size_t hi = SummaryItemCount(digest, true);
  std::string best = SummaryText(digest, true, 0);
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    std::string candidate = SummaryText(digest, true, mid);
    CTXKIT_ASSIGN_OR_RETURN(int64_t t, counter_.Text(candidate));
    if (t <= allowance) {
      lo = mid;
      best = std::move(candidate);
    } else {
      hi = mid - 1;
    }
  }
  return best;
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
  CTXKIT_ASSIGN_OR_RETURN(int64_t empty,
                          CountJson(TextMessageJson("assistant", "")));
  const int64_t overhead = empty + 2;  // + a separator when folded
  // One summary per group of runs, written where the group's first run
  // was; together they take at most their share of the target (allowances
  // are scaled down when the runs reserve more).
  const std::vector<RunGroup> groups = SummaryGroups(items_, runs);
  std::vector<size_t> group_of(items_.size(), groups.size());  // at run starts
  std::vector<SpanDigest> digests(groups.size());
  std::vector<int64_t> allowance(groups.size(), 0);
  {
    // What each summary would take whole, and what the plan reserved.
    std::vector<int64_t> need(groups.size(), 0);
    int64_t reserved = 0;
    const int64_t cap = std::max(runs.reserve(), runs.placeholder());
    for (size_t g = 0; g < groups.size(); ++g) {
      int64_t planned = 0;
      for (const auto& run : groups[g].runs) {
        group_of[run.first] = g;
        planned += runs.CostOfRunAt(run.first);
      }
      reserved += std::min(planned, cap);
      if (runs.reserve() > 0) {
        CTXKIT_ASSIGN_OR_RETURN(digests[g], DigestGroup(groups[g]));
        CTXKIT_ASSIGN_OR_RETURN(int64_t t,
                                counter_.Text(SummaryText(digests[g], true)));
        need[g] = std::min(t + overhead, cap);
      }
    }
    // Together the summaries take what the plan reserved and at most their
    // share of the target, shared so that short summaries are written whole
    // and the room they leave goes to the long ones (water-filling).
    int64_t left = std::min(reserved, target_ / kMaxSummaryShareDivisor);
    left = std::max(left,
                    runs.placeholder() * static_cast<int64_t>(groups.size()));
    std::vector<size_t> order(groups.size());
    for (size_t g = 0; g < order.size(); ++g) order[g] = g;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return need[x] < need[y]; });
    for (size_t i = 0; i < order.size(); ++i) {
      const size_t g = order[i];
      const int64_t fair = left / static_cast<int64_t>(order.size() - i);
      allowance[g] = std::max(std::min(need[g], fair), runs.placeholder());
      left -= allowance[g];
    }
  }
  std::string pending_summary;  // to fold into the next kept message
  std::string_view last_role;   // of the last emitted non-system message

  for (size_t k = 0; k < items_.size();) {
    const Item& item = items_[k];
    CTXKIT_RETURN_IF_ERROR(poll_.Message(0));
    if (runs.dropped(k)) {
      size_t j = k;
      while (j < items_.size() && runs.dropped(j)) ++j;
      // The head run of a group writes the group's summary; its other runs
      // need only a marker where roles must alternate.
      const size_t g = group_of[k];
      const bool head = groups[g].runs.front().first == k;
      const int64_t text_allowance = allowance[g] - overhead;
      const bool group_summarized =
          runs.reserve() > 0 && text_allowance >= kMinSummaryText;
      const bool summarize = head && group_summarized;
      const bool covered = !head && group_summarized;
      size_t run_messages = 0;
      for (size_t d = k; d < j; ++d) run_messages += items_[d].messages();
      for (size_t d = k; d < j; ++d) {
        for (size_t m = items_[d].begin; m < items_[d].end; ++m) {
          a.actions[m] = summarize || covered
                             ? MessageDecision::Action::kSummarized
                             : MessageDecision::Action::kDropped;
          a.reasons[m] = items_[d].duplicate   ? "duplicate"
                         : items_[d].forced    ? "strategy"
                         : items_[d].transient ? "transient"
                                               : "budget";
        }
      }
      // The next kept message exists: the last item is always kept.
      const std::string_view next_role =
          history_.messages[items_[j].begin].role;
      const bool needs_marker = anthropic && !summarize &&
                                (last_role.empty() ? next_role == "assistant"
                                                   : last_role == next_role);
      if (summarize || needs_marker) {
        std::string text;
        if (summarize) {
          CTXKIT_ASSIGN_OR_RETURN(
              text, SummaryFor(groups[g], digests[g], text_allowance,
                               use_summarizer, a));
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
          summary.json = TextMessageJson(role, text);
          CTXKIT_ASSIGN_OR_RETURN(int64_t t, CountJson(summary.json));
          summary.tokens = static_cast<size_t>(t);
          summary.is_compressed = true;
          a.summary_tokens += t;
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
      const int64_t before = static_cast<int64_t>(first.tokens);
      if (item.merged_json.empty()) {
        ChatMessage kept = history_.messages[item.begin];
        kept.json = KeptJson(item.begin);
        CTXKIT_ASSIGN_OR_RETURN(first.json, PrependText(kept, pending_summary));
      } else {
        first.json = TextMessageJson(
            history_.messages[item.begin].role,
            absl::StrFormat("%s\n\n%s", pending_summary, item.merged_text));
      }
      CTXKIT_ASSIGN_OR_RETURN(int64_t t, CountJson(first.json));
      first.tokens = static_cast<size_t>(t);
      first.is_compressed = true;
      a.summary_tokens += t - before;
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

absl::StatusOr<Engine::Attempt> Engine::PlanAndAssemble(
    const PlanInput& input) {
  if (input.reserve > 0) {
    Runs runs;
    const bool fits = Plan(input, target_, &runs) <= target_;
    CTXKIT_ASSIGN_OR_RETURN(Attempt a, Assemble(runs, !fits, false));
    if (a.total <= target_) {
      // The plan reserves each summary's allowance, and summaries are
      // usually shorter: plan again for the target plus what was left
      // unused (half of it after an overshoot), keeping the fuller result
      // while it still fits (at most three more passes).
      int64_t extra = target_ - a.total;
      for (int pass = 0; pass < 3; ++pass) {
        if (extra * 20 < target_) break;
        Runs looser;
        Plan(input, target_ + extra, &looser);
        CTXKIT_ASSIGN_OR_RETURN(Attempt b, Assemble(looser, false, false));
        if (b.total > target_ || b.total <= a.total) {
          extra /= 2;  // overshot: aim at half the room
          continue;
        }
        a = std::move(b);
        runs = std::move(looser);
        extra += target_ - a.total;
      }
      const bool summarizer = options_.enable_llm_summarization &&
                              services_.summarizer != nullptr &&
                              a.summaries > 0;
      if (summarizer) {
        // The host writes the summaries of the plan chosen; if its texts
        // make the whole exceed the target, the extractive result stands.
        CTXKIT_ASSIGN_OR_RETURN(Attempt c, Assemble(runs, false, true));
        if (c.total <= target_) {
          a = std::move(c);
        } else {
          a.summarizer_failures = c.summaries;
        }
      }
      return a;
    }
  }
  RefreshItemTokens();
  PlanInput bare = input;
  bare.reserve = 0;
  Runs runs;
  Plan(bare, target_, &runs);
  return Assemble(runs, true, false);
}

absl::StatusOr<CompactionResult> Engine::Compact() {
  // Planning and summarizing pass over the messages several times (see
  // "Why it is linear"): no count of them would mean much.
  poll_.NextPhase("summarizing", 0);
  if (options_.strategy == CompactionStrategy::kCompressSimilar) {
    ApplyCompressSimilar();
    for (Item& item : items_) {
      if (item.merged_json.empty()) continue;
      // A merge is counted again, text and all.
      CTXKIT_RETURN_IF_ERROR(poll_.Message(item.merged_json.size()));
      CTXKIT_ASSIGN_OR_RETURN(item.merged_tokens, CountJson(item.merged_json));
    }
  } else if (options_.strategy == CompactionStrategy::kSummarize) {
    for (Item& item : items_) {
      if (!item.must_keep && !item.recent) item.forced = true;
    }
  }

  PlanInput input;
  input.items = &items_;
  input.strategy = options_.strategy;
  input.priming = counter_.reply_priming();
  if (options_.enable_summarization &&
      options_.strategy != CompactionStrategy::kRemoveOld) {
    input.reserve = std::min<int64_t>(options_.max_summary_tokens, target_ / 4);
    if (input.reserve < kMinSummaryTokens) input.reserve = 0;
  }
  input.share = target_ / kMaxSummaryShareDivisor;
  // Anthropic roles alternate: a run dropped from between two messages of
  // one role needs a marker message of the other.
  if (history_.format == ChatFormat::kAnthropic) {
    CTXKIT_ASSIGN_OR_RETURN(
        input.placeholder,
        CountJson(TextMessageJson("assistant", PlaceholderText(99999999))));
  }

  int64_t room = RoomForOptional(input);
  if (absl::Status s = LetGoOfNeeded(room); !s.ok()) return s;
  if (absl::Status s = DegradeMustKeep(room); !s.ok()) return s;
  CTXKIT_ASSIGN_OR_RETURN(Attempt a, PlanAndAssemble(input));
  // The floors only estimate the result: a cut that saves less than its
  // marker costs is not made, and the markers a plan needs can exceed the
  // room. What the next turn needs is still let go rather than miss a
  // budget the rest could meet.
  while (a.total > target_ && LetGoOfNextNeeded()) {
    room = RoomForOptional(input);
    if (absl::Status s = DegradeMustKeep(room); !s.ok()) return s;
    CTXKIT_ASSIGN_OR_RETURN(a, PlanAndAssemble(input));
  }
  int64_t cut = 0;
  for (size_t m = 0; m < history_.messages.size(); ++m) {
    if (IsMustKeep(m)) cut += removed_[m];
  }
  if (cut > 0 && a.total <= target_ &&
      a.total * 100 < target_ * kMinUsePercent) {
    // The room reserved for the rest was more than its summaries took: cut
    // the must-keep messages less, and keep the fuller result if it fits.
    const int64_t used = a.summary_tokens + (room > 0 ? 2 : 0);
    std::vector<std::string> replaced = replaced_;
    std::vector<int64_t> removed = removed_;
    std::vector<int64_t> tokens = tokens_;
    if (absl::Status s = DegradeMustKeep(used); !s.ok()) return s;
    CTXKIT_ASSIGN_OR_RETURN(Attempt b, PlanAndAssemble(input));
    if (b.total <= target_ && b.total > a.total) {
      a = std::move(b);
    } else {
      replaced_ = std::move(replaced);
      removed_ = std::move(removed);
      tokens_ = std::move(tokens);
      RefreshItemTokens();
    }
  }

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
      original_total_ > 0
          ? static_cast<double>(a.total) / static_cast<double>(original_total_)
          : 1.0;
  for (size_t m = 0; m < history_.messages.size(); ++m) {
    const bool kept = a.actions[m] == MessageDecision::Action::kKept;
    if (!kept) ++result.dropped_count;
    if (kept && classes_[m].tier == Tier::kAnchor) ++result.anchor_count;
    if (kept && !replaced_[m].empty()) {
      ++result.truncated_count;
      if (IsMustKeep(m)) {
        result.must_keep_cut_tokens += static_cast<size_t>(removed_[m]);
      }
    }
  }
  result.status = !result.budget_met                ? BudgetStatus::kInfeasible
                  : result.must_keep_cut_tokens > 0 ? BudgetStatus::kDegraded
                                                    : BudgetStatus::kMet;
  result.messages_json.reserve(static_cast<size_t>(original_total_) * 4 + 2);
  result.messages_json = "[";
  for (size_t o = 0; o < a.out.size(); ++o) {
    if (o > 0) result.messages_json += ",";
    result.messages_json += a.out[o].json;
  }
  result.messages_json += "]";
  const SpanDigest& overall = a.overall.digest();
  result.summary.topics = Topics(overall);
  result.summary.tables = overall.tables;
  result.summary.tools = overall.tools;
  if (overall.message_count > 0) {
    result.summary.description = SummaryText(overall, false);
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
      d.tokens = static_cast<size_t>(original_tokens_[m]);
      result.decisions.push_back(std::move(d));
    }
  }
  result.messages = std::move(a.out);
  return result;
}

}  // namespace ctxkit::internal
