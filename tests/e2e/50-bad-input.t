#!/usr/bin/env bash
# Bad command lines: each exits 2 with one line on stderr naming the problem,
# prints nothing on stdout, and leaves nothing behind on the host.
. "$(dirname "$0")/lib.sh"

# Each case: NEEDLE|ARG|ARG... (the arguments after 'crucible run'; '' is an
# empty argument). NEEDLE must appear (fixed string) in the one-line error.
CASES=$(cat <<'EOF'
--bogus|--bogus|--|/bin/true
-x|-x|--|/bin/true
PROGRAM
PROGRAM|--
PROGRAM|--json|--
PROGRAM|--cpu-time|1
--cpu-time|--cpu-time|abc|--|/bin/true
--cpu-time|--cpu-time|-1|--|/bin/true
--cpu-time|--cpu-time|0|--|/bin/true
--cpu-time|--cpu-time|nan|--|/bin/true
--cpu-time|--cpu-time|1e9|--|/bin/true
--cpu-time|--cpu-time|''|--|/bin/true
--cpu-time|--cpu-time|2s|--|/bin/true
--wall-time|--wall-time|0|--|/bin/true
--wall-time|--wall-time|inf|--|/bin/true
--memory|--memory|0|--|/bin/true
--memory|--memory|99999999999|--|/bin/true
--memory|--memory|64.5|--|/bin/true
--memory|--memory|0x40|--|/bin/true
--pids|--pids|1.5|--|/bin/true
--pids|--pids|0|--|/bin/true
--pids|--pids|-3|--|/bin/true
--output|--output|-1|--|/bin/true
--disk|--disk|0|--|/bin/true
wifi|--network|wifi|--|/bin/true
../x|--file|../x=/etc/hostname|--|/bin/true
/abs|--file|/abs=/etc/hostname|--|/bin/true
a/../../x|--file|a/../../x=/etc/hostname|--|/bin/true
./x|--file|./x=/etc/hostname|--|/bin/true
a//b|--file|a//b=/etc/hostname|--|/bin/true
/nonexistent|--file|x=/nonexistent|--|/bin/true
/etc|--file|x=/etc|--|/bin/true
NOEQUALS|--file|NOEQUALS|--|/bin/true
/nonexistent|--stdin|/nonexistent|--|/bin/true
/etc|--stdin|/etc|--|/bin/true
NOEQUALS|--env|NOEQUALS|--|/bin/true
=v|--env|=v|--|/bin/true
nonexistent|--image|nonexistent|--|/bin/true
PROGRAM|--|''
/nope|--|/nope
/nope|--json|--|/nope
nope-no-such-program|--|nope-no-such-program
/etc/hostname|--|/etc/hostname
EOF
)

n=$(grep -c '' <<<"$CASES")
plan $((n * 3 + 2))

before=$(state_snapshot)

while IFS='|' read -r -a f; do
    needle=${f[0]}
    args=()
    for a in "${f[@]:1}"; do
        [ "$a" == "''" ] && a=
        args+=("$a")
    done
    cru run "${args[@]}"
    shown="crucible run $(printf '%q ' "${args[@]}")"
    is "$RC" 2 "$shown: exit 2"
    if one_line "$ERR" && grep -qF -- "$needle" "$ERR"; then
        ok 0 "$shown: one-line error naming '$needle'"
    else
        ok 1 "$shown: one-line error naming '$needle'"
    fi
    # With --json a sandbox-side failure may still print its record; otherwise nothing.
    if [[ " ${args[*]} " == *" --json "* && -s $OUT ]]; then
        jcheck 'd["status"] != "ok" and d["message"] != ""' "$shown: the record, if any, is not ok and has a message"
    else
        is "$(wc -c <"$OUT")" 0 "$shown: nothing on stdout"
    fi
done <<<"$CASES"

cru run --memory 99999999999 -- /bin/true
unlike "$(cat "$ERR")" '[0-9]e[+][0-9]' "a range error states the bound exactly (1048576, not 1.04858e+06)"

is "$(state_leftovers "$before")" "" "no mount, sb-* cgroup or uid-65534 process left behind"
