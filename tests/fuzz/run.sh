#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/fuzz/run.sh NAME... - build and run libFuzzer targets (docs/internals/style.md#a-fuzz-target-per-outside-parser).
#
# NAME is fuzz_<target> or <target>; with no NAME every tests/fuzz/fuzz_*.c runs. The
# library (common/ api/ certs/) is compiled once with clang into build/fuzz/obj, each
# target links against it with -fsanitize=fuzzer,address,undefined and runs for
# FUZZ_SECONDS (default 20), FUZZ_JOBS (default nproc) targets at a time, on a scratch copy
# of tests/fuzz/corpus/<target>/ (the committed seeds are never written). A target passes
# when libFuzzer exits 0; crash inputs land in build/fuzz/artifacts/. Prints "N passed, N failed"; exits 1 on failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
FUZZ_CC=${FUZZ_CC:-clang}
OUT=build/fuzz
PKGS="libmicrohttpd gnutls hogweed nettle libcurl jansson yaml-0.1"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 -fno-omit-frame-pointer \
$SAN -I. $(pkg-config --cflags $PKGS)"
LIBS="$(pkg-config --libs $PKGS) -lpthread -ldl -lm"
. tests/lib.sh

if ! command -v "$FUZZ_CC" >/dev/null; then
    bad fuzz "$FUZZ_CC not found"
    kt_finish
fi
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.c; do
        [ -e "$f" ] && names+=("$(basename "$f" .c)")
    done
fi

mkdir -p "$OUT/obj" "$OUT/artifacts"
# One object per library source, rebuilt when the source or any header is newer.
newest_h=$(ls -t common/*/*.h api/*.h certs/*.h 2>/dev/null | sed -n 1p)
build_lib() {
    local src obj pids=() rc=0 want=" "
    for src in common/*/*.c api/*.c certs/*.c; do
        [ -e "$src" ] || continue
        obj="$OUT/obj/$(echo "$src" | tr / _).o"
        want="$want$obj "
        if [ "$obj" -nt "$src" ] && { [ -z "$newest_h" ] || [ "$obj" -nt "$newest_h" ]; }; then
            continue
        fi
        # Compiler output goes to a log that is shown only when the source fails.
        # shellcheck disable=SC2086
        { $FUZZ_CC $CFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj" >"$obj.log" 2>&1 ||
            { cat "$obj.log" >&2; false; }; } &
        pids+=($!)
        if [ ${#pids[@]} -ge 4 ]; then
            wait "${pids[0]}" || rc=1
            pids=("${pids[@]:1}")
        fi
    done
    for p in "${pids[@]}"; do
        wait "$p" || rc=1
    done
    # Objects of sources that no longer exist must not be linked (file names may hold "_",
    # so compare with the objects made above rather than mapping names back).
    for obj in "$OUT"/obj/*.o; do
        [ -e "$obj" ] || continue
        rm -f "$obj.log"
        case "$want" in *" $obj "*) ;; *) rm -f "$obj" ;; esac
    done
    return $rc
}

if ! build_lib; then
    for name in "${names[@]}"; do bad "$name" "the library does not build with $FUZZ_CC"; done
    kt_finish
fi

# run_one NAME - fuzz target NAME for FUZZ_SECONDS; what it did goes to $OUT/fuzz_NAME.result
# and libFuzzer's exit status to $OUT/fuzz_NAME.rc (read back in order below).
run_one() {
    local name=$1 bin="$OUT/fuzz_$1" work="$OUT/corpus/$1" log="$OUT/fuzz_$1.log" seeds=() rc runs
    mkdir -p "$work"
    [ -d "tests/fuzz/corpus/$name" ] && seeds=("tests/fuzz/corpus/$name")
    "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$OUT/artifacts/fuzz_$name-" "$work" "${seeds[@]}" >"$log" 2>&1
    rc=$?
    runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    if [ $rc -eq 0 ]; then
        echo "(${runs:-?} runs in ${FUZZ_SECONDS}s)"
    else
        echo "exit $rc; log $log"
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | sed -n 1,10p
    fi >"$OUT/fuzz_$name.result"
    echo "$rc" >"$OUT/fuzz_$name.rc"
}

# Build every target first, then run FUZZ_JOBS of them at a time (default: one per core; each
# libFuzzer process is single-threaded, so every target still gets FUZZ_SECONDS of one core).
FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)}
built=()
for name in "${names[@]}"; do
    name=$(basename "${name%.c}")
    name=${name#fuzz_}
    src="tests/fuzz/fuzz_$name.c"
    if [ ! -e "$src" ]; then
        bad "fuzz_$name" "no $src"
        continue
    fi
    # shellcheck disable=SC2086
    if ! $FUZZ_CC $CFLAGS -fsanitize=fuzzer "$src" "$OUT"/obj/*.o $LIBS -o "$OUT/fuzz_$name"; then
        bad "fuzz_$name" "build failed"
        continue
    fi
    built+=("$name")
done
for name in "${built[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do
        wait -n
    done
    rm -f "$OUT/fuzz_$name.rc"
    run_one "$name" &
done
wait
for name in "${built[@]}"; do
    if [ "$(cat "$OUT/fuzz_$name.rc" 2>/dev/null)" = 0 ]; then
        ok "fuzz_$name $(cat "$OUT/fuzz_$name.result")"
    else
        bad "fuzz_$name" "$(cat "$OUT/fuzz_$name.result" 2>/dev/null || echo "no result")"
    fi
done
kt_finish
