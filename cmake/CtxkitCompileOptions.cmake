# Warning and sanitizer flags shared by every ctxkit target, as an interface
# library so that they never leak into consumers' targets.
add_library(ctxkit_compile_options INTERFACE)
target_compile_options(ctxkit_compile_options INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
  $<$<BOOL:${CTXKIT_WERROR}>:-Werror>)
# GCC 12 at -O2/-O3 reports -Wrestrict on ordinary std::string concatenation
# ("a" + s), a false positive inside libstdc++ (GCC bug 105651, fixed in 13).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(ctxkit_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()

if(CTXKIT_SANITIZE)
  set(CTXKIT_SANITIZER_FLAGS -fsanitize=${CTXKIT_SANITIZE} -fno-omit-frame-pointer
      -fno-sanitize-recover=all)
  # Applied to the whole build (not just ctxkit's targets) so that the test
  # consumers and any code linked with ctxkit agree on the runtime.
  add_compile_options(${CTXKIT_SANITIZER_FLAGS})
  add_link_options(-fsanitize=${CTXKIT_SANITIZE})
  # Clang's vptr and function checks call into the C++ half of the UBSan
  # runtime, which clang links only for C++ programs: a C program linking a
  # static sanitized libctxkit fails with undefined __ubsan_vptr_type_cache
  # and __ubsan_handle_function_type_mismatch_v1_abort. Without those two
  # checks a static library stays usable from C, as install.consume tests.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND NOT BUILD_SHARED_LIBS
     AND CTXKIT_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize=vptr,function)
  endif()
endif()
