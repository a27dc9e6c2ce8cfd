# Finds ctxkit's dependencies, all from system packages (Debian, vcpkg or
# Conan); nothing is vendored or downloaded.
include(CtxkitFindPkg)

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
# Abseil and simdjson ship CMake package files everywhere we care about.
find_package(absl CONFIG REQUIRED)
find_package(simdjson CONFIG REQUIRED)
# vcpkg: unofficial-lmdb / unofficial::lmdb::lmdb; Conan: lmdb / lmdb::lmdb.
ctxkit_find_pkg(lmdb lmdb liblmdb-dev
  "unofficial-lmdb:unofficial::lmdb::lmdb" "lmdb:lmdb::lmdb")
# vcpkg and Conan both: xxHash / xxHash::xxhash.
ctxkit_find_pkg(xxhash libxxhash libxxhash-dev "xxHash:xxHash::xxhash")
message(STATUS "ctxkit: LMDB via ${CTXKIT_lmdb_TARGET}, xxHash via ${CTXKIT_xxhash_TARGET}")

# Linked privately into the library; listed once so the shared and static
# libraries, the test library and the package files stay in step.
set(CTXKIT_PRIVATE_DEPS
  absl::status absl::statusor absl::strings absl::str_format
  absl::flat_hash_map absl::hash
  simdjson::simdjson ${CTXKIT_lmdb_TARGET} ${CTXKIT_xxhash_TARGET}
  Threads::Threads)
# The same, as pkg-config modules, for the Requires.private of a static build.
set(CTXKIT_PC_REQUIRES_PRIVATE
  "absl_status absl_statusor absl_strings absl_str_format absl_flat_hash_map absl_hash simdjson lmdb libxxhash")

if(CTXKIT_BUILD_TESTS)
  find_package(doctest CONFIG REQUIRED)
endif()
if(CTXKIT_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()
