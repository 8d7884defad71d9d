#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# libfabric is loaded on first use, not linked (src/conduit/ofi/ofi_dl.c):
#   lazy_libfabric_check.sh <libofishmem.so> <libofishmem.a>
# - the shared library does not need libfabric (no DT_NEEDED), so a job that
#   opens no fabric never loads it (~0.2 s a process: docs/SCALING.md);
# - neither library has an undefined fi_ symbol: every libfabric function
#   that is a real symbol is renamed to the loader's wrapper. One that is
#   not (a new call, or OFISHMEM_FABRIC_SHIMMED in src/CMakeLists.txt and
#   OFI_DL_SYMS in ofi_dl.c out of step) is named here.
set -euo pipefail
so=$1
ar=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in readelf nm; do command -v $t >/dev/null || fail "$t is not installed"; done
[ -r "$so" ] || fail "no library at $so"
[ -r "$ar" ] || fail "no library at $ar"
needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || fail "readelf -d found no NEEDED entry in $so"
if grep -q libfabric <<<"$needed"; then
    fail "$so needs libfabric (DT_NEEDED: $(tr '\n' ' ' <<<"$needed")): it must load it on demand"
fi
echo "ok: $so needs $(tr '\n' ' ' <<<"$needed")"
for lib in "$so" "$ar"; do
    if [ "$lib" = "$so" ]; then undef=$(nm -D --undefined-only "$lib"); else undef=$(nm --undefined-only "$lib" 2>/dev/null); fi
    fi_syms=$(awk '{print $NF}' <<<"$undef" | sed 's/@.*//' | grep '^fi_' | sort -u || true)
    [ -z "$fi_syms" ] || fail "$lib calls libfabric's $(tr '\n' ' ' <<<"$fi_syms")directly: add it to OFISHMEM_FABRIC_SHIMMED (src/CMakeLists.txt) and OFI_DL_SYMS (src/conduit/ofi/ofi_dl.c)"
    echo "ok: no undefined fi_ symbol in $lib"
done
defined=$(nm --defined-only "$ar" 2>/dev/null | awk '{print $NF}' | grep -c '^ofi_dl_fi_' || true)
[ "$defined" -ge 7 ] || fail "$ar defines $defined ofi_dl_fi_ wrappers, expected 7"
echo "ok: $defined libfabric wrappers (ofi_dl_fi_*)"
