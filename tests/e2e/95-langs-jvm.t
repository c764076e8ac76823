#!/usr/bin/python3
# SandboxFusion's slower toolchains (JVM languages, Go tests with an empty build cache) and
# its test modes go_test and junit (tests/e2e/langs.py says what is checked).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from langs import CASES, MODES, check_language, serve  # noqa: E402
from taplib import done  # noqa: E402

s = serve()
for lang in ("scala", "kotlin_script"):
    check_language(s, lang, CASES[lang])
for mode in ("junit", "go_test"):
    check_language(s, mode, MODES[mode], mode=True)
s.stop()
done()
