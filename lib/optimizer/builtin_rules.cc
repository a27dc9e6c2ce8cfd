// The built-in rule table of ctxkit::QueryOptimizer, and its documentation.
//
// Choosing entries. A rule may only name words that carry no content in the
// position it allows, because what it matches disappears (or becomes its
// replacement). So ambiguous words get conditions instead of being left
// out or matched everywhere:
//   - "actually", "anyway", "honestly" only at a clause edge ("Actually, ..."
//     or "..., actually."), where they are interjections, not adverbs of
//     fact ("what does it actually return" keeps it).
//   - intensifiers ("really", "very", "quite") stay after a negation: "not
//     really slow" means something else than "slow".
//   - softeners ("just", "maybe", "perhaps", "kind of") go only where they
//     soften a request: before a request verb ("just check the logs") or a
//     request opener's verb ("just wondering"), and never after a negation.
//     Elsewhere they carry meaning: "just" restricts ("just the standard
//     library", "just one"), "not just" widens ("not just about speed"), and
//     "maybe", "perhaps", "kind of" say how sure the writer is ("maybe the
//     server is down"), which is a statement of belief, not padding.
//   - statements of belief ("I think", "I guess", "I'm not sure") stay; only
//     "I'm not sure ... but" opening a request goes.
//   - "kind of" / "sort of" stay after determiners ("what kind of lock").
//   - "very" stays after "the" and possessives ("the very first").
//   - hedged request openers ("Could you ...") are rewritten only at a
//     sentence start and, for the short question forms, only before a
//     request verb, so "Can you run Python?" (a question about capability)
//     is left alone while "Can you explain X?" becomes "Explain X.".
//   - whole-sentence padding ("Thanks in advance!", "Hi there,") only when it
//     is the whole clause.
// Words deliberately absent: "like", "simply", "only", "merely", "pretty"
// (alone), "so" (except "So," opening a sentence), "possibly", "completely",
// "rather": each is content too often. "whether or not" is absent too:
// "whether or not it fails, log it" means "in either case", which
// "whether" alone does not.
//
// Replacements of redundant phrases follow the usual plain-language lists
// (e.g. the U.S. Plain Language Guidelines' "words to avoid"); each keeps the
// meaning in every context the phrase occurs in.

#include <string>
#include <vector>

#include "ctxkit/query_optimizer.h"

