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
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
P=$tmp/prefix
for f in bin/oshcc bin/oshrun bin/osh_info include/shmem.h include/shmemx.h \
         include/ofishmem/typelists.h lib/pkgconfig/ofishmem.pc; do
    [ -e "$P/$f" ] || fail "missing $f in the installed prefix"
done
ls "$P"/lib/libofishmem.so* >/dev/null || fail "no shared library installed"
[ -e "$P/lib/libofishmem.a" ] || fail "no static library installed"

# Move the prefix: oshcc finds its own location.
mv "$P" "$tmp/moved"
P=$tmp/moved
cp "$src/examples/hello_ring.c" "$tmp/ring.c"
(cd "$tmp" && "$P/bin/oshcc" -O2 ring.c -o ring) || fail "oshcc could not build a program"
cc -std=gnu11 "$tmp/ring.c" -o "$tmp/ring_pc" \
    $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --define-prefix --cflags --libs ofishmem) ||
    fail "pkg-config flags do not build a program"

for prov in shm "tcp;ofi_rxm"; do
    for exe in ring ring_pc; do
        out=$(SHMEM_OFI_PROVIDER=$prov FI_TCP_IFACE=lo "$P/bin/oshrun" -n 4 --timeout 60 \
              "$tmp/$exe" 2>&1) || fail "$exe on $prov: $out"
        grep -q "ring OK: 4 of 4" <<<"$out" || fail "$exe on $prov printed: $out"
        echo "ok: $exe on $prov"
    done
done

out=$(SHMEM_INFO=1 "$P/bin/oshrun" -n 2 --timeout 60 "$tmp/ring" 2>&1) || fail "SHMEM_INFO run: $out"
for v in SHMEM_SYMMETRIC_SIZE SHMEM_OFI_PROVIDER SHMEM_DEBUG "provider shm"; do
    grep -q "$v" <<<"$out" || fail "SHMEM_INFO=1 output lacks '$v'"
done
echo "ok: SHMEM_INFO lists the table"

out=$(SHMEM_SYMMETRIC_SIZE=lots "$P/bin/oshrun" -n 2 --timeout 60 "$tmp/ring" 2>&1) &&
    fail "a malformed SHMEM_SYMMETRIC_SIZE did not stop the job"
grep -q "SHMEM_SYMMETRIC_SIZE='lots' is not valid" <<<"$out" ||
    fail "bad value message does not name the variable: $out"
echo "ok: a malformed variable stops init with a message naming it"

info=$("$P/bin/osh_info") || fail "osh_info failed"
grep -q "providers with RDM + RMA:.*shm" <<<"$info" || fail "osh_info lists no shm: $info"
grep -q "SHMEM_SYMMETRIC_SIZE" <<<"$info" || fail "osh_info does not list the env table"
echo "ok: osh_info"
echo "install test passed"
