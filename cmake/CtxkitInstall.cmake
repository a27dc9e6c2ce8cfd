# Install rules: headers, the library, the ctxkit program, a CMake package
# (find_package(ctxkit CONFIG) -> ctxkit::ctxkit) and a relocatable ctxkit.pc.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ctxkit
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/ctxkit/export.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ctxkit)

install(TARGETS ctxkit EXPORT ctxkitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET ctxkit_program)
  install(TARGETS ctxkit_program RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(CTXKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ctxkit)
install(EXPORT ctxkitTargets NAMESPACE ctxkit:: DESTINATION ${CTXKIT_CMAKE_DIR})

if(BUILD_SHARED_LIBS)
  set(CTXKIT_CONFIG_STATIC OFF)
else()
  set(CTXKIT_CONFIG_STATIC ON)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ctxkitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ctxkitConfig.cmake
  INSTALL_DESTINATION ${CTXKIT_CMAKE_DIR})
# 0.x: only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ctxkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/ctxkitConfig.cmake
  ${PROJECT_BINARY_DIR}/ctxkitConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/CtxkitFindPkg.cmake
  DESTINATION ${CTXKIT_CMAKE_DIR})

# pkg-config: paths relative to the .pc file so the prefix can be moved.
file(RELATIVE_PATH CTXKIT_PC_TO_PREFIX
  "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" CTXKIT_PC_TO_PREFIX "${CTXKIT_PC_TO_PREFIX}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(FATAL_ERROR "ctxkit.pc needs a relative CMAKE_INSTALL_LIBDIR")
endif()
if(BUILD_SHARED_LIBS)
  set(CTXKIT_PC_REQUIRES_PRIVATE_LINE "")
  set(CTXKIT_PC_CFLAGS_EXTRA "")
else()
  set(CTXKIT_PC_REQUIRES_PRIVATE_LINE "Requires.private: ${CTXKIT_PC_REQUIRES_PRIVATE}")
  set(CTXKIT_PC_CFLAGS_EXTRA " -DCTXKIT_STATIC_DEFINE")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/ctxkit.pc.in
  ${PROJECT_BINARY_DIR}/ctxkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ctxkit.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