namespace ctxkit {
namespace {

// Verbs that make "could you <verb>" a request rather than a question about
// ability.
const std::vector<std::string>& RequestVerbs() {
  static const auto* const kVerbs = new std::vector<std::string>{
      "add",       "analyze",      "analyse",   "answer",     "assess",
      "break",     "build",        "calculate", "change",     "check",
      "clarify",   "clean",        "compare",   "compute",    "convert",
      "correct",   "create",       "debug",     "define",     "describe",
      "design",    "detail",       "determine", "draft",      "edit",
      "elaborate", "estimate",     "evaluate",  "explain",    "extract",
      "find",      "fix",          "format",    "generate",   "give",
      "go",        "help",         "identify",  "implement",  "improve",
      "list",      "look",         "make",      "modify",     "name",
      "optimize",  "optimise",     "outline",   "paraphrase", "point",
      "prepare",   "produce",      "proofread", "provide",    "recommend",
      "refactor",  "remove",       "rename",    "reply",      "rephrase",
      "respond",   "review",       "rewrite",   "send",       "share",
      "show",      "simplify",     "sort",      "solve",      "suggest",
      "summarize", "summarise",    "teach",     "tell",       "test",
      "translate", "troubleshoot", "update",    "verify",     "walk",
      "write"};
  return *kVerbs;
}

// The words a softener ("just", "maybe", "kind of") may precede and still be
// padding: request verbs, other imperatives that are no question of ability
// after "could you" ("can you run X?") but are requests after "just", and
// the verbs of request openers ("I was just wondering if you could").
const std::vector<std::string>& SoftenedWords() {
  static const auto* const kWords = [] {
    auto* words = new std::vector<std::string>(RequestVerbs());
    for (const char* w :
         {"run",     "use",       "try",    "do",     "say",     "return",
          "rerun",   "call",      "open",   "read",   "restart", "ignore",
          "skip",    "print",     "stop",   "wait",   "ask",     "paste",
          "install", "wondering", "wonder", "hoping", "wanted"}) {
      words->push_back(w);
    }
    return words;
  }();
  return *kWords;
}

// The words that may start the request after "I'm not sure, but": a request
// verb, or a modal opening a hedged request.
const std::vector<std::string>& RequestStarts() {
  static const auto* const kWords = [] {
    auto* words = new std::vector<std::string>(RequestVerbs());
    for (const char* w : {"could", "can", "would", "will", "please"}) {
      words->push_back(w);
    }
    return words;
  }();
  return *kWords;
}

// A softener: padding only before a request verb, and never after a
// negation ("don't just copy it").
QueryRule Softener(IssueType type, std::string pattern) {
  QueryRule r;
  r.type = type;
  r.pattern = std::move(pattern);
  r.follow = RuleFollow::kWord;
  r.keep_after_negation = true;
  r.next_word_in = SoftenedWords();
  return r;
}

QueryRule Filler(std::string pattern,
                 RulePosition position = RulePosition::kAnywhere) {
  QueryRule r;
  r.type = IssueType::kFillerWords;
  r.pattern = std::move(pattern);
  r.position = position;
  return r;
}

QueryRule Intensifier(std::string pattern) {
  QueryRule r = Filler(std::move(pattern));
  r.keep_after_negation = true;
  return r;
}

QueryRule Hedge(std::string pattern, RulePosition position,
                RuleFollow follow = RuleFollow::kAnything) {
  QueryRule r;
  r.type = IssueType::kHedging;
  r.pattern = std::move(pattern);
  r.position = position;
  r.follow = follow;
  return r;
}

QueryRule Opener(std::string pattern, bool needs_request_verb) {
  QueryRule r;
  r.type = IssueType::kHedging;
  r.pattern = std::move(pattern);
  r.position = RulePosition::kSentenceStart;
  r.follow = RuleFollow::kWord;
  r.restructure = true;
  if (needs_request_verb) r.next_word_in = RequestVerbs();
  r.next_word_not_in = {"not", "never", "also", "too"};
  return r;
}

QueryRule Redundant(std::string pattern, std::string replacement) {
  QueryRule r;
  r.type = IssueType::kRedundantPhrase;
  r.pattern = std::move(pattern);
  r.replacement = std::move(replacement);
  return r;
}

QueryRule Polite(std::string pattern, RulePosition position,
                 RuleFollow follow) {
  QueryRule r;
  r.type = IssueType::kPoliteness;
  r.pattern = std::move(pattern);
  r.position = position;
  r.follow = follow;
  return r;
}

QueryRule Vague(std::string pattern) {
  QueryRule r;
  r.type = IssueType::kVagueLanguage;
  r.pattern = std::move(pattern);
  return r;
}

}  // namespace

std::vector<QueryRule> QueryOptimizer::BuiltinRules() {
  using P = RulePosition;
  using F = RuleFollow;
  std::vector<QueryRule> rules;

  // ---- hedged requests, rewritten as direct requests ----
  const std::string kSoftener = "(please|maybe|possibly|perhaps|kindly|just)?";
  const std::string kModal = "(could|can|would|might|will)";
  rules.push_back(
      Opener("(i was|i am|i'm|i) (just|really)? (wondering|wonder|"
             "curious) (if|whether) you " +
                 kModal + " " + kSoftener + " (be able to)?",
             false));
  rules.push_back(Opener("(i was|i am|i'm) (just|really)? hoping (that)? you " +
                             kModal + " " + kSoftener + " (be able to)?",
                         false));
  rules.push_back(
      Opener("(i would|i'd) (really|greatly|very much)? (appreciate "
             "it|be grateful) if you " +
                 kModal + " " + kSoftener + " (be able to)?",
             false));
  rules.push_back(
      Opener("it would be (great|nice|helpful|awesome|amazing) if "
             "you " +
                 kModal + " " + kSoftener + " (be able to)?",
             false));
  rules.push_back(
      Opener("(would it be|is it) possible (for you)? to " + kSoftener, true));
  rules.push_back(
      Opener("do you think you (could|can|might) " + kSoftener, false));
  rules.push_back(Opener(
      "is there (any way|a way) (that)? you (could|can) " + kSoftener, false));
  rules.push_back(Opener(
      "(i would like|i'd like|i want|i need) you to " + kSoftener, false));
  rules.push_back(Opener(
      "(could|can|would|will) you " + kSoftener + " (be able to)?", true));
  rules.push_back(Opener("(maybe|perhaps) you (could|can)", true));
  // "Could you maybe only change X?" cannot be made direct (the opener needs
  // a request verb next), but its softener is still padding.
  for (const char* modal : {"could", "can", "would", "will"}) {
    QueryRule r = Hedge(std::string(modal) + " you (maybe|perhaps|possibly)",
                        P::kSentenceStart, F::kWord);
    r.replacement = std::string(modal) + " you";
    rules.push_back(r);
  }

  // ---- hedges, removed ----
  rules.push_back(
      Hedge("if (it's|it is) not too much (trouble|to ask)", P::kAnywhere));
  rules.push_back(Hedge("if you (don't|do not) mind", P::kAnywhere));
  rules.push_back(Hedge("if (that's|that is) (okay|ok|alright|all right|fine)",
                        P::kClauseStart, F::kClauseEnd));
  {
    QueryRule r = Hedge(
        "(i'm|i am) not (sure|certain) (if this is possible|"
        "if this makes sense)? but",
        P::kClauseStart, F::kWord);
    r.next_word_in = RequestStarts();
    rules.push_back(r);
  }
  rules.push_back(
      Hedge("(this|it) (might|may) be a (dumb|stupid|silly|naive|"
            "basic) question (but)?",
            P::kSentenceStart));
  rules.push_back(
      Hedge("sorry (if this is|for) (a)? (dumb|stupid|silly|naive|"
            "basic) question",
            P::kSentenceStart, F::kClauseEnd));
  {
    QueryRule r = Softener(IssueType::kHedging, "(kind|sort) of");
    r.not_after = {"a",          "an",       "the",     "what",  "which",
                   "this",       "that",     "these",   "those", "some",
                   "any",        "one",      "same",    "every", "each",
                   "no",         "other",    "another", "all",   "many",
                   "of",         "right",    "wrong",   "new",   "different",
                   "particular", "specific", "certain"};
    rules.push_back(r);
  }
  rules.push_back(Softener(IssueType::kHedging, "(kinda|sorta|perhaps)"));

  // ---- filler words ----
  rules.push_back(Softener(IssueType::kFillerWords, "just"));
  rules.push_back(Intensifier("really"));
  rules.push_back(Filler("basically"));
  rules.push_back(Filler("actually", P::kClauseEdge));
  rules.push_back(Filler("literally"));
  {
    QueryRule r = Intensifier("very");
    r.not_after = {"the", "this", "that", "my",  "your",
                   "his", "her",  "its",  "our", "their"};
    rules.push_back(r);
  }
  rules.push_back(Intensifier("quite"));
  rules.push_back(Intensifier("totally"));
  rules.push_back(Filler("honestly", P::kClauseEdge));
  rules.push_back(Filler("essentially"));
  rules.push_back(Softener(IssueType::kFillerWords, "maybe"));
  rules.push_back(Filler("pretty much"));
  rules.push_back(Intensifier("definitely"));
  rules.push_back(Intensifier("absolutely"));
  rules.push_back(Filler("(anyway|anyways)", P::kClauseEdge));
  for (const char* pattern : {"(you know|i mean|to be honest|to be fair)",
                              "as you (may|might) know"}) {
    QueryRule r = Filler(pattern, P::kClauseStart);
    r.follow = F::kClauseEnd;
    rules.push_back(r);
  }
  {
    QueryRule r =
        Filler("(well|so|okay so|ok so|okay|ok|um|uh)", P::kSentenceStart);
    r.follow = F::kClauseEnd;
    rules.push_back(r);
  }

  // ---- politeness padding ----
  rules.push_back(Polite("(please|kindly)", P::kAnywhere, F::kAnything));
  rules.push_back(Polite("(hi|hello|hey|greetings|dear) (there|all|everyone)?",
                         P::kSentenceStart, F::kClauseEnd));
  rules.push_back(
      Polite("(thank you|thanks|many thanks) (so much|very much|a "
             "lot|a bunch)? (in advance)? (for your help|for any "
             "help|for the help|for your time)?",
             P::kClauseStart, F::kClauseEnd));
  rules.push_back(
      Polite("any (help|advice|guidance|suggestions) (would be|is|"
             "will be) (greatly|much|really|very much)? "
             "appreciated",
             P::kSentenceStart, F::kClauseEnd));
  rules.push_back(
      Polite("(i would|i'd) (really|greatly)? appreciate (it|your "
             "help|any help)",
             P::kSentenceStart, F::kClauseEnd));
  rules.push_back(
      Polite("(i hope|hope) (you're|you are) (doing)? (well|good|"
             "fine)",
             P::kSentenceStart, F::kClauseEnd));
  rules.push_back(Polite("sorry to (bother|trouble) you (but)?",
                         P::kSentenceStart, F::kAnything));

  // ---- redundant phrases ----
  rules.push_back(Redundant("in order to", "to"));
  rules.push_back(Redundant("so as to", "to"));
  rules.push_back(
      Redundant("(due to|owing to|in light of|because of) the fact "
                "that",
                "because"));
  rules.push_back(Redundant("(despite|in spite of) the fact that", "although"));
  rules.push_back(
      Redundant("(at this point in time|at the present time|at "
                "this moment in time)",
                "now"));
  rules.push_back(Redundant("in the near future", "soon"));
  rules.push_back(Redundant("each and every", "every"));
  // "any", not "all": under a negation "don't delete any and all files"
  // forbids every deletion, and "don't delete all files" does not.
  rules.push_back(Redundant("any and all", "any"));
  rules.push_back(Redundant("first and foremost", "first"));
  rules.push_back(Redundant("in the event that", "if"));
  rules.push_back(Redundant("for the purpose of", "for"));
  rules.push_back(Redundant("with the exception of", "except"));
  rules.push_back(Redundant("in the absence of", "without"));
  rules.push_back(Redundant("until such time as", "until"));
  rules.push_back(
      Redundant("(with regard to|with regards to|in regard to|with "
                "respect to|in relation to|in reference to)",
                "about"));
  rules.push_back(Redundant("prior to", "before"));
  rules.push_back(Redundant("subsequent to", "after"));
  rules.push_back(Redundant("in close proximity to", "near"));
  rules.push_back(Redundant("(a large number of|a great number of)", "many"));
  rules.push_back(Redundant("the (vast)? majority of", "most"));
  rules.push_back(Redundant("(has|have) the (ability|capability) to", "can"));
  rules.push_back(Redundant("(is|are) able to", "can"));
  rules.push_back(Redundant("make use of", "use"));
  rules.push_back(Redundant("take into (consideration|account)", "consider"));
  rules.push_back(Redundant("(on a daily basis)", "daily"));
  rules.push_back(Redundant("(on a regular basis)", "regularly"));
  rules.push_back(Redundant("at all times", "always"));
  rules.push_back(
      Redundant("(it is important to note that|it should be noted "
                "that|needless to say|as a matter of fact|for all "
                "intents and purposes|at the end of the day)",
                ""));
  rules.push_back(Redundant("in the process of", ""));

  // ---- vague language: flagged, never edited ----
  rules.push_back(
      Vague("(stuff|things|thing|something|somehow|somewhere|"
            "whatever|various|etc|and so on|and so forth|or "
            "something|or whatever)"));
  return rules;
}

}  // namespace ctxkit
