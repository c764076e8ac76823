#!/usr/bin/env bash
# The fuzz targets (fuzz/NAME.c) replayed over the inputs that once crashed them
# (fuzz/regress/NAME/) and over their committed seeds (fuzz/corpus/NAME/), with the suite's
# own compiler and sanitizers: `make check` builds BUILD/fuzz/NAME with fuzz/replay.c's main.
# Each target is one test; a crash, a sanitizer report, an abort or a hang fails it. docs/TESTING.md
# ("Fuzzing") says how an input gets here.
. "$(dirname "$0")/lib.sh"

: "${CRUCIBLE_BUILD:=$REPO_ROOT/build}"
names=()
for f in "$REPO_ROOT"/fuzz/*.c; do
    n=$(basename "$f" .c)
    [ "$n" = replay ] || names+=("$n")
done
plan "${#names[@]}"
for n in "${names[@]}"; do
    bin=$CRUCIBLE_BUILD/fuzz/$n
    if [ ! -x "$bin" ]; then
        skip "fuzz target $n replays its inputs" "$bin is not built (make fuzz-replay)"
        continue
    fi
    dirs=()
    for d in "$REPO_ROOT/fuzz/regress/$n" "$REPO_ROOT/fuzz/corpus/$n"; do
        [ -d "$d" ] && dirs+=("$d")
    done
    # a hang is a finding too (fuzz/run gives an input 10 s; this, under any load, 120 s)
    (cd "$T" && TMPDIR=$T timeout -k 5 120 "$bin" "${dirs[@]}") >"$OUT" 2>"$ERR"
    RC=$?
    LAST_CMD="$bin ${dirs[*]}"
    ok "$RC" "fuzz target $n replays $(grep -o '[0-9]* inputs' "$OUT" || echo "its inputs") ($(ls "$REPO_ROOT/fuzz/regress/$n" 2>/dev/null | wc -l) regressions)"
    [ "$RC" -eq 0 ] || _tap_last_run
done
