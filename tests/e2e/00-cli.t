#!/usr/bin/env bash
# crucible's command line: help texts, unknown commands, --check.
. "$(dirname "$0")/lib.sh"

plan 17

check "the binary exists and is executable ($CRUCIBLE)" test -x "$CRUCIBLE"

cru --help
is "$RC" 0 "crucible --help exits 0"
like "$(cat "$OUT")" $'\n +run +' "crucible --help lists the 'run' command"

cru -h
is "$RC" 0 "crucible -h exits 0"

cru run --help
is "$RC" 0 "crucible run --help exits 0"
missing=
for opt in --image --cpu-time --wall-time --memory --pids --output --disk --stdin \
    --file --env --network --json --check --help; do
    grep -q -e "$opt" "$OUT" || missing="$missing $opt"
done
is "$missing" "" "crucible run --help lists every option"
like "$(cat "$OUT")" 'none[|]loopback' "crucible run --help names the --network values"
like "$(cat "$OUT")" 'exit status' "crucible run --help documents the exit status"
# Ranges are exact numbers: '1.04858e+06' is not the real bound of 1048576.
unlike "$(cat "$OUT")" '[0-9]e[+][0-9]' "crucible run --help shows the bounds as plain numbers, not rounded %g"

cru run -h
is "$RC" 0 "crucible run -h exits 0"

cru bogus
is "$RC" 2 "crucible bogus exits 2"
check "crucible bogus: one-line error naming the command" \
    bash -c 'grep -q "bogus" "$1" && [ "$(grep -c "" "$1")" -eq 1 ]' _ "$ERR"

cru
is "$RC" 2 "crucible without a command exits 2"
is "$(wc -c <"$OUT")" 0 "crucible without a command prints nothing on stdout"

cru run --check
is "$RC" 0 "crucible run --check exits 0"
like "$(cat "$OUT")" 'namespaces:' "crucible run --check reports the namespaces"
like "$(cat "$OUT")" 'memory:' "crucible run --check reports the memory limit's enforcement"
