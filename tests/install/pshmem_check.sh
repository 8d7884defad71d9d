#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# <pshmem.h> declares a pshmem_ twin of every function <shmem.h> declares,
# and the library exports each of them:
#   pshmem_check.sh <libofishmem.so> <pshmem.h> <C compiler> <include dir>
set -euo pipefail
lib=$1 hdr=$2 cc=$3 inc=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -r "$hdr" ] || fail "no generated header at $hdr"
declared=$(grep -oE '\bp(shmem_[a-z0-9_]+|start_pes|_my_pe|_num_pes|shmalloc)\(' "$hdr" | tr -d '(' | sort -u)
public=$("$cc" -E -std=gnu11 -I"$inc" "$inc/shmem.h" | grep -oE '\bshmem_[a-z0-9_]+ ?\(' |
    tr -d '( ' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ {print $3}' | sort -u)
nd=$(wc -l <<<"$declared")
[ "$nd" -gt 1000 ] || fail "only $nd pshmem_ prototypes in $hdr"
missing=$(comm -23 <(sed 's/^/p/' <<<"$public") <(echo "$declared"))
[ -z "$missing" ] || fail "not declared in pshmem.h: $(head -5 <<<"$missing" | tr '\n' ' ')"
unexported=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$unexported" ] || fail "declared but not exported: $(head -5 <<<"$unexported" | tr '\n' ' ')"
echo "pshmem.h: $nd prototypes, one for each shmem_ function of shmem.h, all exported"
