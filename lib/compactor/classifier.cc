// Classifier: the rule table and its compiled form.
//
// Compilation turns the table into three PhraseMatchers (anywhere phrases,
// leading phrases, whole-text phrases), a sorted table of tool names, and per
// rule one "slot" bit for each list criterion. Each phrase carries two slot
// lists: the slots a hit in the text sets and those a hit in a call's
// arguments sets (arguments_contains_any, and the text lists of rules with
// match_arguments). So arguments are scanned with the same automata as the
// text, and only rules that opted in see them. Classify() scans the text and
// each call's arguments once per matcher, sets the slots of the phrases
// found, and then tests each rule with a few flag comparisons and bit tests:
// one pass over the input plus O(rules), whatever the phrase count.

#include "ctxkit/classifier.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "lib/base/field_check.h"
#include "lib/compactor/builtin_rules.h"
#include "lib/compactor/compactor_internal.h"
#include "lib/compactor/phrase_matcher.h"
#include "lib/json/json_reader.h"
#include "lib/json/json_writer.h"
#include "lib/json/utf8.h"
#include "lib/status/status_internal.h"
#include "lib/status/status_macros.h"
#include "simdjson.h"

namespace ctxkit {
namespace {

using internal::PhraseMatcher;

constexpr std::array<std::string_view, 5> kRoles = {
    "system", "developer", "user", "assistant", "tool"};
constexpr std::array<const char*, 5> kTierNames = {
    "anchor", "important", "contextual", "routine", "transient"};
constexpr std::string_view kDefaultRule = "default";
constexpr size_t kMaxNameBytes = 64;
constexpr size_t kMaxPhraseBytes = 1024;
constexpr size_t kMaxTotalPhraseBytes = 65536;
constexpr size_t kMaxRules = 1024;
constexpr uint32_t kNoSlot = UINT32_MAX;

std::string Lower(std::string_view s) {
  std::string out(s);
  absl::AsciiStrToLower(&out);
  return out;
}

int CompareIgnoreCase(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(absl::ascii_tolower(a[i]));
    const auto y = static_cast<unsigned char>(absl::ascii_tolower(b[i]));
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

std::string_view TrimLeading(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && absl::ascii_isspace(s[i])) ++i;
  return s.substr(i);
}

// What equals_any compares: leading spaces, and trailing spaces and ".!",
// removed ("Thanks!" equals "thanks").
std::string_view TrimForEquals(std::string_view s) {
  s = TrimLeading(s);
  size_t n = s.size();
  while (n > 0 && (absl::ascii_isspace(s[n - 1]) || s[n - 1] == '.' ||
                   s[n - 1] == '!')) {
    --n;
  }
  return s.substr(0, n);
}

int RoleIndex(std::string_view role) {
  for (size_t i = 0; i < kRoles.size(); ++i) {
    if (CompareIgnoreCase(role, kRoles[i]) == 0) return static_cast<int>(i);
  }
  return -1;
}

int8_t Flag(const std::optional<bool>& b) {
  return b.has_value() ? static_cast<int8_t>(*b) : int8_t{-1};
}

}  // namespace

namespace internal {

struct ClassifierRule {
  Tier tier = Tier::kRoutine;
  uint8_t role_mask = 0;       // 0: any role
  int8_t is_tool_result = -1;  // -1: not tested
  int8_t is_error = -1;
  int8_t is_task = -1;
  int8_t is_demonstration = -1;
  int8_t has_tool_calls = -1;
  bool has_predicate = false;
  size_t min_chars = 0;
  size_t max_chars = std::numeric_limits<size_t>::max();
  // Slot bits of the list criteria; kNoSlot when unset.
  uint32_t contains = kNoSlot;
  uint32_t contains_none = kNoSlot;
  uint32_t starts_with = kNoSlot;
  uint32_t equals = kNoSlot;
  uint32_t tool_names = kNoSlot;
  uint32_t arguments = kNoSlot;
};

// Where a phrase was found and which slots that sets.
struct ClassifierPhraseSlots {
  std::vector<std::vector<uint32_t>> text;       // per phrase id
  std::vector<std::vector<uint32_t>> arguments;  // per phrase id
  bool any_arguments = false;  // some phrase sets a slot from arguments
};

struct ClassifierToolName {
  std::string name;  // lower case
  std::vector<uint32_t> slots;
};

// The compiled table: immutable, shared between copies of a classifier.
struct ClassifierTable {
  std::vector<ClassifierRule> rules;
  uint32_t slot_count = 0;
  // contains_any, contains_none and arguments_contains_any phrases.
  PhraseMatcher contains;
  ClassifierPhraseSlots contains_slots;
  PhraseMatcher starts;
  ClassifierPhraseSlots starts_slots;
  size_t max_start_length = 0;
  PhraseMatcher equals;
  std::vector<std::vector<uint32_t>> equals_slots;  // text only
  size_t max_equals_length = 0;
  std::vector<ClassifierToolName> tool_names;  // sorted by name
};

}  // namespace internal

namespace {

using internal::ClassifierPhraseSlots;
using internal::ClassifierRule;
using internal::ClassifierTable;
using internal::ClassifierToolName;

// Distinct (lower-cased) phrases and, for each, the slots it sets when found
// in the text and when found in a call's arguments.
class PhraseSlots {
 public:
  // A text criterion's phrase; with match_arguments also found in
  // arguments.
  void Add(std::string phrase, uint32_t slot, bool match_arguments) {
    const uint32_t id = Index(std::move(phrase));
    Push(slots_.text[id], slot);
    if (match_arguments) {
      Push(slots_.arguments[id], slot);
      slots_.any_arguments = true;
    }
  }
  // An arguments_contains_any phrase: found in arguments only.
  void AddArguments(std::string phrase, uint32_t slot) {
    Push(slots_.arguments[Index(std::move(phrase))], slot);
    slots_.any_arguments = true;
  }
  const std::vector<std::string>& phrases() const { return phrases_; }
  ClassifierPhraseSlots TakeSlots() { return std::move(slots_); }
  size_t max_length() const {
    size_t n = 0;
    for (const std::string& p : phrases_) n = std::max(n, p.size());
    return n;
  }

