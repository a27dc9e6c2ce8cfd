/* ctxkit version macros.
 *
 * This header is the single source of the version: CMake reads the three
 * numbers below, so the build, the SONAME, the package files and the runtime
 * functions ctxkit_version_number() / ctxkit_version_string() always agree.
 *
 * Compare CTXKIT_VERSION_NUMBER (the headers you compiled against) with
 * ctxkit_version_number() (the library you run against) to detect a mismatch;
 * while the major version is 0, a different minor version is a different ABI.
 *
 * Valid C99 and C++.
 */
#ifndef CTXKIT_VERSION_H_
#define CTXKIT_VERSION_H_

#define CTXKIT_VERSION_MAJOR 0
#define CTXKIT_VERSION_MINOR 1
#define CTXKIT_VERSION_PATCH 0

/* MAJOR * 10000 + MINOR * 100 + PATCH, e.g. 0.1.0 -> 100. */
#define CTXKIT_VERSION_NUMBER                                  \
  (CTXKIT_VERSION_MAJOR * 10000 + CTXKIT_VERSION_MINOR * 100 + \
   CTXKIT_VERSION_PATCH)

#define CTXKIT_VERSION_STRINGIFY_(x) #x
#define CTXKIT_VERSION_STRINGIFY(x) CTXKIT_VERSION_STRINGIFY_(x)
/* "MAJOR.MINOR.PATCH", e.g. "0.1.0". */
#define CTXKIT_VERSION_STRING                    \
  CTXKIT_VERSION_STRINGIFY(CTXKIT_VERSION_MAJOR) \
  "." CTXKIT_VERSION_STRINGIFY(                  \
      CTXKIT_VERSION_MINOR) "." CTXKIT_VERSION_STRINGIFY(CTXKIT_VERSION_PATCH)

#endif /* CTXKIT_VERSION_H_ */
