#!/usr/bin/env bash
# Output that is not UTF-8: escaped text plus the exact bytes in *_base64.
. "$(dirname "$0")/lib.sh"

plan 12

# dash's printf has no \x escapes: use octal (\377 = 0xff, \376 = 0xfe).
cru run --json -- /bin/sh -c "printf '\377\376ok'"
is "$RC" 0 "printf '\\xff\\xfeok': exit 0"
is "$(jf stdout)" '\xff\xfeok' "stdout is escaped as \\xHH text"
jcheck 'base64.b64decode(d["stdout_base64"]) == b"\xff\xfeok"' "stdout_base64 decodes to the exact bytes"
jcheck '"stderr_base64" not in d' "no stderr_base64 when stderr is valid (empty)"

cru run --json -- /usr/bin/printf '\xff\xfeok'
jcheck 'd["stdout"] == "\\xff\\xfeok" and base64.b64decode(d["stdout_base64"]) == b"\xff\xfeok"' \
    "the same through /usr/bin/printf's own \\x escapes"

cru run --json -- /bin/sh -c "printf 'caf\303\251 \342\202\254\n'; printf 'bad \200\n' >&2"
jcheck 'd["stdout"] == "café €\n" and "stdout_base64" not in d' "valid UTF-8 is kept as is, no base64"
jcheck 'd["stderr"] == "bad \\x80\n" and base64.b64decode(d["stderr_base64"]) == b"bad \x80\n"' \
    "invalid stderr: escaped text and stderr_base64"

cru run --json -- /bin/sh -c "printf 'a\000b'"
jcheck 'base64.b64decode(d["stdout_base64"]) == b"a\x00b" and "\x00" not in d["stdout"]' \
    "a NUL byte: exact bytes in stdout_base64, none raw in the text"

# Overlong / surrogate encodings are not UTF-8 either.
cru run --json -- /bin/sh -c "printf '\300\257\355\240\200'"
jcheck 'base64.b64decode(d["stdout_base64"]) == b"\xc0\xaf\xed\xa0\x80" and "\\x" in d["stdout"]' \
    "overlong and surrogate sequences are escaped"

# A cut in the middle of a multi-byte character at the output cap.
cru run --json --output 1 -- /usr/bin/python3 -c 'import sys; sys.stdout.write("€" * 1000)'
jcheck 'd["status"] == "output_limit" and len(base64.b64decode(d.get("stdout_base64", ""))) == 1024' \
    "truncated mid-character: stdout_base64 holds exactly the 1024 bytes kept"
jcheck 'base64.b64decode(d["stdout_base64"]) == ("€" * 1000).encode()[:1024]' "and they are the program's bytes"

cru run -- /bin/sh -c "printf '\377\376ok'"
is "$(od -An -tx1 <"$OUT" | tr -d ' \n')" "fffe6f6b" "without --json the raw bytes pass through unchanged"
