#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages of this build (cmake/packaging.cmake): cpack -G DEB
# into a temp dir, check their control fields and contents, install them
# with dpkg -i, build examples/hello_ring.c with /usr/bin/oshcc and a C++
# ring with /usr/bin/oshc++, run both with /usr/bin/oshrun -n 2 over shm,
# then dpkg --purge them (also when a step fails) and check the system is as
# before: same packages, same diversions, same /usr/bin/osh* (Open MPI's
# come back), no ofishmem file left.
#   deb_test.sh <build-dir> <source-dir>
# Skipped (exit 77) without dpkg or without root.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
if ! command -v dpkg >/dev/null || ! command -v dpkg-deb >/dev/null; then
    echo "SKIP: no dpkg here (not a Debian system): the .deb packages are not tested"
    exit 77
fi
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: installing the packages needs root (CI runs this test as root)"
    exit 77
fi
for p in ofishmem libofishmem-dev; do
    if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
        fail "package $p is already on this system ($(dpkg-query -W -f='${db:Status-Status}' "$p")):" \
             "this test would replace and then remove it; remove it first (dpkg --purge libofishmem-dev ofishmem)"
    fi
done

tmp=$(mktemp -d)
# What must be the same after the packages are gone.
snapshot() {
    dpkg-query -W -f='${Package} ${Version} ${db:Status-Status}\n' | sort
    dpkg-divert --list | sort
    ls -l --time-style=+ /usr/bin/osh* /usr/bin/shmem* /usr/share/man/man1/osh* 2>/dev/null || true
    ls -d /usr/include/shmem.h /usr/include/shmemx.h /usr/include/ofishmem* \
        /usr/lib/libofishmem* /usr/lib/*/libofishmem* /usr/lib/pkgconfig/ofishmem.pc \
        /usr/lib/*/pkgconfig/ofishmem.pc /usr/lib/cmake/ofishmem /usr/lib/*/cmake/ofishmem \
        /usr/bin/osh_info 2>/dev/null || true
}
snapshot >"$tmp/before"

installed=0
# dpkg waits for nobody: retry while another dpkg/apt holds the lock.
dpkg_retry() {
    local i out
    for i in $(seq 1 30); do
        if out=$(dpkg "$@" 2>&1); then
            return 0
        fi
        grep -qi "lock" <<<"$out" || { echo "$out" >&2; return 1; }
        sleep 2
    done
    echo "$out" >&2
    return 1
}
remove_packages() {
    dpkg_retry --purge libofishmem-dev ofishmem >"$tmp/purge.log" 2>&1
}
cleanup() {
    local rc=$?
    if [ $installed = 1 ]; then
        echo "removing the packages after a failure" >&2
        remove_packages || { echo "FAIL: dpkg --purge: $(cat "$tmp/purge.log")" >&2; rc=1; }
    fi
    rm -rf "$tmp"
    exit $rc
}
trap cleanup EXIT

# ---- build and inspect ---------------------------------------------------------------
out=$(cd "$build" && cpack -G DEB -B "$tmp/deb" 2>&1) || fail "cpack -G DEB: $out"
rt=$(ls "$tmp"/deb/ofishmem_*.deb 2>/dev/null) || fail "no ofishmem_*.deb: $out"
dev=$(ls "$tmp"/deb/libofishmem-dev_*.deb 2>/dev/null) || fail "no libofishmem-dev_*.deb: $out"
echo "ok: cpack -G DEB made $(basename "$rt") and $(basename "$dev")"

field() { dpkg-deb -f "$1" "$2"; }
deps=$(field "$rt" Depends)
for d in libfabric1 libpmix2 libc6; do
    grep -q "\b$d\b" <<<"$deps" || fail "ofishmem does not depend on $d: Depends: $deps"
done
ver=$(field "$rt" Version)
deps=$(field "$dev" Depends)
grep -q "ofishmem (= $ver)" <<<"$deps" || fail "libofishmem-dev does not depend on ofishmem (= $ver): $deps"
for d in libfabric-dev libpmix-dev; do
    grep -q "\b$d\b" <<<"$deps" || fail "libofishmem-dev does not depend on $d: $deps"
done
echo "ok: Depends: ofishmem: $(field "$rt" Depends); libofishmem-dev: $deps"

dpkg-deb -c "$rt" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/rt.files"
dpkg-deb -c "$dev" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/dev.files"
has() { grep -qE "$2" "$tmp/$1.files" || fail "the $1 package lacks $2: $(tr '\n' ' ' <"$tmp/$1.files")"; }
lacks() { grep -qE "$2" "$tmp/$1.files" && fail "the $1 package holds $2"; true; }
has rt '^/usr/bin/oshrun$'
has rt '^/usr/bin/osh_info$'
has rt '^/usr/lib/(.*/)?libofishmem\.so\.[0-9]+$'
has rt '^/usr/share/man/man1/oshrun\.1'
lacks rt '/include/'
lacks rt 'libofishmem\.so$|libofishmem\.a$|/bin/oshcc$'
for f in /usr/bin/oshcc '/usr/bin/oshc\+\+' /usr/bin/oshcxx /usr/bin/oshCC /usr/include/shmem.h \
    /usr/include/shmemx.h /usr/include/ofishmem/cxx_generics.h 'pkgconfig/ofishmem\.pc' \
    'cmake/ofishmem/ofishmem-config\.cmake' 'libofishmem\.so$' 'libofishmem\.a$' \
    '/usr/share/man/man1/oshcc\.1' '/usr/share/man/man1/oshc\+\+\.1'; do
    has dev "$f"
