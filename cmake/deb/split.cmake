# SPDX-License-Identifier: BSD-3-Clause
# CPack pre-build script (cmake/packaging.cmake): moves the shared library's
# real files (libofishmem.so.*) from the dev component's staging tree to the
# runtime one. The libofishmem.so link stays in dev, as in Debian.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
set(top "${CPACK_TEMPORARY_DIRECTORY}")
file(GLOB_RECURSE libs LIST_DIRECTORIES false "${top}/dev/*/libofishmem.so.*")
if(NOT libs)
  message(FATAL_ERROR "split.cmake: no libofishmem.so.* under ${top}/dev")
endif()
foreach(f IN LISTS libs)
  file(RELATIVE_PATH rel "${top}/dev" "${f}")
  get_filename_component(dir "${top}/runtime/${rel}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  file(RENAME "${f}" "${top}/runtime/${rel}")
  message(STATUS "split.cmake: ${rel} -> runtime")
endforeach()
