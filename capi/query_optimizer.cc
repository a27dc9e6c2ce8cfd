// The C API's query optimizer section (c.h, "Query optimizer"): translation
// to ctxkit::QueryOptimizer.

#include "ctxkit/query_optimizer.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "capi/c_internal.h"
#include "capi/request_json.h"
#include "ctxkit/c.h"
#include "ctxkit/status.h"

// The C-side translation helpers (capi/c_internal.h) are used throughout.
using namespace ctxkit::capi;  // NOLINT(build/namespaces)

extern "C" {

int ctxkit_query_optimize(const char* query, size_t query_len,
                          const char* model, size_t model_len, const char* goal,
                          size_t goal_len, const char* context,
                          size_t context_len, int64_t max_tokens,
                          char** out_json, size_t* out_json_len,
                          char** out_error) {
  if (int rc = StartDoc(nullptr, nullptr, out_json, out_json_len, out_error);
      rc >= 0) {
    return rc;
  }
  if (int rc = CheckArgs({{"query", query, query_len},
                          {"model", model, model_len},
                          {"goal", goal, goal_len},
                          {"context", context, context_len}},
                         out_error);
      rc >= 0) {
    return rc;
  }
  return Guard(out_error, [&] {
    ctxkit::OptimizeOptions options;
    if (model != nullptr) options.model = std::string(model, model_len);
    if (goal != nullptr) {
      auto parsed =
          ctxkit::ParseOptimizationGoal(std::string_view(goal, goal_len));
      if (!parsed.ok()) return Report(parsed.status(), out_error);
      options.goal = *parsed;
    }
    if (context != nullptr) options.context = std::string(context, context_len);
    if (max_tokens != 0) options.max_tokens = max_tokens;
    auto result = ctxkit::QueryOptimizer::Default().Optimize(
        View(query, query_len), options);
    if (!result.ok()) return Report(result.status(), out_error);
    return ReturnResult(ctxkit::ToJson(*result), out_json, out_json_len,
                        out_error);
  });
}

int ctxkit_query_optimize_request(const char* request_json,
                                  size_t request_json_len, char** out_json,
                                  size_t* out_json_len, char** out_error) {
  static constexpr std::string_view kMembers[] = {
      "query", "model", "optimization_goal", "context", "max_tokens"};
  return RunRequest(
      nullptr, nullptr, request_json, request_json_len, kMembers, out_json,
      out_json_len, out_error, [&](Request& request) {
        const StringArg query = request.String("query", /*required=*/true);
        const StringArg model = request.String("model");
        const StringArg goal = request.String("optimization_goal");
        const StringArg context = request.String("context");
        const int64_t max_tokens = request.Int("max_tokens").value_or(0);
        if (!request.status().ok()) return Report(request.status(), out_error);
        return ctxkit_query_optimize(query.data, query.len, model.data,
                                     model.len, goal.data, goal.len,
                                     context.data, context.len, max_tokens,
                                     out_json, out_json_len, out_error);
      });
}

}  // extern "C"