 private:
  uint32_t Index(std::string phrase) {
    auto [it, inserted] = index_.emplace(
        std::move(phrase), static_cast<uint32_t>(phrases_.size()));
    if (inserted) {
      phrases_.push_back(it->first);
      slots_.text.emplace_back();
      slots_.arguments.emplace_back();
    }
    return it->second;
  }
  // Rules are compiled in order, so a repeated slot is always the last one.
  static void Push(std::vector<uint32_t>& slots, uint32_t slot) {
    if (slots.empty() || slots.back() != slot) slots.push_back(slot);
  }

  std::map<std::string, uint32_t> index_;
  std::vector<std::string> phrases_;
  ClassifierPhraseSlots slots_;
};

std::shared_ptr<const ClassifierTable> Compile(
    const std::vector<ClassificationRule>& rules) {
  auto table = std::make_shared<ClassifierTable>();
  PhraseSlots contains, starts, equals;
  std::map<std::string, std::vector<uint32_t>> tool_names;
  uint32_t next_slot = 0;
  for (const ClassificationRule& rule : rules) {
    ClassifierRule r;
    r.tier = rule.tier;
    for (const std::string& role : rule.roles) {
      const int index = RoleIndex(role);
      if (index >= 0) r.role_mask |= static_cast<uint8_t>(1u << index);
    }
    r.is_tool_result = Flag(rule.is_tool_result);
    r.is_error = Flag(rule.is_error);
    r.is_task = Flag(rule.is_task);
    r.is_demonstration = Flag(rule.is_demonstration);
    r.has_tool_calls = Flag(rule.has_tool_calls);
    r.has_predicate = static_cast<bool>(rule.predicate);
    if (rule.min_chars) r.min_chars = *rule.min_chars;
    if (rule.max_chars) r.max_chars = *rule.max_chars;
    if (!rule.contains_any.empty()) {
      r.contains = next_slot++;
      for (const std::string& p : rule.contains_any) {
        contains.Add(Lower(p), r.contains, rule.match_arguments);
      }
    }
    if (!rule.contains_none.empty()) {
      r.contains_none = next_slot++;
      for (const std::string& p : rule.contains_none) {
        contains.Add(Lower(p), r.contains_none, rule.match_arguments);
      }
    }
    if (!rule.starts_with_any.empty()) {
      r.starts_with = next_slot++;
      for (const std::string& p : rule.starts_with_any) {
        starts.Add(Lower(TrimLeading(p)), r.starts_with, rule.match_arguments);
      }
    }
    if (!rule.equals_any.empty()) {
      r.equals = next_slot++;
      for (const std::string& p : rule.equals_any) {
        equals.Add(Lower(TrimForEquals(p)), r.equals, false);
      }
    }
    if (!rule.tool_names_any.empty()) {
      r.tool_names = next_slot++;
      for (const std::string& name : rule.tool_names_any) {
        std::vector<uint32_t>& slots = tool_names[Lower(name)];
        if (slots.empty() || slots.back() != r.tool_names) {
          slots.push_back(r.tool_names);
        }
      }
    }
    if (!rule.arguments_contains_any.empty()) {
      r.arguments = next_slot++;
      for (const std::string& p : rule.arguments_contains_any) {
        contains.AddArguments(Lower(p), r.arguments);
      }
    }
    table->rules.push_back(r);
  }
  table->slot_count = next_slot;
  table->contains = PhraseMatcher(contains.phrases());
  table->contains_slots = contains.TakeSlots();
  table->starts = PhraseMatcher(starts.phrases());
  table->max_start_length = starts.max_length();
  table->starts_slots = starts.TakeSlots();
  table->equals = PhraseMatcher(equals.phrases());
  table->max_equals_length = equals.max_length();
  table->equals_slots = equals.TakeSlots().text;
  for (auto& [name, slots] : tool_names) {
    table->tool_names.push_back({name, std::move(slots)});
  }
  return table;
}

size_t PhraseBytes(const ClassificationRule& rule) {
  size_t n = 0;
  for (const auto* list :
       {&rule.contains_any, &rule.contains_none, &rule.starts_with_any,
        &rule.equals_any, &rule.tool_names_any, &rule.arguments_contains_any}) {
    for (const std::string& p : *list) n += p.size();
  }
  return n;
}

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status CheckList(const std::vector<std::string>& list,
                       std::string_view context, std::string_view field,
                       std::string_view (*normalize)(std::string_view)) {
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path =
        internal::JsonIndexPath(internal::JsonPath(context, field), i);
    const std::string& entry = list[i];
    if (entry.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s is empty", path));
    }
    if (entry.size() > kMaxPhraseBytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is longer than %d bytes", path, kMaxPhraseBytes));
    }
    if (!internal::IsValidUtf8(entry)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is not valid UTF-8", path));
    }
    if (normalize != nullptr && normalize(entry).empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is blank once trimmed (spaces, and for equals_any trailing "
          "\".!\")",
          path));
    }
  }
  return absl::OkStatus();
}

