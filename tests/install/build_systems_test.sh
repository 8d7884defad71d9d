#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The wrappers and the packages in other people's build systems, from an
# installed prefix (moved, so nothing points back at the build tree):
#   1. oshcc / oshc++ themselves: the compiler variables and their precedence,
#      CC=oshcc exported (must not run itself), a CC script that calls oshcc
#      again, arguments with spaces and quotes (and --showme quoting them so
#      the shell gets the same words back), a user -std= winning, the aliases;
#   2. an autotools-style project (hand-written configure + Makefile) built
#      with CC=oshcc CXX=oshc++ exported;
#   3. a C++-only CMake project with find_package(ofishmem), and one with
#      CMAKE_CXX_COMPILER=oshc++; pkg-config for a C++ program;
# and runs what they built on shm and tcp;ofi_rxm.
#   build_systems_test.sh <build-dir> <source-dir>
set -euo pipefail
build=$1
src=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset CC CXX OSHCC_CC OSHCXX_CXX SHMEM_CC SHMEM_CXX OFISHMEM_WRAPPER_ACTIVE CFLAGS CXXFLAGS
command -v c++ >/dev/null || fail "no C++ compiler (c++) on PATH"

install_prefix "$build" "$tmp/inst"
mv "$tmp/inst" "$tmp/my prefix" # a space in the prefix, too
P="$tmp/my prefix"
export PATH="$P/bin:$PATH"
W=$tmp/work
mkdir -p "$W"
cd "$W"
cp "$src/examples/hello_ring.c" ring.c
cp "$here/ring.cpp" ring.cpp
T="timeout 120" # a wrapper that runs itself never returns: make that a failure

# ---- 1. the wrappers ----------------------------------------------------------
# The compiler each variable selects (--showme:compiler), in precedence order.
which_cc() { env "$@" $T oshcc --showme:compiler 2>/dev/null; }
which_cxx() { env "$@" $T oshc++ --showme:compiler 2>/dev/null; }
[ "$(which_cc CC=clang)" = clang ] || fail "oshcc does not take CC=clang"
[ "$(which_cc CC=clang SHMEM_CC=gcc)" = gcc ] || fail "SHMEM_CC does not win over CC"
[ "$(which_cc CC=clang SHMEM_CC=gcc OSHCC_CC=cc)" = cc ] || fail "OSHCC_CC does not win"
[ "$(which_cxx CXX=clang++ SHMEM_CXX=g++ OSHCXX_CXX=c++)" = c++ ] || fail "OSHCXX_CXX does not win"
[ "$(which_cxx CXX=clang++ SHMEM_CXX=g++)" = g++ ] || fail "SHMEM_CXX does not win over CXX"
[ "$(which_cxx CXX="ccache g++")" = "ccache g++" ] || fail "a CXX with arguments is not kept whole"
builtin_cc=$(which_cc)
builtin_cxx=$(which_cxx)
[ -n "$builtin_cc" ] && [ -n "$builtin_cxx" ] || fail "no built-in compilers shown"
for v in CC=oshcc "CC=$P/bin/oshcc" CC=oshc++ CC=oshCC "CC=ccache oshcc" SHMEM_CC=oshcxx; do
    got=$(which_cc "$v") || fail "oshcc --showme:compiler with $v failed"
    [ "$got" = "$builtin_cc" ] || fail "oshcc with $v would run '$got', not $builtin_cc"
done
for v in CXX=oshc++ CXX=oshcxx CXX=oshCC "CXX=$P/bin/oshcc" OSHCXX_CXX=oshc++; do
    got=$(which_cxx "$v") || fail "oshc++ --showme:compiler with $v failed"
    [ "$got" = "$builtin_cxx" ] || fail "oshc++ with $v would run '$got', not $builtin_cxx"
done
# Our own variable naming a wrapper is a mistake: said on stderr. CC is not.
err=$(OSHCC_CC=oshcc oshcc --showme:compiler 2>&1 >/dev/null)
grep -q "ignoring OSHCC_CC='oshcc': it names a compiler wrapper" <<<"$err" ||
    fail "no message for OSHCC_CC=oshcc: '$err'"
err=$(CC=oshcc $T oshcc -c ring.c -o quiet.o 2>&1) || fail "CC=oshcc oshcc -c: $err"
[ -z "$err" ] || fail "CC=oshcc made oshcc print: $err"
# --showme with a skipped CC says so, and names the compiler.
err=$(CC=oshcc oshcc --showme ring.c 2>&1 >/dev/null)
grep -q "skipped CC=oshcc; the compiler is $builtin_cc" <<<"$err" || fail "--showme note: '$err'"
echo "ok: compiler variables: OSHCC_CC > SHMEM_CC > CC > built-in; wrappers skipped"

