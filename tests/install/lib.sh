# SPDX-License-Identifier: BSD-3-Clause
# Helpers of the install tests (sourced): install_test.sh, build_systems_test.sh,
# deb_test.sh.

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# install_prefix <build-dir> <prefix>: cmake --install into a fresh prefix.
install_prefix() {
    local out
    out=$(cmake --install "$1" --prefix "$2" 2>&1) || fail "cmake --install $1 --prefix $2: $out"
}

# expect_ring <oshrun> <np> <provider> <exe> [what]: runs a ring program
# (examples/hello_ring.c or tests/install/ring.cpp) and checks its verdict.
expect_ring() {
    local oshrun=$1 np=$2 prov=$3 exe=$4 what=${5:-$4} out
    out=$(SHMEM_OFI_PROVIDER=$prov FI_TCP_IFACE=lo SHMEM_DIRECT=$([ "$prov" = shm ] && echo 1 || echo 0) \
          "$oshrun" -n "$np" --timeout 60 "$exe" 2>&1) || fail "$what on $prov: $out"
    grep -q "ring OK: $np of $np" <<<"$out" || fail "$what on $prov printed: $out"
    echo "ok: $what on $prov ($np PEs)"
}