// Checks `rule` on its own; `context` names it in messages ("rule",
// "rules[2]").
absl::Status ValidateRule(const ClassificationRule& rule,
                          std::string_view context) {
  if (!IsValidName(rule.name)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be 1 to %d characters of [a-z0-9_.-] (got \"%s\")",
        internal::JsonPath(context, "name"), kMaxNameBytes,
        internal::IsValidUtf8(rule.name)
            ? rule.name
            : internal::ReplaceInvalidUtf8(rule.name)));
  }
  if (rule.name == kDefaultRule) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s \"default\" is reserved for the fallback",
                        internal::JsonPath(context, "name")));
  }
  if (static_cast<size_t>(rule.tier) >= kTierNames.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a tier (%d)", internal::JsonPath(context, "tier"),
        static_cast<int>(rule.tier)));
  }
  if (!internal::IsValidUtf8(rule.description)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not valid UTF-8", internal::JsonPath(context, "description")));
  }
  for (size_t i = 0; i < rule.roles.size(); ++i) {
    if (RoleIndex(rule.roles[i]) < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s must be one of system, developer, user, assistant, tool (got "
          "\"%s\")",
          internal::JsonIndexPath(internal::JsonPath(context, "roles"), i),
          internal::ReplaceInvalidUtf8(rule.roles[i])));
    }
  }
  const struct {
    const std::vector<std::string>* list;
    const char* field;
    std::string_view (*normalize)(std::string_view);
  } lists[] = {
      {&rule.contains_any, "contains_any", nullptr},
      {&rule.contains_none, "contains_none", nullptr},
      {&rule.starts_with_any, "starts_with_any", &TrimLeading},
      {&rule.equals_any, "equals_any", &TrimForEquals},
      {&rule.tool_names_any, "tool_names_any", nullptr},
      {&rule.arguments_contains_any, "arguments_contains_any", nullptr},
  };
  for (const auto& l : lists) {
    absl::Status status = CheckList(*l.list, context, l.field, l.normalize);
    if (!status.ok()) return status;
  }
  if (rule.match_arguments && rule.contains_any.empty() &&
      rule.contains_none.empty() && rule.starts_with_any.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s needs contains_any, contains_none or starts_with_any: it only "
        "lets those read the call arguments too",
        internal::JsonPath(context, "match_arguments")));
  }
  if (rule.min_chars && rule.max_chars && *rule.min_chars > *rule.max_chars) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s (%d) exceeds %s (%d)", internal::JsonPath(context, "min_chars"),
        *rule.min_chars, internal::JsonPath(context, "max_chars"),
        *rule.max_chars));
  }
  const bool has_criterion =
      !rule.roles.empty() || !rule.contains_any.empty() ||
      !rule.contains_none.empty() || !rule.starts_with_any.empty() ||
      !rule.equals_any.empty() || !rule.tool_names_any.empty() ||
      !rule.arguments_contains_any.empty() || rule.min_chars.has_value() ||
      rule.max_chars.has_value() || rule.is_tool_result.has_value() ||
      rule.is_error.has_value() || rule.is_task.has_value() ||
      rule.is_demonstration.has_value() || rule.has_tool_calls.has_value() ||
      static_cast<bool>(rule.predicate);
  if (!has_criterion) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s sets no criterion: set at least one of roles, contains_any, "
        "contains_none, starts_with_any, equals_any, tool_names_any, "
        "arguments_contains_any, min_chars, max_chars, is_tool_result, "
        "is_error, is_task, is_demonstration, has_tool_calls",
        context));
  }
  return absl::OkStatus();
}