# export CC=oshcc; oshcc prog.c (once: it ran itself for ever).
(export CC=oshcc CXX=oshc++ && $T oshcc ring.c -o ring_ccenv && $T oshc++ ring.cpp -o ring_cxxenv) ||
    fail "with CC=oshcc CXX=oshc++ exported the wrappers did not build (status $?: 124 is a hang)"
# A compiler script that calls the wrapper again (ccache-like) ends too.
printf '#!/bin/sh\nexec oshcc "$@"\n' >"$tmp/loopcc"
chmod +x "$tmp/loopcc"
CC=$tmp/loopcc $T oshcc ring.c -o ring_loop || fail "CC=<script running oshcc>: status $?"
echo "ok: CC=oshcc / CXX=oshc++ exported, and a CC that runs oshcc, build without a loop"

# Arguments with spaces and quotes stay whole, and --showme quotes them.
cat >msg.c <<'EOF'
#include <shmem.h>
#include <stdio.h>
int main(void) { puts(MSG); return 0; }
EOF
oshcc '-DMSG="two words, it'\''s"' msg.c -o 'my msg' || fail "oshcc with a quoted -D"
[ "$(./'my msg')" = "two words, it's" ] || fail "the -D argument was split or requoted: $(./'my msg')"
line=$(oshcc --showme '-DMSG="shown, it'\''s"' msg.c -o 'shown msg')
rm -f 'shown msg'
eval "$line" || fail "the --showme line does not run in sh: $line"
[ "$(./'shown msg')" = "shown, it's" ] || fail "--showme quoting lost the words: $line"
case $line in
"$builtin_cc "*) ;;
*) fail "--showme does not start with the compiler ($builtin_cc): $line" ;;
esac
echo "ok: arguments with spaces and quotes; --showme quotes them for the shell"
# -show, as Sandia OpenSHMEM's and MPICH's wrappers spell it (build scripts run
# `oshcc -show` and take -I/-L from it): the same line as --showme, nothing run.
for w in oshcc oshc++; do
    src_=ring.c
    [ $w = oshc++ ] && src_=ring.cpp
    rm -f shown_by_show
    a=$($w -show "$src_" -o shown_by_show) || fail "$w -show failed"
    b=$($w --showme "$src_" -o shown_by_show)
    [ "$a" = "$b" ] || fail "$w -show gives '$a', --showme gives '$b'"
    [ ! -e shown_by_show ] || fail "$w -show ran the compiler"
    bare=$($w -show) || fail "$w -show alone failed"
    grep -qF -- "-I$P/include" <<<"$bare" || fail "$w -show names no -I$P/include: $bare"
    grep -qF -- "-L$P/lib" <<<"$bare" || fail "$w -show names no -L$P/lib: $bare"
done
echo "ok: -show (the Sandia OpenSHMEM / MPICH spelling) prints what --showme does"

# A user -std= wins over the default -std=gnu11 (which is then not added).
printf '#include <shmem.h>\n#if __STDC_VERSION__ != 201710L\n#error not C17\n#endif\nint main(void){return 0;}\n' >std.c
oshcc -std=c17 std.c -o std17 || fail "oshcc -std=c17: the user's -std did not win"
oshcc --showme -std=c99 std.c | grep -q -- "-std=gnu11" && fail "oshcc adds -std=gnu11 next to -std=c99"
oshcc --showme std.c | grep -q -- "-std=gnu11" || fail "oshcc no longer adds -std=gnu11 by default"
oshc++ --showme ring.cpp | grep -q -- "-std=" && fail "oshc++ adds a -std"
for std in 11 20; do
    oshc++ -std=c++$std -Wall -Wextra -Werror ring.cpp -o ring_cxx$std || fail "oshc++ -std=c++$std"
done
for alias in oshcxx oshCC; do
    [ "$($alias --showme:compiler)" = "$builtin_cxx" ] || fail "$alias is not oshc++"
    $alias -c ring.cpp -o "ring_$alias.o" || fail "$alias -c ring.cpp"
done
[ "$(oshcc --version | head -n 1)" = "$($builtin_cc --version | head -n 1)" ] ||
    fail "oshcc --version is not the compiler's"
echo "ok: user -std wins; oshc++ (oshcxx, oshCC) builds as C++11 and C++20"

