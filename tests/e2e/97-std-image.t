#!/usr/bin/python3
# The standard image crucible/code (scripts/build-image): every row of the language table runs a
# hello program in it; what public datasets need is there (Boost, OpenSSL, the Rust crates,
# js-md5 and lodash, javatuples, Python's scientific stack); and `crucible eval --reference`
# accepts in it the HumanEval-X tasks the host lacks dependencies for (docs/DATASETS.md): C++
# 22, 137, 162; Rust 38, 50, 53, 91, 162; JavaScript 162.
#
# The image is found as $CRUCIBLE_STD_IMAGE, else scripts/build-image's default directory;
# everything is skipped, saying how to build it, when it is absent (building downloads GBs:
# it is never part of `make check`). The HumanEval-X part also needs ../shared/datasets.
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import CRUCIBLE, ROOT, done, ok, skip  # noqa: E402

# language row: (program printing "hello" and reading nothing, what it shows)
HELLO = {
    "python": "print('hello')\n",
    "c": "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n",
    "cpp": "#include <iostream>\nint main() { std::cout << \"hello\" << std::endl; }\n",
    "java": "public class Main {\n  public static void main(String[] a) {\n"
            "    System.out.println(\"hello\");\n  }\n}\n",
    "javascript": "console.log('hello');\n",
    "bash": "echo hello\n",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
    "rust": "fn main() { println!(\"hello\"); }\n",
    "php": "<?php\necho \"hello\\n\";\n",
    "ruby": "puts 'hello'\n",
    "perl": "print \"hello\\n\";\n",
    "lua": "print('hello')\n",
    "r": "cat('hello\\n')\n",
    "racket": "#lang racket\n(displayln \"hello\")\n",
    "typescript": "const s: string = 'hello';\nconsole.log(s);\n",
    "csharp": "class Program { static void Main() { System.Console.WriteLine(\"hello\"); } }\n",
    "d": "import std.stdio;\nvoid main() { writeln(\"hello\"); }\n",
    # (no $finish: Icarus Verilog 12 reports the call on stdout, 11 does not)
    "verilog": "module tb;\n  initial $display(\"hello\");\nendmodule\n",
    "scala": "object Main {\n  def main(args: Array[String]): Unit = println(\"hello\")\n}\n",
    "kotlin_script": "println(\"hello\")\n",
}

# What datasets need from the image, each through its language's row (printing "ok").
DEPS = {
    "cpp: Boost (boost/any.hpp) and OpenSSL's MD5 (-lcrypto)": (
        "cpp",
        "#include <boost/any.hpp>\n#include <openssl/md5.h>\n#include <cstdio>\n#include <cstring>\n"
        "int main() {\n  boost::any a = 1;\n  unsigned char d[16];\n  const char *s = \"x\";\n"
        "  MD5((const unsigned char *)s, strlen(s), d);\n"
        "  if (boost::any_cast<int>(a) == 1 && d[0] == 0x9d) puts(\"ok\");\n}\n"),
    "rust: the rand (0.7, HumanEval-X's API), regex and md5 crates": (
        "rust",
        "use rand::Rng;\nuse regex::Regex;\n"
        "fn main() {\n  let n: u32 = rand::thread_rng().gen_range(0, 10);\n"
        "  let re = Regex::new(r\"^a+b$\").unwrap();\n"
        "  let d = format!(\"{:x}\", md5::compute(b\"x\"));\n"
        "  if n < 10 && re.is_match(\"aab\") && d.starts_with(\"9dd4e461\") { println!(\"ok\"); }\n}\n"),
    "javascript: js-md5 and lodash from the npm registry": (
        "javascript",
        "const md5 = require('js-md5');\nconst _ = require('lodash');\n"
        "if (md5('x').startsWith('9dd4e461') && _.sum([1, 2]) === 3) console.log('ok');\n"),
    "java: javatuples": (
        "java",
        "import org.javatuples.Pair;\npublic class Main {\n  public static void main(String[] a) {\n"
        "    Pair<Integer, String> p = Pair.with(1, \"x\");\n"
        "    if (p.getValue0() == 1) System.out.println(\"ok\");\n  }\n}\n"),
    "python: numpy, scipy, pandas, sympy, requests": (
        "python",
        "import numpy, scipy.special, pandas, sympy, requests\n"
        "assert numpy.arange(3).sum() == 3 and pandas.Series([1, 2]).sum() == 3\n"
        "assert sympy.simplify('x + x') == 2 * sympy.Symbol('x')\nprint('ok')\n"),
}