const std::vector<ClassificationRule>& EmptyRules() {
  static const auto* const kEmpty = new std::vector<ClassificationRule>();
  return *kEmpty;
}

// Reads an optional array of strings.
absl::Status ReadStringList(simdjson::dom::object obj, std::string_view field,
                            std::string_view context,
                            std::vector<std::string>* out) {
  absl::StatusOr<std::optional<simdjson::dom::array>> array =
      internal::GetOptionalArray(obj, field, context);
  if (!array.ok()) return array.status();
  if (!array->has_value()) return absl::OkStatus();
  const std::string path = internal::JsonPath(context, field);
  size_t i = 0;
  for (simdjson::dom::element item : **array) {
    absl::StatusOr<std::string_view> s =
        internal::AsString(item, internal::JsonIndexPath(path, i));
    if (!s.ok()) return s.status();
    out->emplace_back(*s);
    ++i;
  }
  return absl::OkStatus();
}

absl::Status ReadOptionalBool(simdjson::dom::object obj, std::string_view field,
                              std::string_view context,
                              std::optional<bool>* out) {
  absl::StatusOr<std::optional<bool>> b =
      internal::GetOptionalBool(obj, field, context);
  if (!b.ok()) return b.status();
  *out = *b;
  return absl::OkStatus();
}

absl::Status ReadOptionalSize(simdjson::dom::object obj, std::string_view field,
                              std::string_view context,
                              std::optional<size_t>* out) {
  absl::StatusOr<std::optional<uint64_t>> n =
      internal::GetOptionalUint64(obj, field, context);
  if (!n.ok()) return n.status();
  if (n->has_value()) {
    static_assert(sizeof(size_t) >= sizeof(uint64_t));
    *out = static_cast<size_t>(**n);
  }
  return absl::OkStatus();
}

constexpr std::array<std::string_view, 19> kJsonFields = {
    "name",
    "tier",
    "description",
    "roles",
    "contains_any",
    "contains_none",
    "starts_with_any",
    "equals_any",
    "tool_names_any",
    "arguments_contains_any",
    "match_arguments",
    "min_chars",
    "max_chars",
    "is_tool_result",
    "is_error",
    "is_task",
    "is_demonstration",
    "has_tool_calls",
    "has_predicate"};

