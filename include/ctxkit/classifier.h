// ctxkit::Classifier: sorts chat messages into five tiers by an ordered,
// extensible rule table, so that compaction keeps what matters.
//
//   auto classifier = ctxkit::Classifier::WithBuiltinRules();
//   classifier.AddRule({.name = "deploy_log", .tier = ctxkit::Tier::kImportant,
//                       .contains_any = {"deployed to production"}});
//   ctxkit::Classification c = classifier.Classify(facts);
//   // c.tier, c.rule ("deploy_log", or the built-in rule that fired)
//
// Tiers, from most to least valuable:
//   anchor      never dropped while keep_anchors holds: system prompts, the
//               task, tool and schema definitions, DDL, schema tools, user
//               corrections and refusals
//   important   kept before anything but anchors: errors (SQL errors too),
//               failing tests, query plans, decisions, notes and findings,
//               documentation references, file edits
//   contextual  kept if space allows: user messages, tool results, query
//               and search tool calls
//   routine     summarized first: ordinary assistant turns, file views
//   transient   dropped first, without summary: "ok", "thanks", "got it"
//
// Rules are tried in order and the first that matches decides; a message no
// rule matches is routine by the rule "default". Rules added with AddRule()
// come before the built-in ones (in the order added), so they override
// them. BuiltinRulesJson() documents the built-in table.
//
// Thread safety: a Classifier is a value; const methods may run concurrently.

#ifndef CTXKIT_CLASSIFIER_H_
#define CTXKIT_CLASSIFIER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ctxkit/export.h"
#include "ctxkit/status.h"

namespace ctxkit {

namespace internal {
struct ClassifierAccess;
}  // namespace internal

enum class Tier : uint8_t {
  kAnchor = 0,
  kImportant = 1,
  kContextual = 2,
  kRoutine = 3,
  kTransient = 4,
};

// "anchor", "important", "contextual", "routine", "transient"; static storage.
CTXKIT_EXPORT const char* TierName(Tier tier) noexcept;
// The tier named `name`; INVALID_ARGUMENT listing the five otherwise.
CTXKIT_EXPORT StatusOr<Tier> ParseTier(std::string_view name);

// What a rule sees of one message. The views point into the caller's data
// and need only live for the Classify() call.
struct MessageFacts {
  size_t index = 0;
  std::string_view role;  // system, developer, user, assistant, tool
  // Readable text: string content, text blocks, tool_result contents.
  std::string_view text;
  // Names of the tool calls the message makes.
  std::span<const std::string_view> tool_names;
  // Arguments of those calls (JSON text), in the same order.
  std::span<const std::string_view> tool_arguments;
  // For a message carrying tool results: the called tool's name.
  std::string_view result_tool_name;
  bool is_tool_result = false;
  bool is_error = false;  // a tool result flagged as an error
  // The user's actual request: the last user message with text before the
  // first assistant turn that is not a demonstration (Compactor's rule,
  // compactor.h "The task"). At most one message per history.
  bool is_task = false;
  // A worked example or few-shot block shown before the task (it carries a
  // demonstration marker, or it is an earlier user message before the
  // first assistant turn). Its edits and errors never happened.
  bool is_demonstration = false;
};

// A rule matches when every criterion it sets holds; a list criterion holds
// when any one of its entries does. Text comparisons ignore ASCII case and
// are plain substring tests: choose phrases with their punctuation or spaces
// ("error: ", "exit code 1") so that they do not fire inside other words.
// At least one criterion must be set.
//
// Limits, so that a table from untrusted JSON stays cheap: roles are the
// five above; an entry of a text list is 1..1024 bytes; a classifier holds
// at most 1024 rules and 65536 bytes of phrases in all.
struct ClassificationRule {
  // 1..64 of [a-z0-9_.-], unique within a classifier; "default" is
  // reserved for the fallback.
  std::string name;
  Tier tier = Tier::kRoutine;
  std::string description;
  std::vector<std::string> roles;         // one of these roles
  std::vector<std::string> contains_any;  // text contains one
  // Text contains none of these: excludes look-alikes (e.g. shell
  // transcripts that quote a phrase).
  std::vector<std::string> contains_none;
  std::vector<std::string> starts_with_any;  // text, leading space trimmed
  // The whole text, trimmed of spaces and trailing ".!", equals one.
  std::vector<std::string> equals_any;
  // A call made or answered has one of these names (whole name, ASCII case
  // ignored).
  std::vector<std::string> tool_names_any;
  // The arguments (JSON text) of a call the message makes contain one, e.g.
  // "\"cat " for a shell call that prints a file.
  std::vector<std::string> arguments_contains_any;
  // When true, contains_any, contains_none and starts_with_any read the
  // arguments (JSON text) of each call the message makes as well as its
  // text, each on its own: contains_any holds when the text or some call's
  // arguments contain one, contains_none when neither does, starts_with_any
  // when the text or some call's arguments start with one (arguments that
  // are a JSON object start with "{"). For commands that arrive as
  // arguments, such as an "edit 3:5 ... end_of_edit" or "*** Begin Patch"
  // passed to a shell tool, or SQL passed to a query tool. The arguments are
  // JSON text, so a line break inside an argument string is the two
  // characters "\n": a phrase that holds a line break never matches there.
  // equals_any, min_chars and max_chars still see the text only. Requires
  // one of the three lists; it is not a criterion of its own.
  bool match_arguments = false;
  std::optional<size_t> min_chars;  // text length in bytes
  std::optional<size_t> max_chars;
  std::optional<bool> is_tool_result;
  std::optional<bool> is_error;
  std::optional<bool> is_task;
  std::optional<bool> is_demonstration;
  std::optional<bool> has_tool_calls;
  // C++ only: an extra condition, called last. Must be thread-safe.
  std::function<bool(const MessageFacts&)> predicate;
};

struct Classification {
  Tier tier = Tier::kRoutine;
  // The rule that fired, or "default". Points into the classifier's table:
  // valid while the classifier lives and is not modified.
  std::string_view rule;
};

class CTXKIT_EXPORT Classifier {
 public:
  // An empty table: every message is routine by "default".
  Classifier();
  ~Classifier();
  Classifier(const Classifier& other);
  Classifier& operator=(const Classifier& other);
  Classifier(Classifier&&) noexcept;
  Classifier& operator=(Classifier&&) noexcept;

