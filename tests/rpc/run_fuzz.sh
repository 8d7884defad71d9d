#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_fuzz.sh CLANG BINDIR SRCDIR SECONDS SOURCES...: builds the libFuzzer
# target with ASan+UBSan and runs it for a bounded time. Exit 77 (skipped)
# when clang or its fuzzer runtime (Debian: libclang-rt-14-dev) is missing.
set -u
CLANG=$1 BIN=$2 SRC=$3 SECS=$4
shift 4
if [ -z "$CLANG" ] || ! command -v "$CLANG" >/dev/null 2>&1; then
  echo "SKIP: no clang (install clang and libclang-rt-14-dev)"; exit 77
fi
OUT="$BIN/fuzz_wire"
if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
     -I"$SRC" -o "$OUT" "$@" 2>"$BIN/fuzz_build.log"; then
  if grep -q -e "libclang_rt.fuzzer" -e "fuzzer" "$BIN/fuzz_build.log"; then
    echo "SKIP: clang's libFuzzer runtime is missing (Debian package libclang-rt-14-dev)"
    exit 77
  fi
  cat "$BIN/fuzz_build.log"; exit 1
fi
CORPUS="$BIN/fuzz_corpus"
mkdir -p "$CORPUS"
"$OUT" -max_total_time="$SECS" -max_len=4096 -print_final_stats=1 "$CORPUS" 2>&1 |
  tee "$BIN/fuzz_run.log" | grep -E "stat::number_of_executed_units|stat::new_units_added|ERROR|SUMMARY|Done"
exit "${PIPESTATUS[0]}"
