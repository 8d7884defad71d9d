#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds Sandia OpenSHMEM's test suite (tests-sos, see README.md) with its
# own autotools build against an installed ofishmem:
#   sos_build.sh <cmake-build-dir> <tests-sos tarball> <work-dir>
# 1. installs the build tree into <work-dir>/prefix (cmake --install), so the
#    suite sees the installed headers, oshcc, oshc++ and oshrun;
# 2. unpacks the tarball into <work-dir>/src and runs its autogen.sh (again
#    only when the tarball is newer);
# 3. configures two trees out of the source (VPATH), with
#    CC=<prefix>/bin/oshcc CXX=<prefix>/bin/oshc++:
#      default:    --enable-profiling (the pshmem_ tests), no Fortran;
#      deprecated: --enable-deprecated-tests;
# 4. builds every program of the default tree with `make check TESTS=`
#    (build, run nothing) and, in the deprecated tree, only the programs
#    whose source changes with ENABLE_DEPRECATED_TESTS;
# 5. writes <work-dir>/programs: one "TREE DIR PROGRAM" a line, the
#    programs `make check` would run (its TESTS lists), which sos_run.sh runs.
# Rebuilds are incremental (make tracks the installed headers).
set -euo pipefail
build=$1
tarball=$2
work=$3
jobs=${SOS_JOBS:-2}
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
src=$work/src

for t in autoreconf automake libtoolize make; do
    command -v "$t" >/dev/null || fail "$t is not installed (Debian: autoconf automake libtool make)"
done
out=$(cmake --install "$build" --prefix "$prefix" 2>&1) || fail "cmake --install $build: $out"
[ -x "$prefix/bin/oshcc" ] || fail "no oshcc in the installed prefix $prefix"

# log_or_fail LOG WHAT CMD...: runs CMD with its output in LOG; on failure
# shows the errors (or the tail) and stops.
log_or_fail() {
    local log=$1 what=$2
    shift 2
    if ! "$@" >"$log" 2>&1; then
        echo "FAIL: $what (log: $log)" >&2
        grep -E -A3 "error|Error" "$log" | head -60 >&2 || tail -40 "$log" >&2
        exit 1
    fi
}

if [ ! -e "$work/src.stamp" ] || [ "$tarball" -nt "$work/src.stamp" ]; then
    rm -rf "$src" "$work/default" "$work/deprecated"
    mkdir -p "$src"
    tar -xzf "$tarball" -C "$src" --strip-components=1 || fail "cannot unpack $tarball"
    log_or_fail "$work/autogen.log" "autogen.sh" bash -c "cd '$src' && ./autogen.sh"
    touch "$work/src.stamp"
fi

# configure_tree NAME OPTIONS...: configures (again only if the options changed).
configure_tree() {
    local name=$1
    shift
    local dir=$work/$name
    local want="$src/configure CC=$prefix/bin/oshcc CXX=$prefix/bin/oshc++ --disable-fortran $*"
    if [ ! -f "$dir/Makefile" ] || [ "$(cat "$dir/configure.line" 2>/dev/null)" != "$want" ]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        # shellcheck disable=SC2086 # $want is words on purpose
        log_or_fail "$work/configure-$name.log" "configure ($name)" bash -c "cd '$dir' && $want"
        echo "$want" >"$dir/configure.line"
    fi
}
configure_tree default --enable-profiling
configure_tree deprecated --enable-deprecated-tests

# The programs of DIR that `make check` runs (its TESTS, after automake's
# conditionals).
tests_of() {
    printf 'sos-print-tests:\n\t@echo $(TESTS)\n' |
        make -s -C "$1" -f Makefile -f - sos-print-tests
}

log_or_fail "$work/make-default.log" "make check TESTS= (default tree)" \
    make -C "$work/default" -j "$jobs" check TESTS=
: >"$work/programs.new"
for d in unit spec-example apps; do
    for p in $(tests_of "$work/default/test/$d"); do
        [ -x "$work/default/test/$d/$p" ] || fail "default/test/$d/$p was not built"
        echo "default $d $p" >>"$work/programs.new"
    done
done

# The deprecated variants: programs whose source has ENABLE_DEPRECATED_TESTS.
for d in unit spec-example apps; do
    progs=()
    for p in $(tests_of "$work/deprecated/test/$d"); do
        for f in "$src/test/$d/$p".c "$src/test/$d/$p".cpp; do
            [ -f "$f" ] && grep -q ENABLE_DEPRECATED_TESTS "$f" && progs+=("$p")
        done
    done
    [ ${#progs[@]} -eq 0 ] && continue
    log_or_fail "$work/make-deprecated-$d.log" "make (deprecated tree, test/$d)" \
        make -C "$work/deprecated/test/$d" -j "$jobs" "${progs[@]}"
    for p in "${progs[@]}"; do
        echo "deprecated $d $p" >>"$work/programs.new"
    done
done
mv "$work/programs.new" "$work/programs"
echo "built: $(grep -c '^default' "$work/programs") programs (default tree)," \
     "$(grep -c '^deprecated' "$work/programs") (deprecated tree), against $prefix"
