#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The shared library exports every OpenSHMEM 1.6 C name (and its pshmem_
# profiling twin), current and deprecated:
#   exports_check.sh <libofishmem.so> <name list>...
# A list has one name a line, optionally followed by a tab and anything;
# '#' lines are comments. The lists checked in next to this script:
#   openshmem-1.6-c-functions.txt  every 1.6 C function, typed forms expanded
#                                  (copy of the project's shared/spec list)
#   deprecated-c-names.txt         the spec's deprecated-API annex, expanded
set -euo pipefail
lib=$1
shift
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$lib" ] || fail "no library at $lib"
command -v nm >/dev/null || fail "nm is not installed"

# Defined, exported functions (T, or W: the public names are weak aliases).
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ {print $3}' | sort -u)
[ -n "$exported" ] || fail "nm -D found no exported functions in $lib"

total=0
missing=()
for list in "$@"; do
    [ -r "$list" ] || fail "no name list $list"
    names=$(grep -v '^[[:space:]]*#' "$list" | cut -f1 | sed '/^[[:space:]]*$/d' | sort -u)
    [ -n "$names" ] || fail "$list lists no names"
    n=$(wc -l <<<"$names")
    total=$((total + n))
    # Profiling interface: every shmem_ name also as pshmem_.
    want=$( (echo "$names"; grep '^shmem_' <<<"$names" | sed 's/^/p/') | sort -u)
    while read -r m; do
        missing+=("$m (from $(basename "$list"))")
    done < <(comm -23 <(echo "$want") <(echo "$exported"))
    echo "ok: $(basename "$list"): $n names checked"
done
if [ ${#missing[@]} -gt 0 ]; then
    printf '  not exported: %s\n' "${missing[@]:0:40}" >&2
    fail "${#missing[@]} names are not exported by $lib"
fi
echo "exports check passed: $total names (and their pshmem_ twins) exported by $(basename "$lib")"
