// ToJson(QueryOptimization): the result as the JSON document that
// query_optimizer.h describes.

#include <string>

#include "absl/status/statusor.h"
#include "ctxkit/query_optimizer.h"
#include "lib/json/json_writer.h"
#include "lib/status/status_internal.h"

namespace ctxkit {

StatusOr<std::string> ToJson(const QueryOptimization& r) {
  internal::JsonWriter w;
  w.BeginObject().Key("schema_version").Int(1);
  w.Key("original").BeginObject();
  w.Key("query").String(r.original_query);
  w.Key("tokens").Uint(r.original_tokens);
  w.Key("issues").BeginArray();
  for (const QueryIssue& issue : r.issues) {
    w.BeginObject();
    w.Key("type").String(IssueTypeName(issue.type));
    if (issue.type != IssueType::kVerbosity) {
      const bool words = issue.type == IssueType::kFillerWords ||
                         issue.type == IssueType::kVagueLanguage;
      w.Key(words ? "words" : "phrases").BeginArray();
      for (const std::string& s : issue.words) w.String(s);
      w.EndArray();
      w.Key("occurrences").Uint(issue.occurrences);
    }
    if (issue.score.has_value()) w.Key("score").Double(*issue.score);
    w.Key("impact").String(ImpactName(issue.impact));
    if (!issue.suggestions.empty()) {
      w.Key("suggestions").BeginArray();
      for (const std::string& s : issue.suggestions) w.String(s);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("optimized").BeginObject();
  w.Key("query").String(r.optimized_query);
  w.Key("tokens").Uint(r.optimized_tokens);
  w.Key("improvements").BeginArray();
  for (const std::string& s : r.improvements) w.String(s);
  w.EndArray();
  w.Key("truncated").Bool(r.truncated);
  w.Key("over_max_tokens").Bool(r.over_max_tokens);
  w.EndObject();

  w.Key("analysis").BeginObject();
  w.Key("tokens_saved").Int(r.tokens_saved);
  w.Key("reduction_percent").Double(r.reduction_percent);
  w.Key("clarity_score").Double(r.clarity_score);
  w.Key("original_clarity_score").Double(r.original_clarity_score);
  w.Key("recommendations").BeginArray();
  for (const QueryRecommendation& rec : r.recommendations) {
    w.BeginObject();
    w.Key("priority").String(rec.priority);
    w.Key("suggestion").String(rec.suggestion);
    w.Key("tokens_saved").Uint(rec.tokens_saved);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("model").String(r.model);
  w.Key("optimization_goal").String(OptimizationGoalName(r.goal));
  w.Key("tokens_exact").Bool(r.tokens_exact);
  if (r.context_tokens.has_value()) {
    w.Key("context").BeginObject();
    w.Key("tokens").Uint(*r.context_tokens);
    w.Key("combined_original_tokens")
        .Uint(*r.context_tokens + r.original_tokens);
    w.Key("combined_optimized_tokens")
        .Uint(*r.context_tokens + r.optimized_tokens);
    w.EndObject();
  }
  w.EndObject();
  return internal::ToPublic(std::move(w).Finish());
}

}  // namespace ctxkit
