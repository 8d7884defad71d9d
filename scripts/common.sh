# SPDX-License-Identifier: BSD-3-Clause
# Shared by scripts/demo and scripts/test: install missing Debian packages,
# configure and build. Sourced, not run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${OFISHMEM_BUILD_DIR:-$ROOT/build}
JOBS=${JOBS:-$(nproc)}

# Debian 12 packages the build and the tests need.
OFISHMEM_DEBS=(build-essential cmake pkg-config libfabric-dev libfabric-bin libpmix-dev libclang-rt-14-dev
               libcmocka-dev iproute2 procps)
# Extra packages for the test suite: other launchers (Open MPI, Slurm + munge),
# the peer library for bench/compare (Open MPI's OSHMEM), valgrind, gnuplot,
# clang (the headers are compiled as C++ by g++ and clang++: cxx.headers),
# autotools (Sandia OpenSHMEM's test suite builds with its own: label sos).
OFISHMEM_TEST_DEBS=(openmpi-bin libopenmpi-dev slurm-wlm munge valgrind gnuplot-nox groff-base clang
                    autoconf automake libtool)

ensure_debs() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "== installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    if [ -z "${OFISHMEM_APT_UPDATED:-}" ]; then
        $sudo apt-get update -qq
        export OFISHMEM_APT_UPDATED=1
    fi
    # Daemons in these packages (munge, slurmd, slurmctld) must not start
    # system-wide: the tests start their own, on loopback, and stop them.
    local guard=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        guard=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$guard" >/dev/null
        $sudo chmod 755 "$guard"
    fi
    local rc=0
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null || rc=$?
    [ -n "$guard" ] && $sudo rm -f "$guard"
    return $rc
}

build_ofishmem() {
    echo "== configuring and building in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DCMAKE_INSTALL_PREFIX="$BUILD/prefix" "$@" >/dev/null
    mkdir -p "$BUILD"
    if ! cmake --build "$BUILD" -j "$JOBS" >"$BUILD/build.log" 2>&1; then
        grep -E -A3 "error" "$BUILD/build.log" | head -60
        echo "build failed: see $BUILD/build.log" >&2
        exit 1
    fi
    grep -E "warning:" "$BUILD/build.log" | sort -u | head -20 || true
    cmake --install "$BUILD" >/dev/null
}
