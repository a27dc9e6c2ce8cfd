// The C API's status, version and memory sections (c.h): the status codes
// are ctxkit::StatusCode's numbers, checked here at compile time.

#include "ctxkit/status.h"

#include <cstdint>
#include <cstdlib>

#include "ctxkit/c.h"
#include "ctxkit/version.h"

namespace {

using ctxkit::StatusCode;

#define CTXKIT_SAME_CODE(c_name, cc_name) \
  static_assert(c_name == static_cast<int>(StatusCode::cc_name))
CTXKIT_SAME_CODE(CTXKIT_OK, kOk);
CTXKIT_SAME_CODE(CTXKIT_CANCELLED, kCancelled);
CTXKIT_SAME_CODE(CTXKIT_UNKNOWN, kUnknown);
CTXKIT_SAME_CODE(CTXKIT_INVALID_ARGUMENT, kInvalidArgument);
CTXKIT_SAME_CODE(CTXKIT_DEADLINE_EXCEEDED, kDeadlineExceeded);
CTXKIT_SAME_CODE(CTXKIT_NOT_FOUND, kNotFound);
CTXKIT_SAME_CODE(CTXKIT_ALREADY_EXISTS, kAlreadyExists);
CTXKIT_SAME_CODE(CTXKIT_PERMISSION_DENIED, kPermissionDenied);
CTXKIT_SAME_CODE(CTXKIT_RESOURCE_EXHAUSTED, kResourceExhausted);
CTXKIT_SAME_CODE(CTXKIT_FAILED_PRECONDITION, kFailedPrecondition);
CTXKIT_SAME_CODE(CTXKIT_ABORTED, kAborted);
CTXKIT_SAME_CODE(CTXKIT_OUT_OF_RANGE, kOutOfRange);
CTXKIT_SAME_CODE(CTXKIT_UNIMPLEMENTED, kUnimplemented);
CTXKIT_SAME_CODE(CTXKIT_INTERNAL, kInternal);
CTXKIT_SAME_CODE(CTXKIT_UNAVAILABLE, kUnavailable);
CTXKIT_SAME_CODE(CTXKIT_DATA_LOSS, kDataLoss);
CTXKIT_SAME_CODE(CTXKIT_UNAUTHENTICATED, kUnauthenticated);
#undef CTXKIT_SAME_CODE

}  // namespace

extern "C" {

const char* ctxkit_status_name(int code) {
  if (code < 0 || code > CTXKIT_UNAUTHENTICATED) return "UNKNOWN_CODE";
  return ctxkit::StatusCodeName(static_cast<StatusCode>(code));
}

uint32_t ctxkit_version_number(void) { return CTXKIT_VERSION_NUMBER; }

const char* ctxkit_version_string(void) { return CTXKIT_VERSION_STRING; }

void ctxkit_free(void* ptr) { std::free(ptr); }

}  // extern "C"
