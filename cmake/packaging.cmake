# SPDX-License-Identifier: BSD-3-Clause
# Debian packages of this build, made by CPack in the build directory:
#   cpack -G DEB                 (or scripts/make-deb.sh, which configures for /usr)
# gives two packages:
#   ofishmem         component runtime: libofishmem.so.*, oshrun, osh_info and
#                    their man pages; Depends from dpkg-shlibdeps (libpmix2,
#                    libc6 on Debian 12) and libfabric1 (loaded at run time)
#   libofishmem-dev  component dev: headers, libofishmem.so and .a, oshcc,
#                    oshc++ (oshcxx, oshCC), CMake package, pkg-config file,
#                    the wrappers' man pages
# installed under /usr. Open MPI (openmpi-bin) ships /usr/bin/oshrun, oshcc,
# oshc++, oshcxx and oshCC too: the packages divert Open MPI's files to
# NAME.openmpi while installed (dpkg-divert) and give them back on removal.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ofishmem)
set(CPACK_PACKAGE_VENDOR ofishmem)
set(CPACK_PACKAGE_CONTACT "ofishmem maintainers <ofishmem@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "OpenSHMEM 1.6 over libfabric with a PMIx bootstrap")
if(NOT DEFINED CPACK_PACKAGING_INSTALL_PREFIX)
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
endif()
# Install with DESTDIR and the real prefix, so what is written at install
# time (ofishmem.pc) names /usr, not the staging directory.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX ${CPACK_PACKAGING_INSTALL_PREFIX})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/openshmem-org/specification")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ofishmem)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "OpenSHMEM 1.6 over libfabric with a PMIx bootstrap: library and launcher
The shared library libofishmem, the launcher oshrun (a PMIx server that
starts the processing elements on this host; the library also runs under
srun --mpi=pmix and Open MPI's mpirun) and osh_info.")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# The library loads libfabric when a job needs a fabric (dlopen, no
# DT_NEEDED), so dpkg-shlibdeps cannot see it there: named here.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libfabric1")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_GENERATE_SHLIBS ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libofishmem-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "OpenSHMEM 1.6 over libfabric with a PMIx bootstrap: development files
Headers (C, and C++ with the generic names as overloads), the static
library, the compiler wrappers oshcc and oshc++ (oshcxx, oshCC), the CMake
package (find_package(ofishmem), ofishmem::ofishmem) and ofishmem.pc.")
# ofishmem.pc and the CMake package need libfabric's and PMIx's own files.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "ofishmem (= ${PROJECT_VERSION}-1), libfabric-dev, libpmix-dev, gcc | c-compiler, pkgconf | pkg-config")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "g++ | c++-compiler, cmake")
# A runtime package must carry the library: install(TARGETS) in src/ puts
# it in "dev" with its headers; the split script moves libofishmem.so.*
# (not the libofishmem.so link) to the runtime package.
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/deb/split.cmake)

# Maintainer scripts: the diversions of Open MPI's files of the same name.
if(CPACK_PACKAGING_INSTALL_PREFIX STREQUAL "/usr")
  set(man1 /usr/${CMAKE_INSTALL_MANDIR}/man1)
  foreach(comp runtime dev)
    if(comp STREQUAL runtime)
      set(DEB_PACKAGE ofishmem)
      set(names oshrun)
      set(DEB_POSTRM_LDCONFIG "ldconfig")
    else()
      set(DEB_PACKAGE libofishmem-dev)
      set(names oshcc oshc++ oshcxx oshCC)
      set(DEB_POSTRM_LDCONFIG ":")
    endif()
    # "path diverted-to" pairs, one a line.
    set(DEB_DIVERSIONS "")
    foreach(n IN LISTS names)
      string(APPEND DEB_DIVERSIONS "/usr/bin/${n} /usr/bin/${n}.openmpi\n")
      string(APPEND DEB_DIVERSIONS "${man1}/${n}.1.gz ${man1}/${n}.openmpi.1.gz\n")
    endforeach()
    foreach(script preinst postrm)
      configure_file(${PROJECT_SOURCE_DIR}/cmake/deb/${script}.in
                     ${PROJECT_BINARY_DIR}/deb/${comp}/${script} @ONLY
                     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                                      GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
    endforeach()
    string(TOUPPER ${comp} COMP)
    set(CPACK_DEBIAN_${COMP}_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/deb/${comp}/preinst
                                                   ${PROJECT_BINARY_DIR}/deb/${comp}/postrm)
  endforeach()
endif()

include(CPack)
cpack_add_component(runtime DISPLAY_NAME "Library and launcher")
cpack_add_component(dev DISPLAY_NAME "Development files" DEPENDS runtime)
