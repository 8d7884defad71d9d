#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# <shmem.h>, <shmemx.h> and <ofishmem_rpc.h> compile cleanly as C++11, 14,
# 17 and 20 under g++ and clang++ with -Wall -Wextra -Werror -pedantic:
#   - the whole C++ generics test (every generic family, several types);
#   - the headers included inside a program's own extern "C" block;
# that every generic name the C11 headers define has C++ overloads; and
# that calls the C11 generics refuse do not compile in C++ either (no
# overload reached through a conversion).
#   compile_headers.sh <include-dir> <tests/cxx dir> [compiler ...]
# Exits 77 (ctest: skipped) when a compiler of the list is missing, after
# checking the others.
set -uo pipefail
inc=$1
dir=$2
shift 2
compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(g++ clang++)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
missing=()
flags=(-Wall -Wextra -Werror -pedantic -I"$inc")

cat >"$tmp/extern_c.cpp" <<'EOF'
extern "C" {
#include <shmem.h>
#include <shmemx.h>
#include <ofishmem_rpc.h>
}
int main()
{
    static long x;
    shmem_atomic_add(&x, 1L, 0);
    return shmem_sync(SHMEM_TEAM_WORLD) + (int)shmemx_heap_size();
}
EOF

# Calls that must not compile: name them, and the snippet (x is long,
# d is double, c is const long, u is unsigned char).
bad_names=(
    "atomic_add on double (not a standard AMO type)"
    "atomic_and on short (not a bitwise AMO type)"
    "put into a const destination"
    "put from long to int (mixed types)"
    "sum_reduce on bool"
    "and_reduce on double"
    "wait_until on double"
    "atomic_fetch_inc with a context but no PE"
)
bad_code=(
    "shmem_atomic_add(&d, 1.0, 0);"
    "short q = 0; shmem_atomic_and(&q, (short)1, 0);"
    "shmem_put(&c, &x, 1, 0);"
    "int i = 0; shmem_put(&i, &x, 1, 0);"
    "static bool b, bb; shmem_sum_reduce(SHMEM_TEAM_WORLD, &b, &bb, 1);"
    "shmem_and_reduce(SHMEM_TEAM_WORLD, &d, &d, 1);"
    "shmem_wait_until(&d, SHMEM_CMP_EQ, 1.0);"
    "shmem_atomic_fetch_inc(SHMEM_CTX_DEFAULT, &x);"
)

# Every generic name the C11 headers define has C++ overloads: a family
# added to the C generics without its line in cxx_generics.h fails here.
if command -v "${compilers[0]}" >/dev/null; then
    c11=$(grep -ho '#define shmem_[a-z0-9_]*(\.\.\.)' "$inc"/shmem.h "$inc"/ofishmem/*.h |
          sed 's/#define //; s/(\.\.\.)//' | sort -u)
    pre=$(printf '#include <shmem.h>\n' | "${compilers[0]}" -x c++ -std=c++11 -E -P -I"$inc" -)
    nmissing=0
    for n in $c11; do
        if ! grep -qE "inline [A-Za-z0-9_ *]*[ *]$n ?\(" <<<"$pre"; then
            echo "FAIL: the C11 generic $n has no C++ overload (include/ofishmem/cxx_generics.h)"
            nmissing=$((nmissing + 1))
        fi
    done
    [ -n "$c11" ] || { echo "FAIL: found no C11 generic names in $inc"; nmissing=1; }
    fails=$((fails + nmissing))
    [ $nmissing = 0 ] && echo "ok: all $(wc -w <<<"$c11") C11 generic names have C++ overloads"
fi

for cxx in "${compilers[@]}"; do
    if ! command -v "$cxx" >/dev/null; then
        echo "SKIP: $cxx is not installed (CI installs it: OFISHMEM_TEST_DEBS in scripts/common.sh)"
        missing+=("$cxx")
        continue
    fi
    for std in 11 14 17 20; do
        for src in "$dir/generics.cpp" "$tmp/extern_c.cpp"; do
            if out=$("$cxx" -std=c++$std "${flags[@]}" -fsyntax-only "$src" 2>&1); then
                echo "ok: $cxx -std=c++$std $(basename "$src")"
            else
                echo "FAIL: $cxx -std=c++$std ${flags[*]} $src:"
                head -n 20 <<<"$out"
                fails=$((fails + 1))
            fi
        done
    done
    for i in "${!bad_code[@]}"; do
        printf '#include <shmem.h>\nvoid f();\nvoid f()\n{\n    static long x;\n    static double d;\n    static const long c = 0;\n    (void)x; (void)d; (void)c;\n    %s\n}\n' \
            "${bad_code[$i]}" >"$tmp/bad.cpp"
        if out=$("$cxx" -std=c++11 -I"$inc" -fsyntax-only "$tmp/bad.cpp" 2>&1); then
            echo "FAIL: $cxx compiled a call the generics must refuse: ${bad_names[$i]}: ${bad_code[$i]}"
            fails=$((fails + 1))
        elif ! grep -q "bad.cpp:9" <<<"$out"; then
            echo "FAIL: $cxx refused ${bad_names[$i]} for another reason (expected an error on line 9):"
            head -n 10 <<<"$out"
            fails=$((fails + 1))
        else
            echo "ok: $cxx refuses ${bad_names[$i]}"
        fi
    done
done

if [ $fails -gt 0 ]; then
    echo "FAILED: $fails compile checks"
    exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "SKIPPED for ${missing[*]} (the other compilers passed)"
    exit 77
fi
echo "all header compile checks passed"