  // The built-in table (see BuiltinRulesJson()).
  static Classifier WithBuiltinRules();
  // A shared immutable classifier with the built-in table.
  static std::shared_ptr<const Classifier> Default();

  // Adds `rule` after earlier added rules and before the built-in ones.
  // INVALID_ARGUMENT naming the field as "rule.<field>": a bad, reserved or
  // duplicate name, an unknown role, no criterion, an empty, blank, too long
  // or non-UTF-8 list entry, min_chars > max_chars, a limit exceeded. On
  // error the table is unchanged.
  Status AddRule(ClassificationRule rule);
  // Adds every rule of a JSON array of objects with the fields of
  // ClassificationRule (tier by name; no predicate). All or nothing;
  // INVALID_ARGUMENT naming "rules[i].<field>", or for a key that is not a
  // field, naming it and the closest field ("rules[0]: unknown key
  // 'contans_any'; did you mean 'contains_any'?").
  Status AddRulesJson(std::string_view json);
  // Removes the rule `name` (built-in or added). NOT_FOUND otherwise.
  Status RemoveRule(std::string_view name);

  // The table in the order rules are tried.
  const std::vector<ClassificationRule>& rules() const;
  // The table as a JSON array (predicates described, not serialized).
  std::string RulesJson() const;

  // The tier of the message described by `facts`. Linear in the length of
  // the text and of the call arguments (all phrases of all rules are matched
  // in one pass over each).
  Classification Classify(const MessageFacts& facts) const;

 private:
  friend struct internal::ClassifierAccess;
  struct CTXKIT_NO_EXPORT Impl;
  std::unique_ptr<Impl> impl_;
};

// The built-in table as JSON, for documentation and `ctxkit compact
// --rules`.
CTXKIT_EXPORT std::string BuiltinRulesJson();

}  // namespace ctxkit

#endif  // CTXKIT_CLASSIFIER_H_
