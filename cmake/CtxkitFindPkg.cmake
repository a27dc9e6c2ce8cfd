# ctxkit_find_pkg(<name> <pkg-config module> <debian package> [<package>:<target>]...)
#
# Finds a dependency that has no CMake package in Debian. The vcpkg and Conan
# CMake packages are tried first (in the order given), then pkg-config. Sets
# CTXKIT_<name>_TARGET to the imported target found, in the caller's scope.
#
# Used both by ctxkit's own build and by the installed ctxkitConfig.cmake of a
# static ctxkit, so that a consumer resolves the same target names that the
# exported link interface refers to.
include_guard(GLOBAL)

function(ctxkit_find_pkg name module debian_package)
  foreach(candidate IN LISTS ARGN)
    string(REPLACE ":" ";" parts "${candidate}")
    list(GET parts 0 package)
    list(GET parts -1 target)
    find_package(${package} CONFIG QUIET)
    if(TARGET ${target})
      set(CTXKIT_${name}_TARGET ${target} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    if(NOT TARGET PkgConfig::ctxkit_${name})
      pkg_check_modules(ctxkit_${name} QUIET IMPORTED_TARGET GLOBAL ${module})
    endif()
    if(TARGET PkgConfig::ctxkit_${name})
      set(CTXKIT_${name}_TARGET PkgConfig::ctxkit_${name} PARENT_SCOPE)
      return()
    endif()
  endif()
  message(FATAL_ERROR "ctxkit needs ${name}: install Debian's ${debian_package} "
                      "(or provide it with vcpkg or Conan).")
endfunction()
