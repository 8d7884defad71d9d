#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Writes <pshmem.h>, the profiling interface's header (spec "Profiling
# Interface": every routine reachable as pshmem_<name>, its types and
# constants in <pshmem.h>): every function <shmem.h> declares, renamed
# shmem_X -> pshmem_X (start_pes, _my_pe, _num_pes, shmalloc -> pstart_pes,
# p_my_pe, p_num_pes, pshmalloc; the other 1.2-era aliases have no profiling
# twin). The prototypes come from the preprocessed <shmem.h> itself, so
# they follow its type tables; the C11 generics are macros and have none.
#   gen_pshmem.sh <C compiler> <include dir> <output file>
set -eu
cc=$1
inc=$2
out=$3
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT

{
    cat <<'HDR'
/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * <pshmem.h>: the name-shifted entry points of the OpenSHMEM profiling
 * interface. A profiling library defines shmem_<name> and calls
 * pshmem_<name>; the library's shmem_<name> are weak aliases of them.
 * Generated from <shmem.h> by cmake/gen_pshmem.sh: do not edit.
 */
#ifndef PSHMEM_H
#define PSHMEM_H

#include <shmem.h>

#ifdef __cplusplus
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc99-extensions"
#endif
extern "C" {
#endif

HDR
    # Lines that come from <shmem.h> and <ofishmem/*.h>, joined, split into
    # declarations at ';', one a line; keep those of public functions.
    "$cc" -E -std=gnu11 -I"$inc" "$inc/shmem.h" |
        awk '/^# [0-9]+ "/ { f = $3; next }
             f ~ /\/shmem\.h"$/ || f ~ /\/ofishmem\/[a-z_]+\.h"$/ { print }' |
        tr '\n' ' ' | tr ';' '\n' |
        sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//' |
        sed -n -E \
            -e 's/^(.*[ *])shmem_([a-z0-9_]+) ?\(/\1pshmem_\2(/p' \
            -e 's/^(.*[ *])(start_pes|_my_pe|_num_pes|shmalloc) ?\(/\1p\2(/p' |
        sed 's/$/;/'
    cat <<'FTR'

#ifdef __cplusplus
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
#endif

#endif /* PSHMEM_H */
FTR
} >"$tmp"
n=$(grep -c '^[^#/ ].*p[a-z_]*(' "$tmp" || true)
[ "$n" -gt 1000 ] || { echo "gen_pshmem.sh: only $n prototypes found in $inc/shmem.h" >&2; exit 1; }
mv "$tmp" "$out"
trap - EXIT