absl::StatusOr<ClassificationRule> ReadRule(simdjson::dom::element value,
                                            std::string_view context) {
  absl::StatusOr<simdjson::dom::object> obj =
      internal::AsObject(value, context);
  if (!obj.ok()) return obj.status();
  for (auto field : *obj) {
    const std::string_view key = field.key;
    if (std::find(kJsonFields.begin(), kJsonFields.end(), key) ==
        kJsonFields.end()) {
      return internal::UnknownKeyError(context, key, kJsonFields);
    }
  }
  ClassificationRule rule;
  absl::StatusOr<std::string_view> name =
      internal::GetString(*obj, "name", context);
  if (!name.ok()) return name.status();
  rule.name = std::string(*name);
  absl::StatusOr<std::string_view> tier_name =
      internal::GetString(*obj, "tier", context);
  if (!tier_name.ok()) return tier_name.status();
  StatusOr<Tier> tier = ParseTier(*tier_name);
  if (!tier.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", internal::JsonPath(context, "tier"),
                        tier.status().message()));
  }
  rule.tier = *tier;
  absl::StatusOr<std::optional<std::string_view>> description =
      internal::GetOptionalString(*obj, "description", context);
  if (!description.ok()) return description.status();
  if (description->has_value()) rule.description = std::string(**description);
  const struct {
    const char* field;
    std::vector<std::string>* list;
  } lists[] = {
      {"roles", &rule.roles},
      {"contains_any", &rule.contains_any},
      {"contains_none", &rule.contains_none},
      {"starts_with_any", &rule.starts_with_any},
      {"equals_any", &rule.equals_any},
      {"tool_names_any", &rule.tool_names_any},
      {"arguments_contains_any", &rule.arguments_contains_any},
  };
  for (const auto& l : lists) {
    absl::Status status = ReadStringList(*obj, l.field, context, l.list);
    if (!status.ok()) return status;
  }
  std::optional<bool> match_arguments;
  absl::Status match_status =
      ReadOptionalBool(*obj, "match_arguments", context, &match_arguments);
  if (!match_status.ok()) return match_status;
  rule.match_arguments = match_arguments.value_or(false);
  for (const auto& [field, out] : {std::pair{"min_chars", &rule.min_chars},
                                   std::pair{"max_chars", &rule.max_chars}}) {
    absl::Status status = ReadOptionalSize(*obj, field, context, out);
    if (!status.ok()) return status;
  }
  for (const auto& [field, out] :
       {std::pair{"is_tool_result", &rule.is_tool_result},
        std::pair{"is_error", &rule.is_error},
        std::pair{"is_task", &rule.is_task},
        std::pair{"is_demonstration", &rule.is_demonstration},
        std::pair{"has_tool_calls", &rule.has_tool_calls}}) {
    absl::Status status = ReadOptionalBool(*obj, field, context, out);
    if (!status.ok()) return status;
  }
  std::optional<bool> has_predicate;
  absl::Status status =
      ReadOptionalBool(*obj, "has_predicate", context, &has_predicate);
  if (!status.ok()) return status;
  if (has_predicate.value_or(false)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: predicates can only be set from C++",
                        internal::JsonPath(context, "has_predicate")));
  }
  return rule;
}

void WriteList(internal::JsonWriter& writer, const char* key,
               const std::vector<std::string>& list) {
  if (list.empty()) return;
  writer.Key(key).BeginArray();
  for (const std::string& s : list) writer.String(s);
  writer.EndArray();
}

}  // namespace

struct Classifier::Impl {
  // Added rules first (added_count of them, in the order added), then the
  // rest (the built-in table, as given).
  std::vector<ClassificationRule> rules;
  size_t added_count = 0;
  std::shared_ptr<const ClassifierTable> compiled;

  // Validates `incoming` (named by `contexts`) against the table and each
  // other, then inserts them after the added rules and recompiles.
  absl::Status Insert(std::vector<ClassificationRule> incoming,
                      const std::vector<std::string>& contexts);
};

