#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An installed prefix works on its own: install into a fresh temp prefix,
# build an outside program with PREFIX/bin/oshcc and with pkg-config, run it
# with PREFIX/bin/oshrun on shm and tcp;ofi_rxm, check SHMEM_INFO and osh_info.
#   install_test.sh <build-dir> <source-dir>
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"

install_prefix "$build" "$tmp/prefix"
P=$tmp/prefix
for f in bin/oshcc bin/oshc++ bin/oshcxx bin/oshCC bin/oshrun bin/osh_info include/shmem.h \
         include/shmemx.h include/pshmem.h include/mpp/shmem.h include/mpp/shmemx.h \
         include/ofishmem/typelists.h \
         include/ofishmem/cxx_generics.h lib/pkgconfig/ofishmem.pc \
         lib/cmake/ofishmem/ofishmem-config.cmake lib/cmake/ofishmem/ofishmem-config-version.cmake \
         lib/cmake/ofishmem/ofishmem-targets.cmake \
         share/man/man1/oshrun.1 share/man/man1/oshcc.1 share/man/man1/osh_info.1 \
         share/man/man1/oshc++.1 share/man/man1/oshcxx.1 share/man/man1/oshCC.1; do
    [ -e "$P/$f" ] || fail "missing $f in the installed prefix"
done
ls "$P"/lib/libofishmem.so* >/dev/null || fail "no shared library installed"
[ -e "$P/lib/libofishmem.a" ] || fail "no static library installed"

# Move the prefix: oshcc finds its own location.
mv "$P" "$tmp/moved"
P=$tmp/moved
cp "$src/examples/hello_ring.c" "$tmp/ring.c"
(cd "$tmp" && "$P/bin/oshcc" -O2 ring.c -o ring) || fail "oshcc could not build a program"
# SGI-era programs include <mpp/shmem.h> (deprecated header directory, still required).
sed 's|#include <shmem.h>|#include <mpp/shmem.h>\n#include <mpp/shmemx.h>|' "$src/examples/hello_ring.c" \
    >"$tmp/ring_mpp.c"
grep -q '<mpp/shmem.h>' "$tmp/ring_mpp.c" || fail "hello_ring.c does not include <shmem.h> as expected"
(cd "$tmp" && "$P/bin/oshcc" -O2 ring_mpp.c -o ring_mpp) ||
    fail "oshcc could not build a program that includes <mpp/shmem.h>"
cc -std=gnu11 "$tmp/ring.c" -o "$tmp/ring_pc" \
    $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --define-prefix --cflags --libs ofishmem) ||
    fail "pkg-config flags do not build a program"

# CMake package: an outside project with find_package(ofishmem).
mkdir -p "$tmp/cmproj"
cp "$src/examples/hello_ring.c" "$tmp/cmproj/ring.c"
cat >"$tmp/cmproj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(outside C)
find_package(ofishmem 0.1 REQUIRED)
add_executable(ring_cm ring.c)
target_link_libraries(ring_cm PRIVATE ofishmem::ofishmem)
add_executable(ring_cm_static ring.c)
target_link_libraries(ring_cm_static PRIVATE ofishmem::ofishmem_static)
message(STATUS "ofishmem ${ofishmem_VERSION} oshrun=${ofishmem_OSHRUN}")
CM
cmout=$(cmake -S "$tmp/cmproj" -B "$tmp/cmproj/build" -DCMAKE_PREFIX_PATH="$P" 2>&1) ||
    fail "find_package(ofishmem) failed: $cmout"
grep -q "ofishmem 0\.1\.[0-9]* oshrun=$P/bin/oshrun" <<<"$cmout" ||
    fail "the package does not give the version and the prefix's oshrun: $cmout"
cmout=$(cmake --build "$tmp/cmproj/build" 2>&1) || fail "building against ofishmem::ofishmem: $cmout"
cp "$tmp/cmproj/build/ring_cm" "$tmp/cmproj/build/ring_cm_static" "$tmp/"
# ldd's output first: with pipefail, `ldd | grep -q` fails when grep stops
# reading early and ldd dies of SIGPIPE.
deps=$(ldd "$tmp/ring_cm")
grep -q "$P/lib/libofishmem.so" <<<"$deps" ||
    fail "ring_cm does not load libofishmem from the prefix: $deps"
deps=$(ldd "$tmp/ring_cm_static")
grep -q libofishmem.so <<<"$deps" && fail "ring_cm_static loads the shared library"
# A version the prefix cannot satisfy is refused by name.
sed -i 's/find_package(ofishmem 0.1 REQUIRED)/find_package(ofishmem 9.0 REQUIRED)/' \
    "$tmp/cmproj/CMakeLists.txt"
out=$(cmake -S "$tmp/cmproj" -B "$tmp/cmproj/build3" -DCMAKE_PREFIX_PATH="$P" 2>&1) &&
    fail "find_package(ofishmem 9.0) accepted version $(grep -o 'ofishmem [0-9.]*' <<<"$out")"
grep -q "compatible with requested version \"9.0\"" <<<"$out" ||
    fail "no version message from find_package(ofishmem 9.0): $out"
echo "ok: find_package(ofishmem) builds ofishmem::ofishmem and ofishmem::ofishmem_static"

