#include "absl/status/status.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "ctxkit/c.h"
#include "ctxkit/status.h"
#include "lib/status/status_internal.h"

namespace ctxkit {
namespace {

TEST_CASE("every code has the absl name and number") {
  for (int code = 0; code <= 16; ++code) {
    const absl::Status a(static_cast<absl::StatusCode>(code), "m");
    const std::string absl_name =
        absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
    CHECK(std::string(StatusCodeName(static_cast<StatusCode>(code))) ==
          absl_name);
    CHECK(std::string(ctxkit_status_name(code)) == absl_name);
    const Status p = internal::ToPublic(a);
    CHECK(static_cast<int>(p.code()) == code);
    CHECK(internal::ToAbsl(p).code() == a.code());
  }
  CHECK(std::string(StatusCodeName(static_cast<StatusCode>(17))) ==
        "UNKNOWN_CODE");
  CHECK(std::string(ctxkit_status_name(-1)) == "UNKNOWN_CODE");
  CHECK(std::string(ctxkit_status_name(1000)) == "UNKNOWN_CODE");
}

TEST_CASE("Status carries code and message; OK carries none") {
  const Status ok;
  CHECK(ok.ok());
  CHECK(ok.ToString() == "OK");
  const Status ok_with_text(StatusCode::kOk, "ignored");
  CHECK(ok_with_text.message().empty());
  const Status err(StatusCode::kNotFound, "no such thing");
  CHECK_FALSE(err.ok());
  CHECK(err.ToString() == "NOT_FOUND: no such thing");
  CHECK(err == Status(StatusCode::kNotFound, "no such thing"));
  CHECK_FALSE(err == Status(StatusCode::kInternal, "no such thing"));
  CHECK(internal::ToAbsl(err).message() == "no such thing");
  CHECK(internal::ToPublic(absl::OkStatus()).ok());
}

TEST_CASE("StatusOr holds a value or an error") {
  StatusOr<std::string> v(std::string("hello"));
  REQUIRE(v.ok());
  CHECK(*v == "hello");
  CHECK(v->size() == 5);
  StatusOr<std::string> e(Status(StatusCode::kInvalidArgument, "bad"));
  CHECK_FALSE(e.ok());
  CHECK(e.status().code() == StatusCode::kInvalidArgument);
  // An OK status is not a value: it becomes an INTERNAL error, not a crash.
  StatusOr<int> misuse{Status()};
  CHECK_FALSE(misuse.ok());
  CHECK(misuse.status().code() == StatusCode::kInternal);
  // Move-only values work.
  StatusOr<std::unique_ptr<int>> p(std::make_unique<int>(7));
  std::unique_ptr<int> taken = std::move(p).value();
  CHECK(*taken == 7);
  const absl::StatusOr<int> a = 3;
  CHECK(*internal::ToPublic(a) == 3);
  const absl::StatusOr<int> b = absl::DataLossError("x");
  CHECK(internal::ToPublic(b).status().code() == StatusCode::kDataLoss);
}

}  // namespace
}  // namespace ctxkit