absl::Status Classifier::Impl::Insert(
    std::vector<ClassificationRule> incoming,
    const std::vector<std::string>& contexts) {
  std::set<std::string_view> names;
  size_t total_bytes = 0;
  for (const ClassificationRule& rule : rules) {
    names.insert(rule.name);
    total_bytes += PhraseBytes(rule);
  }
  for (size_t i = 0; i < incoming.size(); ++i) {
    absl::Status status = ValidateRule(incoming[i], contexts[i]);
    if (!status.ok()) return status;
    if (!names.insert(incoming[i].name).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s \"%s\" is already used", internal::JsonPath(contexts[i], "name"),
          incoming[i].name));
    }
    if (rules.size() + i + 1 > kMaxRules) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a classifier holds at most %d rules", contexts[i], kMaxRules));
    }
    total_bytes += PhraseBytes(incoming[i]);
    if (total_bytes > kMaxTotalPhraseBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the classifier's phrases would exceed %d bytes in total",
          contexts[i], kMaxTotalPhraseBytes));
    }
  }
  const size_t count = incoming.size();
  rules.insert(rules.begin() + static_cast<std::ptrdiff_t>(added_count),
               std::make_move_iterator(incoming.begin()),
               std::make_move_iterator(incoming.end()));
  added_count += count;
  compiled = Compile(rules);
  return absl::OkStatus();
}

const char* TierName(Tier tier) noexcept {
  const auto i = static_cast<size_t>(tier);
  return i < kTierNames.size() ? kTierNames[i] : "unknown";
}

StatusOr<Tier> ParseTier(std::string_view name) {
  for (size_t i = 0; i < kTierNames.size(); ++i) {
    if (CompareIgnoreCase(name, kTierNames[i]) == 0) {
      return static_cast<Tier>(i);
    }
  }
  return Status(StatusCode::kInvalidArgument,
                absl::StrFormat("tier must be one of anchor, important, "
                                "contextual, routine, transient (got \"%s\")",
                                internal::ReplaceInvalidUtf8(name)));
}

Classifier::Classifier() : impl_(std::make_unique<Impl>()) {
  impl_->compiled = Compile(impl_->rules);
}
Classifier::~Classifier() = default;
Classifier::Classifier(const Classifier& other)
    : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_)
                        : std::make_unique<Impl>()) {
  if (!impl_->compiled) impl_->compiled = Compile(impl_->rules);
}
Classifier& Classifier::operator=(const Classifier& other) {
  if (this != &other) {
    Classifier copy(other);
    impl_ = std::move(copy.impl_);
  }
  return *this;
}
Classifier::Classifier(Classifier&&) noexcept = default;
Classifier& Classifier::operator=(Classifier&&) noexcept = default;

Classifier Classifier::WithBuiltinRules() {
  Classifier classifier;
  classifier.impl_->rules = internal::BuiltinRules();
  classifier.impl_->compiled = Compile(classifier.impl_->rules);
  return classifier;
}

std::shared_ptr<const Classifier> Classifier::Default() {
  static const auto* const kDefault = new std::shared_ptr<const Classifier>(
      std::make_shared<const Classifier>(WithBuiltinRules()));
  return *kDefault;
}

Status Classifier::AddRule(ClassificationRule rule) {
  if (!impl_) impl_ = std::make_unique<Impl>();
  std::vector<ClassificationRule> incoming;
  incoming.push_back(std::move(rule));
  return internal::ToPublic(impl_->Insert(std::move(incoming), {"rule"}));
}

absl::Status internal::ClassifierAccess::AddRulesJson(Classifier& classifier,
                                                      std::string_view json) {
  std::unique_ptr<Classifier::Impl>& impl = classifier.impl_;
  if (!impl) impl = std::make_unique<Classifier::Impl>();
  simdjson::dom::parser parser;
  CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::element root,
                          ParseJson(parser, json, "rules"));
  CTXKIT_ASSIGN_OR_RETURN(simdjson::dom::array array, AsArray(root, "rules"));
  std::vector<ClassificationRule> incoming;
  std::vector<std::string> contexts;
  size_t i = 0;
  for (simdjson::dom::element item : array) {
    contexts.push_back(JsonIndexPath("rules", i++));
    CTXKIT_ASSIGN_OR_RETURN(ClassificationRule rule,
                            ReadRule(item, contexts.back()));
    incoming.push_back(std::move(rule));
  }
  return impl->Insert(std::move(incoming), contexts);
}