# Man pages: installed, and groff renders them without a warning.
for m in oshrun oshcc oshc++ oshcxx oshCC osh_info; do
    page="$P/share/man/man1/$m.1"
    warn=$(groff -man -ww -z "$page" 2>&1) || fail "groff failed on $m.1: $warn"
    [ -z "$warn" ] || fail "groff warns on $m.1: $warn"
    grep -q "@[A-Z_]*@" "$page" && fail "$m.1 has an unsubstituted @VAR@"
    if command -v man >/dev/null; then
        text=$(MANWIDTH=80 man --warnings -P cat -l "$page" 2>"$tmp/manwarn") ||
            fail "man -l $m.1 failed: $(cat "$tmp/manwarn")"
        [ -s "$tmp/manwarn" ] && fail "man warns on $m.1: $(cat "$tmp/manwarn")"
        if ! grep -q "^NAME" <<<"$text" || ! grep -q "$m" <<<"$text"; then
            fail "$m.1 renders without a NAME section"
        fi
    fi
done
# Every option oshrun --help lists is documented in oshrun(1).
for o in $("$P/bin/oshrun" --help | grep -oE '^  (-[a-zA-Z]|--[a-z-]+)' | tr -d ' '); do
    grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$P/share/man/man1/oshrun.1" ||
        fail "oshrun --help lists $o but oshrun.1 does not document it"
done
echo "ok: man pages installed and render without warnings"

for prov in shm "tcp;ofi_rxm"; do
    for exe in ring ring_pc ring_cm ring_cm_static ring_mpp; do
        out=$(SHMEM_OFI_PROVIDER=$prov FI_TCP_IFACE=lo "$P/bin/oshrun" -n 4 --timeout 60 \
              "$tmp/$exe" 2>&1) || fail "$exe on $prov: $out"
        grep -q "ring OK: 4 of 4" <<<"$out" || fail "$exe on $prov printed: $out"
        echo "ok: $exe on $prov"
    done
done

out=$(SHMEM_INFO=1 "$P/bin/oshrun" -n 2 --timeout 60 "$tmp/ring" 2>&1) || fail "SHMEM_INFO run: $out"
for v in SHMEM_SYMMETRIC_SIZE SHMEM_OFI_PROVIDER SHMEM_DEBUG SHMEM_FABRIC "provider none" "ofishmem fabric: none"; do
    grep -q "$v" <<<"$out" || fail "SHMEM_INFO=1 output lacks '$v'"
done
echo "ok: SHMEM_INFO lists the table"

out=$(SHMEM_SYMMETRIC_SIZE=lots "$P/bin/oshrun" -n 2 --timeout 60 "$tmp/ring" 2>&1) &&
    fail "a malformed SHMEM_SYMMETRIC_SIZE did not stop the job"
grep -q "SHMEM_SYMMETRIC_SIZE='lots' is not valid" <<<"$out" ||
    fail "bad value message does not name the variable: $out"
echo "ok: a malformed variable stops init with a message naming it"

info=$("$P/bin/osh_info") || fail "osh_info failed"
# The choice a job makes, as the library makes it (no NIC here: shm first on
# one host, tcp;ofi_rxm first across hosts, shm excluded there).
one=$(sed -n '/providers for a job on one host/,/providers for a job on several/p' <<<"$info")
several=$(sed -n '/providers for a job on several hosts/,/SHMEM_OFI_PROVIDER or FI_PROVIDER/p' <<<"$info")
grep -q "^    1\. shm " <<<"$one" || fail "osh_info: shm is not first for one host: $info"
grep -q "^    1\. tcp;ofi_rxm " <<<"$several" || fail "osh_info: tcp;ofi_rxm is not first across hosts: $info"
grep -q "^    -  shm .*same host only" <<<"$several" || fail "osh_info offers shm across hosts: $info"
grep -q "SHMEM_SYMMETRIC_SIZE" <<<"$info" || fail "osh_info does not list the env table"
grep -q "^ofishmem 0\.[0-9.]*, OpenSHMEM 1\.6" <<<"$info" || fail "osh_info shows no version: $info"
grep -q "build: .*compiler .*prefix $P\$" <<<"$info" ||
    fail "osh_info does not show the build and the (moved) prefix: $info"
grep -q "PMIx: " <<<"$info" || fail "osh_info does not show the PMIx version"
out=$(SMA_SYMMETRIC_SIZE=64M "$P/bin/osh_info") || fail "osh_info with SMA_SYMMETRIC_SIZE"
grep -Eq "SHMEM_SYMMETRIC_SIZE.*(64M|67108864)" <<<"$out" ||
    fail "osh_info does not show the value given as SMA_SYMMETRIC_SIZE"
out=$(SHMEM_SYMMETRIC_SIZE=lots "$P/bin/osh_info" 2>&1) && fail "osh_info accepted a bad value"
grep -q "SHMEM_SYMMETRIC_SIZE='lots'" <<<"$out" || fail "osh_info bad value message: $out"
rc=0
"$P/bin/osh_info" --bogus >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "osh_info --bogus exited $rc, not 2 (usage error)"
echo "ok: osh_info"
echo "install test passed"
