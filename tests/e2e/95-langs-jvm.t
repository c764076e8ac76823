#!/usr/bin/python3
# SandboxFusion's slower toolchains (JVM languages, Go tests with an empty build cache) and
# its test modes go_test and junit (tests/e2e/langs.py says what is checked).
# CRUCIBLE_SKIP_SLOW_TOOLCHAINS=1 skips Scala and Kotlin, whose compilers take most of the time
# and run no crucible code that the other languages do not (CI's sanitizer leg sets it).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from langs import CASES, MODES, check_language, serve, skip_language  # noqa: E402
from taplib import done  # noqa: E402

s = serve()
for lang in ("scala", "kotlin_script"):
    if os.environ.get("CRUCIBLE_SKIP_SLOW_TOOLCHAINS"):
        skip_language(lang, "CRUCIBLE_SKIP_SLOW_TOOLCHAINS is set (CI runs it in its plain leg)")
    else:
        check_language(s, lang, CASES[lang])
for mode in ("junit", "go_test"):
    check_language(s, mode, MODES[mode], mode=True)
s.stop()
done()