Status Classifier::AddRulesJson(std::string_view json) {
  return internal::ToPublic(internal::ClassifierAddRulesJson(*this, json));
}

Status Classifier::RemoveRule(std::string_view name) {
  if (impl_) {
    for (size_t i = 0; i < impl_->rules.size(); ++i) {
      if (impl_->rules[i].name != name) continue;
      impl_->rules.erase(impl_->rules.begin() + static_cast<std::ptrdiff_t>(i));
      if (i < impl_->added_count) --impl_->added_count;
      impl_->compiled = Compile(impl_->rules);
      return Status();
    }
  }
  return Status(StatusCode::kNotFound,
                absl::StrFormat("no classification rule named \"%s\"",
                                internal::ReplaceInvalidUtf8(name)));
}

const std::vector<ClassificationRule>& Classifier::rules() const {
  return impl_ ? impl_->rules : EmptyRules();
}

std::string Classifier::RulesJson() const {
  internal::JsonWriter writer;
  writer.BeginArray();
  for (const ClassificationRule& rule : rules()) {
    writer.BeginObject();
    writer.Key("name").String(rule.name);
    writer.Key("tier").String(TierName(rule.tier));
    writer.Key("description").String(rule.description);
    WriteList(writer, "roles", rule.roles);
    WriteList(writer, "contains_any", rule.contains_any);
    WriteList(writer, "contains_none", rule.contains_none);
    WriteList(writer, "starts_with_any", rule.starts_with_any);
    WriteList(writer, "equals_any", rule.equals_any);
    WriteList(writer, "tool_names_any", rule.tool_names_any);
    WriteList(writer, "arguments_contains_any", rule.arguments_contains_any);
    if (rule.match_arguments) writer.Key("match_arguments").Bool(true);
    if (rule.min_chars) writer.Key("min_chars").Uint(*rule.min_chars);
    if (rule.max_chars) writer.Key("max_chars").Uint(*rule.max_chars);
    if (rule.is_tool_result) {
      writer.Key("is_tool_result").Bool(*rule.is_tool_result);
    }
    if (rule.is_error) writer.Key("is_error").Bool(*rule.is_error);
    if (rule.is_task) writer.Key("is_task").Bool(*rule.is_task);
    if (rule.is_demonstration) {
      writer.Key("is_demonstration").Bool(*rule.is_demonstration);
    }
    if (rule.has_tool_calls) {
      writer.Key("has_tool_calls").Bool(*rule.has_tool_calls);
    }
    if (rule.predicate) writer.Key("has_predicate").Bool(true);
    writer.EndObject();
  }
  writer.EndArray();
  // Every string was checked to be UTF-8 when its rule was added, so
  // writing cannot fail.
  absl::StatusOr<std::string> json = std::move(writer).Finish();
  return json.ok() ? *std::move(json) : std::string("[]");
}

