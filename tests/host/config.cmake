# LoadHostConfig / HostConfigToJson and the HTTP server's address and token
# helpers (examples/ctxkit/host/config.cc, examples/ctxkit/http/). Include
# this file from tests/host/CMakeLists.txt after its ctxkit_host check;
# sources are named from this file's folder so that it works wherever it is
# included.
include_guard(GLOBAL)
if(TARGET ctxkit_host)
  add_executable(ctxkit_host_config_test
    ${CMAKE_CURRENT_LIST_DIR}/config_test.cc)
  target_link_libraries(ctxkit_host_config_test PRIVATE
    ctxkit_host ctxkit_doctest_main ctxkit_compile_options)
  add_test(NAME host.config COMMAND ctxkit_host_config_test)
  set_tests_properties(host.config PROPERTIES LABELS host TIMEOUT 120)
endif()