done
lacks dev 'libofishmem\.so\.[0-9]|/bin/oshrun$|/libexec/'
echo "ok: contents: runtime $(wc -l <"$tmp/rt.files") entries, dev $(wc -l <"$tmp/dev.files")"

# ---- install, use, remove --------------------------------------------------------------
installed=1
dpkg_retry -i "$rt" "$dev" >"$tmp/install.log" 2>&1 || fail "dpkg -i: $(cat "$tmp/install.log")"
for t in oshcc oshc++ oshcxx oshCC; do
    grep -q ofishmem-compiler-wrapper "/usr/bin/$t" || fail "/usr/bin/$t is not ofishmem's after dpkg -i"
done
if dpkg-query -W -f='${db:Status-Status}' openmpi-bin 2>/dev/null | grep -q '^installed$'; then
    [ -e /usr/bin/oshrun.openmpi ] && [ -e /usr/bin/oshcc.openmpi ] ||
        fail "Open MPI's oshrun/oshcc were not kept as *.openmpi: $(ls -l /usr/bin/osh*)"
    echo "ok: Open MPI's oshrun, oshcc, ... diverted to *.openmpi while ofishmem is installed"
fi
[ "$(pkg-config --variable=prefix ofishmem)" = /usr ] ||
    fail "the installed ofishmem.pc has prefix $(pkg-config --variable=prefix ofishmem), not /usr"

w=$tmp/work
mkdir -p "$w"
cp "$src/examples/hello_ring.c" "$w/ring.c"
cp "$here/ring.cpp" "$w/ring.cpp"
(cd "$w" && /usr/bin/oshcc -O2 ring.c -o ring_c) || fail "/usr/bin/oshcc could not build hello_ring.c"
(cd "$w" && /usr/bin/oshc++ -O2 ring.cpp -o ring_cxx) || fail "/usr/bin/oshc++ could not build ring.cpp"
libs=$(ldd "$w/ring_c")
grep -q "libofishmem.so.0 => /usr/lib/" <<<"$libs" || fail "ring_c does not load /usr/lib*/libofishmem: $libs"
expect_ring /usr/bin/oshrun 2 shm "$w/ring_c" "hello_ring.c built by /usr/bin/oshcc"
expect_ring /usr/bin/oshrun 2 shm "$w/ring_cxx" "ring.cpp built by /usr/bin/oshc++"
/usr/bin/osh_info >/dev/null || fail "/usr/bin/osh_info failed"

installed=0
remove_packages || fail "dpkg --purge: $(cat "$tmp/purge.log")"
snapshot >"$tmp/after"
diff -u "$tmp/before" "$tmp/after" >&2 || fail "the system is not as before the packages (diff above)"
echo "ok: dpkg --purge left the system as it was (packages, diversions, /usr/bin/osh*)"
echo "deb test passed"