Classification Classifier::Classify(const MessageFacts& facts) const {
  if (!impl_ || impl_->rules.empty()) return {Tier::kRoutine, kDefaultRule};
  const ClassifierTable& table = *impl_->compiled;

  // The slot bits: on the stack for ordinary tables, else a per-thread
  // buffer reused across calls.
  constexpr size_t kInlineWords = 16;
  std::array<uint64_t, kInlineWords> inline_bits;
  const size_t words = (table.slot_count + 63) / 64;
  uint64_t* bits = inline_bits.data();
  if (words > kInlineWords) {
    thread_local std::vector<uint64_t> heap_bits;
    heap_bits.assign(words, 0);
    bits = heap_bits.data();
  } else {
    std::fill_n(bits, words, 0);
  }
  const auto set_slots = [bits](const std::vector<uint32_t>& slots) {
    for (uint32_t s : slots) bits[s >> 6] |= uint64_t{1} << (s & 63);
  };
  const auto test = [bits](uint32_t s) {
    return (bits[s >> 6] >> (s & 63)) & 1;
  };

  // The text and each call's arguments go through the same automata; a hit
  // sets the slots that its place (text or arguments) has for that phrase.
  const auto scan_contains =
      [&](std::string_view input,
          const std::vector<std::vector<uint32_t>>& slots) {
        table.contains.Scan(input,
                            [&](uint32_t id, size_t) { set_slots(slots[id]); });
      };
  const auto scan_starts =
      [&](std::string_view input,
          const std::vector<std::vector<uint32_t>>& slots) {
        const std::string_view lead =
            TrimLeading(input).substr(0, table.max_start_length);
        table.starts.Scan(lead, [&](uint32_t id, size_t end) {
          if (end == table.starts.phrase_length(id)) set_slots(slots[id]);
        });
      };
  const std::string_view text = facts.text;
  scan_contains(text, table.contains_slots.text);
  if (table.contains_slots.any_arguments) {
    for (std::string_view arguments : facts.tool_arguments) {
      scan_contains(arguments, table.contains_slots.arguments);
    }
  }
  if (table.max_start_length > 0) {
    scan_starts(text, table.starts_slots.text);
    if (table.starts_slots.any_arguments) {
      for (std::string_view arguments : facts.tool_arguments) {
        scan_starts(arguments, table.starts_slots.arguments);
      }
    }
  }
  if (table.max_equals_length > 0) {
    const std::string_view whole = TrimForEquals(text);
    if (whole.size() <= table.max_equals_length) {
      table.equals.Scan(whole, [&](uint32_t id, size_t end) {
        if (end == whole.size() && table.equals.phrase_length(id) == end) {
          set_slots(table.equals_slots[id]);
        }
      });
    }
  }
  if (!table.tool_names.empty()) {
    const auto find_name = [&](std::string_view name) {
      if (name.empty()) return;
      auto it = std::lower_bound(
          table.tool_names.begin(), table.tool_names.end(), name,
          [](const ClassifierToolName& entry, std::string_view n) {
            return CompareIgnoreCase(entry.name, n) < 0;
          });
      if (it != table.tool_names.end() &&
          CompareIgnoreCase(it->name, name) == 0) {
        set_slots(it->slots);
      }
    };
    for (std::string_view name : facts.tool_names) find_name(name);
    find_name(facts.result_tool_name);
  }

  const int role_index = RoleIndex(facts.role);
  const uint8_t role_bit =
      role_index >= 0 ? static_cast<uint8_t>(1u << role_index) : 0;
  const int8_t is_tool_result = facts.is_tool_result ? 1 : 0;
  const int8_t is_error = facts.is_error ? 1 : 0;
  const int8_t is_task = facts.is_task ? 1 : 0;
  const int8_t is_demonstration = facts.is_demonstration ? 1 : 0;
  const int8_t has_tool_calls = facts.tool_names.empty() ? 0 : 1;
  const size_t length = text.size();
  for (size_t i = 0; i < table.rules.size(); ++i) {
    const ClassifierRule& r = table.rules[i];
    if (r.role_mask != 0 && (r.role_mask & role_bit) == 0) continue;
    if (r.is_tool_result >= 0 && r.is_tool_result != is_tool_result) continue;
    if (r.is_error >= 0 && r.is_error != is_error) continue;
    if (r.is_task >= 0 && r.is_task != is_task) continue;
    if (r.is_demonstration >= 0 && r.is_demonstration != is_demonstration) {
      continue;
    }
    if (r.has_tool_calls >= 0 && r.has_tool_calls != has_tool_calls) continue;
    if (length < r.min_chars || length > r.max_chars) continue;
    if (r.contains != kNoSlot && !test(r.contains)) continue;
    if (r.contains_none != kNoSlot && test(r.contains_none)) continue;
    if (r.starts_with != kNoSlot && !test(r.starts_with)) continue;
    if (r.equals != kNoSlot && !test(r.equals)) continue;
    if (r.tool_names != kNoSlot && !test(r.tool_names)) continue;
    if (r.arguments != kNoSlot && !test(r.arguments)) continue;
    if (r.has_predicate && !impl_->rules[i].predicate(facts)) continue;
    return {r.tier, impl_->rules[i].name};
  }
  return {Tier::kRoutine, kDefaultRule};
}

}  // namespace ctxkit
