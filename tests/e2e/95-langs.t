#!/usr/bin/python3
# SandboxFusion's interpreted and quickly compiled languages as rows of the language table
# (tests/e2e/langs.py says what is checked per language), and the names that are refused.
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from langs import CASES, check_fidelity, check_language, check_multipl_e, serve, verify  # noqa: E402
from taplib import done, ok, skip  # noqa: E402

s = serve()
for lang in ("php", "ruby", "perl", "lua", "R", "racket", "typescript", "csharp", "D_ut",
             "verilog"):
    check_language(s, lang, CASES[lang])
check_multipl_e(s, ("php", "ruby", "perl", "lua", "R", "racket", "typescript", "csharp", "D_ut"))
check_fidelity(s)

# crucible verify guesses a new language from the solution file's extension (no --language):
# a Verilog test bench in tb.v (.v was not known to the extension map)
if os.path.exists(CASES["verilog"][0]):
    rc, j, err = verify(None, CASES["verilog"][3], name="tb.v")
    ok(rc == 0 and j and j["verdict"] == "accepted" and j.get("language") == "verilog",
       "crucible verify --solution tb.v (no --language): verilog, accepted",
       "%s %s %s" % (rc, json.dumps(j)[:600], err[:400]))
else:
    skip("crucible verify --solution tb.v", "iverilog is not installed")

# SandboxFusion's names crucible refuses: a 400 saying what is supported and why not these
for name in ("cuda", "python_gpu", "julia", "swift", "lean", "sql", "jest", "cobol"):
    st, j, text = s.post("/run_code", {"code": "x", "language": name})
    msg = ((j or {}).get("error") or {}).get("message", "")
    ok(st == 400 and ("'%s'" % name) in msg and "racket" in msg and "go_test" in msg
       and "junit" in msg,
       "language '%s': 400 listing the supported languages and modes" % name, text[:600])
s.stop()
done()