# HumanEval-X tasks the host lacks dependencies for (docs/DATASETS.md)
HX_TARGETS = {"cpp": "22 137 162", "rust": "38 50 53 91 162", "js": "162"}


def find_image():
    """The image directory, or None."""
    cands = []
    if os.environ.get("CRUCIBLE_STD_IMAGE"):
        cands.append(os.environ["CRUCIBLE_STD_IMAGE"])
    elif os.geteuid() == 0:
        cands.append("/var/cache/crucible/images/code")
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
        cands.append(os.path.join(cache, "crucible/images/code"))
    for c in cands:
        if os.path.isfile(os.path.join(c, "crucible-manifest.json")):
            return os.path.realpath(c)
    return None


def evaluate(tasks, tmp, name):
    """crucible eval --reference of tasks (dicts): {id: (verdict, record)}."""
    tf = os.path.join(tmp, name + ".jsonl")
    rf = os.path.join(tmp, name + ".res")
    with open(tf, "w") as f:
        for t in tasks:
            f.write(json.dumps(t) + "\n")
    p = subprocess.run([CRUCIBLE, "eval", "--tasks", tf, "--reference", "-j", "2", "--quiet",
                        "--out", rf], capture_output=True, text=True)
    got = {}
    if os.path.exists(rf):
        for line in open(rf):
            d = json.loads(line)
            got[d["task_id"]] = (d["verdict"], d)
    return got, p.stderr


def brief(rec):
    """The parts of a verification record that say why it was not accepted."""
    out = {k: rec.get(k) for k in ("verdict", "message")}
    for step in ("compile",):
        if isinstance(rec.get(step), dict):
            out[step] = {k: rec[step].get(k) for k in ("status", "stderr", "message")}
    tests = rec.get("tests") or []
    if tests:
        out["first_test"] = tests[0]
    return json.dumps(out)[:2500]


NTESTS = len(HELLO) + len(DEPS) + 1 + sum(len(v.split()) for v in HX_TARGETS.values())
IMG = find_image()
if IMG is None:
    for _ in range(NTESTS):
        skip("standard image", "the standard image is not built (scripts/build-image; or set "
             "CRUCIBLE_STD_IMAGE to its directory)")
    done()
    sys.exit(0)

tmp = tempfile.mkdtemp(prefix="crucible-stdimage-")


def stdio_task(tid, lang, code, expected):
    return {"id": tid, "language": lang, "harness": "stdio", "image": IMG, "reference": code,
            "tests": [{"name": "t", "stdin": "", "expected": expected + "\n"}],
            "limits": {"wall_time": 60, "cpu_time": 30, "memory_mb": 1024}}


tasks = [stdio_task("hello/" + lang, lang, code, "hello") for lang, code in HELLO.items()]
tasks += [stdio_task("deps/%d" % i, lang, code, "ok")
          for i, (_, (lang, code)) in enumerate(DEPS.items())]
got, err = evaluate(tasks, tmp, "hello")
for lang in HELLO:
    v, rec = got.get("hello/" + lang, (None, {}))
    ok(v == "accepted", "%s: a hello program runs in the image" % lang, brief(rec) or err)
for i, desc in enumerate(DEPS):
    v, rec = got.get("deps/%d" % i, (None, {}))
    ok(v == "accepted", desc, brief(rec) or err)

HX = os.path.join(ROOT, "..", "shared", "datasets", "humaneval-x")
if not os.path.isdir(HX):
    for _ in range(1 + sum(len(v.split()) for v in HX_TARGETS.values())):
        skip("HumanEval-X in the standard image", "../shared/datasets not found")
    done()
    sys.exit(0)
tasks = []
for lang, ids in HX_TARGETS.items():
    conv = subprocess.run([CRUCIBLE, "tasks", "convert", "--from", "humaneval-x",
                           os.path.join(HX, "humaneval_%s.jsonl.gz" % lang)],
                          capture_output=True, text=True)
    keep = set(ids.split())
    for line in conv.stdout.splitlines():
        t = json.loads(line)
        if t["id"].rsplit("/", 1)[1] in keep:
            t["image"] = IMG
            tasks.append(t)
ok(len(tasks) == sum(len(v.split()) for v in HX_TARGETS.values()),
   "HumanEval-X: the %d target tasks converted" % len(tasks))
got, err = evaluate(tasks, tmp, "hx")
for t in tasks:
    v, rec = got.get(t["id"], (None, {}))
    ok(v == "accepted", "%s: reference accepted in the standard image" % t["id"],
       brief(rec) or err)
subprocess.run(["rm", "-rf", tmp])
done()
