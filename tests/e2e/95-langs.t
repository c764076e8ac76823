#!/usr/bin/python3
# SandboxFusion's interpreted and quickly compiled languages as rows of the language table
# (tests/e2e/langs.py says what is checked per language), and the names that are refused.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from langs import CASES, check_fidelity, check_language, check_multipl_e, serve  # noqa: E402
from taplib import done, ok  # noqa: E402

s = serve()
for lang in ("php", "ruby", "perl", "lua", "R", "racket", "typescript", "csharp", "D_ut",
             "verilog"):
    check_language(s, lang, CASES[lang])
check_multipl_e(s, ("php", "ruby", "perl", "lua", "R", "racket", "typescript", "csharp", "D_ut"))
check_fidelity(s)

# SandboxFusion's names crucible refuses: a 400 saying what is supported and why not these
for name in ("cuda", "python_gpu", "julia", "swift", "lean", "sql", "jest", "cobol"):
    st, j, text = s.post("/run_code", {"code": "x", "language": name})
    msg = ((j or {}).get("error") or {}).get("message", "")
    ok(st == 400 and ("'%s'" % name) in msg and "racket" in msg and "go_test" in msg
       and "junit" in msg,
       "language '%s': 400 listing the supported languages and modes" % name, text[:600])
s.stop()
done()