# ---- 2. an autotools-style project ------------------------------------------------
mkdir -p auto
cp ring.c ring.cpp auto/
cat >auto/configure <<'EOF'
#!/bin/sh
# A configure script of the usual kind: takes CC and CXX from the
# environment, checks that each compiles, links and finds shmem.h.
: "${CC:=cc}" "${CXX:=c++}"
echo "checking whether $CC builds an OpenSHMEM program..."
printf '#include <shmem.h>\nint main(void){shmem_init();shmem_finalize();return 0;}\n' >conftest.c
$CC conftest.c -o conftest || { echo "configure: error: $CC cannot build" >&2; exit 1; }
echo "checking whether $CXX builds an OpenSHMEM program..."
cp conftest.c conftest.cpp
$CXX conftest.cpp -o conftest || { echo "configure: error: $CXX cannot build" >&2; exit 1; }
rm -f conftest conftest.c conftest.cpp
printf 'CC = %s\nCXX = %s\n' "$CC" "$CXX" >config.mk
echo "configure: wrote config.mk"
EOF
chmod +x auto/configure
printf 'include config.mk\nall: ring_c ring_cxx\nring_c: ring.c\n\t$(CC) -O2 ring.c -o $@\nring_cxx: ring.cpp\n\t$(CXX) -O2 ring.cpp -o $@\n' >auto/Makefile
(cd auto && export CC=oshcc CXX=oshc++ && $T ./configure >configure.log 2>&1 && $T make >make.log 2>&1) ||
    fail "CC=oshcc CXX=oshc++ ./configure && make (status $?): $(cat auto/*.log)"
grep -q "^CC = oshcc$" auto/config.mk || fail "configure did not keep CC=oshcc: $(cat auto/config.mk)"
echo "ok: CC=oshcc CXX=oshc++ ./configure && make"

# ---- 3. CMake projects and pkg-config ------------------------------------------------
mkdir -p cm
cp ring.cpp cm/
cat >cm/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(outside_cxx CXX)
find_package(ofishmem 0.1 REQUIRED)
message(STATUS "oshc++=${ofishmem_OSHCXX}")
add_executable(ring_cm ring.cpp)
set_target_properties(ring_cm PROPERTIES CXX_STANDARD 17 CXX_EXTENSIONS OFF)
target_compile_options(ring_cm PRIVATE -Wall -Wextra -Werror)
target_link_libraries(ring_cm PRIVATE ofishmem::ofishmem)
add_executable(ring_cm_static ring.cpp)
target_link_libraries(ring_cm_static PRIVATE ofishmem::ofishmem_static)
EOF
out=$(cmake -S cm -B cm/build -DCMAKE_PREFIX_PATH="$P" 2>&1 && cmake --build cm/build 2>&1) ||
    fail "a C++ project with find_package(ofishmem): $out"
grep -qF "oshc++=$P/bin/oshc++" <<<"$out" || fail "the package does not give ofishmem_OSHCXX: $out"
mkdir -p cmw
cp ring.cpp cmw/
printf 'cmake_minimum_required(VERSION 3.18)\nproject(wrapped CXX)\nadd_executable(ring_cmw ring.cpp)\n' >cmw/CMakeLists.txt
out=$(CXX=oshc++ $T cmake -S cmw -B cmw/build 2>&1 && $T cmake --build cmw/build 2>&1) ||
    fail "a CMake project with CXX=oshc++: $out"
# pkg-config escapes the space of the prefix ("my\ prefix"): the shell (as
# make's) reads the flags back, hence eval.
pc=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --define-prefix --cflags --libs ofishmem) ||
    fail "pkg-config --cflags --libs ofishmem failed"
out=$(eval "c++ -std=c++14 ring.cpp -o ring_pc $pc" 2>&1) ||
    fail "pkg-config flags ($pc) do not build a C++ program: $out"
echo "ok: CMake (find_package, and CXX=oshc++) and pkg-config build C++ programs"

for prov in shm tcp; do
    p=$prov
    [ $prov = tcp ] && p="tcp;ofi_rxm"
    expect_ring "$P/bin/oshrun" 2 "$p" ./ring_ccenv "C ring (CC=oshcc)"
    expect_ring "$P/bin/oshrun" 2 "$p" ./ring_cxxenv "C++ ring (CXX=oshc++)"
    expect_ring "$P/bin/oshrun" 3 "$p" ./ring_cxx11 "C++11 ring"
    expect_ring "$P/bin/oshrun" 3 "$p" ./ring_cxx20 "C++20 ring"
    expect_ring "$P/bin/oshrun" 2 "$p" auto/ring_c "autotools-style C ring"
    expect_ring "$P/bin/oshrun" 2 "$p" auto/ring_cxx "autotools-style C++ ring"
    expect_ring "$P/bin/oshrun" 2 "$p" cm/build/ring_cm "find_package C++ ring"
    expect_ring "$P/bin/oshrun" 2 "$p" cm/build/ring_cm_static "find_package C++ ring (static)"
    expect_ring "$P/bin/oshrun" 2 "$p" cmw/build/ring_cmw "CXX=oshc++ CMake ring"
    expect_ring "$P/bin/oshrun" 2 "$p" ./ring_pc "pkg-config C++ ring"
done
echo "build systems test passed"
