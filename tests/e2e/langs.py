"""The languages and test modes of SandboxFusion's /run_code (95-langs.t, 95-langs-jvm.t).

Per language, through a real `crucible serve`: a correct program reading stdin answers
Success with its output; a compile error is a failed compile_result and no run (languages
that compile) or a failed run (interpreters, as SandboxFusion answers them); a runtime
error is a Failed run with the program's exit status. Then `crucible verify --language` of
a stdio task with the correct program is accepted and a wrong one is not. A language whose
toolchain is not installed is skipped, saying which package scripts/install-deps adds."""
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from serverlib import Server, tmpdir
from taplib import CRUCIBLE, ok, skip

TMP = tmpdir("crucible-langs-")

# name: (toolchain path, package, compiles?, correct (stdin "3 4" -> "7"), compile error,
#        runtime error)
CASES = {
    "php": ("/usr/bin/php", "php-cli", False,
            # no <?php tag: SandboxFusion adds it
            "$l = explode(' ', trim(fgets(STDIN)));\necho $l[0] + $l[1], \"\\n\";\n",
            "<?php\necho 1\nfoo(;\n",
            "<?php\nthrow new Exception('boom');\n"),
    "ruby": ("/usr/bin/ruby", "ruby", False,
             "a, b = gets.split.map(&:to_i)\nputs a + b\n",
             "def f(\n",
             "raise 'boom'\n"),
    "perl": ("/usr/bin/perl", "perl", False,
             "my ($a, $b) = split ' ', <STDIN>;\nprint $a + $b, \"\\n\";\n",
             "my $x = (1 + ;\n",
             "die 'boom';\n"),
    "lua": ("/usr/bin/lua5.2", "lua5.2", False,
            "local a, b = io.read('*n', '*n')\nprint(string.format('%d', a + b))\n",
            "local x = (1 +\n",
            "error('boom')\n"),
    "R": ("/usr/bin/Rscript", "r-base-core", False,
          "v <- scan(file('stdin'), quiet = TRUE)\ncat(sum(v), '\\n', sep = '')\n",
          "x <- (1 +\n",
          "stop('boom')\n"),
    "racket": ("/usr/bin/racket", "racket", False,
               "#lang racket\n(displayln (+ (read) (read)))\n",
               "#lang racket\n(define (f x) (+ x 1)\n",
               "#lang racket\n(error 'boom)\n"),
    "typescript": ("/usr/share/nodejs/typescript/package.json", "node-typescript", False,
                   # a type error runs (tsx does not check types); a syntax error does not
                   "const s: string = require('fs').readFileSync(0, 'utf8');\n"
                   "const n: number = 'not checked' as any;\n"
                   "console.log(s.trim().split(' ').map(Number).reduce((a, b) => a + b));\n",
                   "const x: number = (1 + ;\n",
                   "function f(): number { throw new Error('boom'); }\nf();\n"),
    "csharp": ("/usr/bin/mcs", "mono-mcs", True,
               "using System;\nusing System.Linq;\nclass Program {\n  static void Main() {\n"
               "    Console.WriteLine(Console.ReadLine().Split(' ').Select(int.Parse).Sum());\n"
               "  }\n}\n",
               "class Program { static void Main() { int x = ; } }\n",
               "class Program { static void Main() { throw new System.Exception(\"boom\"); } }\n"),
    "D_ut": ("/usr/bin/ldmd2", "ldc", True,
             "import std.stdio, std.string, std.conv, std.array, std.algorithm;\n"
             "void main() { writeln(readln.strip.split.map!(to!int).sum); }\n",
             "void main() { int x = ; }\n",
             # D_ut: a failed unittest block fails the run
             "int add(int a, int b) { return a - b; }\nunittest { assert(add(1, 2) == 3); }\n"
             "void main() {}\n"),
    "verilog": ("/usr/bin/iverilog", "iverilog", True,
                # the test bench tb reads nothing: it prints the sum of constants
                "module tb;\n  initial begin\n    $display(\"%0d\", 3 + 4);\n    $finish;\n"
                "  end\nendmodule\n",
                "module tb;\n  initial begin\n    $display(\"7\")\n  end\nendmodule\n",
                "module tb;\n  initial $fatal(1, \"boom\");\nendmodule\n"),
    "scala": ("/usr/bin/scalac", "scala", True,
              "object Solution {\n  def main(args: Array[String]): Unit =\n"
              "    println(scala.io.StdIn.readLine().trim.split(\" \").map(_.toInt).sum)\n}\n",
              "object Solution {\n  def main(args: Array[String]): Unit = { val x = ; }\n}\n",
              "object Solution {\n  def main(args: Array[String]): Unit =\n"
              "    throw new RuntimeException(\"boom\")\n}\n"),
    "kotlin_script": ("/usr/bin/kotlinc", "kotlin", False,
                      "val (a, b) = readLine()!!.trim().split(\" \").map { it.toInt() }\n"
                      "println(a + b)\n",
                      "val x = \n",
                      "throw RuntimeException(\"boom\")\n"),
}

# The test modes: (toolchain, package, compiles?, passing, failing to build, failing a test).
GO_TEST = """package main

import (
\t"testing"

\t"github.com/stretchr/testify/assert"
)

func Add(a, b int) int { return a + b }

func TestAdd(t *testing.T) {
\tassert.New(t).Equal(%s, Add(3, 4))
}
"""
JUNIT = """import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.*;

public class Adder {
    public static int add(int a, int b) { return a + %s; }
}

class AdderTest {
    @Test
    void testAdd() { assertEquals(7, Adder.add(3, 4)); }
}
"""
MODES = {
    "go_test": ("/usr/bin/go", "golang-go", False, GO_TEST % "7", GO_TEST % "7 +", GO_TEST % "8"),
    "junit": ("/usr/share/java/junit-platform-console-standalone.jar", "junit5", True,
              JUNIT % "b", JUNIT % "", JUNIT % "b + 1"),
}


# The toolchains' patience. A JVM compile, a Kotlin script or `go test` with an empty build
# cache takes seconds alone but minutes on a loaded machine (CI shares its CPUs; the workspace
# runs several suites at once), so the limits here are far above any working run: these tests
# check what each language answers, never how fast. A limit that a loaded machine can reach
# turns into a false TimeLimitExceeded.
COMPILE_S = 600
RUN_S = 600


def serve(*args):
    """A server with the toolchains' patience: it waits for a slot without the /run_code
    start deadline (--run-code-margin 0: the requests here queue behind slow compiles, and a
    504 would say nothing about the language), as long as the limits for an answer, and 60 s
    to stop."""
    return Server("--run-code-margin", "0", *args, tmp=TMP, quiet=False,
                  timeout=COMPILE_S + RUN_S + 300, stop_timeout=60)


def run_code(s, lang, code):
    # SandboxFusion's request shape, as verl sends it
    return s.post("/run_code", {"code": code, "language": lang, "stdin": "3 4\n",
                                "compile_timeout": COMPILE_S, "run_timeout": RUN_S,
                                "memory_limit_MB": 2048, "files": {}, "fetch_files": []})


def verify(lang, code, name=None):
    """crucible verify of the stdio task "3 4" -> "7" with code as the solution: with
    --language lang, or (lang None) in a file `name` whose extension names the language."""
    task = {"id": "langs/sum", "language": "python", "harness": "stdio",
            "limits": {"cpu_time": RUN_S, "wall_time": RUN_S, "memory_mb": 2048},
            "tests": [{"name": "a", "stdin": "3 4\n", "expected": "7\n"},
                      {"name": "b", "stdin": "3 4\n", "expected": "7\n"}]}
    tf = os.path.join(TMP, "task-%s-%d.json" % (lang, time.monotonic_ns()))  # one per call: two run at once
    sf = os.path.join(TMP, "sol-%s-%d" % (lang, time.monotonic_ns()))
    if name:
        os.mkdir(sf)
        sf = os.path.join(sf, name)
    open(tf, "w").write(json.dumps(task))
    open(sf, "w").write(code)
    p = subprocess.run([CRUCIBLE, "verify", "--task", tf, "--solution", sf]
                       + (["--language", lang] if lang else []),
                       capture_output=True, text=True, timeout=4 * RUN_S)
    try:
        return p.returncode, json.loads(p.stdout), p.stderr
    except ValueError:
        return p.returncode, None, p.stdout + p.stderr


def brief(j):
    return json.dumps({k: (j or {}).get(k) for k in ("status", "message", "compile_result",
                                                     "run_result")})[:1500]


def skip_language(lang, why, mode=False):
    """Skips every check check_language makes of lang, saying why."""
    for what in ("correct", "compile error", "runtime error") + (() if mode else ("verify",)):
        skip("%s: %s" % (lang, what), why)


def check_language(s, lang, case, mode=False):
    tool, pkg, compiles, good, bad_build, bad_run = case
    if not os.path.exists(tool):
        skip_language(lang, "%s is not installed (scripts/install-deps: %s)" % (tool, pkg), mode)
        return
    with ThreadPoolExecutor(3) as ex:
        good_f = ex.submit(run_code, s, lang, good)
        build_f = ex.submit(run_code, s, lang, bad_build)
        run_f = ex.submit(run_code, s, lang, bad_run)
        st, j, text = good_f.result()
        cr = (j or {}).get("compile_result")
        rr = (j or {}).get("run_result") or {}
        ok(st == 200 and j["status"] == "Success" and rr.get("return_code") == 0
           and (mode or rr.get("stdout") == "7\n") and (cr is not None) == compiles,
           "%s: a correct %s: Success%s" % (lang, "test file" if mode else "program reading stdin",
                                           "" if mode else " printing 7"), brief(j))
        st, j, text = build_f.result()
        cr = (j or {}).get("compile_result") or {}
        rr = (j or {}).get("run_result")
        if compiles:
            good_shape = cr.get("return_code") not in (0, None) and rr is None
        else:
            # no compile step, as in SandboxFusion: the run fails
            good_shape = (j or {}).get("compile_result") is None and rr and rr["return_code"] != 0
        ok(st == 200 and j["status"] == "Failed" and good_shape and
           ((cr.get("stderr") or "") + ((rr or {}).get("stderr") or "")
            + ((rr or {}).get("stdout") or "")).strip() != "",
           "%s: a compile error: Failed, %s, with the compiler's message" % (
               lang, "in compile_result, not run" if compiles else "in run_result"), brief(j))
        st, j, text = run_f.result()
        rr = (j or {}).get("run_result") or {}
        ok(st == 200 and j["status"] == "Failed" and rr.get("status") == "Finished"
           and rr.get("return_code") not in (0, None),
           "%s: a %s: Failed, with a non-zero exit status" % (
               lang, "failing test" if mode else "runtime error"), brief(j))
    if mode:
        return
    if lang == "verilog":
        good_v, bad_v = good, good.replace("3 + 4", "3 + 5")
    else:
        good_v, bad_v = good, bad_run
    with ThreadPoolExecutor(2) as ex:
        a = ex.submit(verify, lang, good_v)
        b = ex.submit(verify, lang, bad_v)
        rc, j, err = a.result()
        rc2, j2, err2 = b.result()
    ok(rc == 0 and j and j["verdict"] == "accepted" and rc2 == 1 and j2
       and j2["verdict"] != "accepted",
       "%s: crucible verify --language %s of a stdio task: accepted; a wrong one is not" % (
           lang, lang), "%s %s %s / %s %s" % (rc, json.dumps(j)[:800], err[:400], rc2,
                                            json.dumps(j2)[:400]))


# MultiPL-E-style programs (HumanEval/0, has_close_elements: a solution, then the tests in the
# shape MultiPL-E gives each language, as SandboxFusion's request code sends them), each with
# a right and a wrong solution, and what SandboxFusion answers for each: Success or Failed
# from its runner's exit status. Racket's rackunit reports a failed check on stderr and exits 0,
# so SandboxFusion answers Success for the wrong one too, and so must crucible.
HCE = {
    "php": ("<?php\nfunction has_close_elements($numbers, $threshold) {\n"
            "  for ($i = 0; $i < count($numbers); $i++)\n"
            "    for ($j = $i + 1; $j < count($numbers); $j++)\n"
            "      if (abs($numbers[$i] - $numbers[$j]) < $threshold) return %s;\n"
            "  return %s;\n}\n\n"
            "function candidate(...$args) {\n    return has_close_elements(...$args);\n}\n\n"
            "function test(): void {\n"
            "    if (candidate(array(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.3) !== true) { throw new "
            "Exception(\"Test failed!\"); }\n"
            "    if (candidate(array(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.05) !== false) { throw new "
            "Exception(\"Test failed!\"); }\n}\n\ntest();"),
    "ruby": ("def has_close_elements(numbers, threshold)\n"
             "  numbers.combination(2).each { |a, b| return %s if (a - b).abs < threshold }\n"
             "  %s\nend\n"
             "require 'test/unit'\nclass TestHumanEval < Test::Unit::TestCase\n"
             "  def test_has_close_elements\n    candidate = method(:has_close_elements)\n"
             "    assert_equal(true, candidate.call([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3))\n"
             "    assert_equal(false, candidate.call([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05))\n"
             "  end\nend\n"),
    "perl": ("sub has_close_elements {\n  my ($numbers, $threshold) = @_;\n"
             "  for my $i (0..$#$numbers) { for my $j ($i+1..$#$numbers) {\n"
             "    return %s if abs($numbers->[$i] - $numbers->[$j]) < $threshold; } }\n"
             "  return %s;\n}\n\nuse Test::Deep;\n\n\nsub testhumaneval {\n"
             "    my $candidate = \\&has_close_elements;\n"
             "        if(eq_deeply($candidate->([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),1)) {\n"
             "        print \"ok!\" }else{\n        exit 1;\n        }\n"
             "        if(eq_deeply($candidate->([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05),\"\")) {\n"
             "        print \"ok!\" }else{\n        exit 1;\n        }\n}\n\ntesthumaneval();"),
    "lua": ("local function has_close_elements(numbers, threshold)\n"
            "  for i = 1, #numbers do\n    for j = i + 1, #numbers do\n"
            "      if math.abs(numbers[i] - numbers[j]) < threshold then return %s end\n"
            "    end\n  end\n  return %s\nend\n"
            "lu = require('luaunit')\n\nfunction test_humaneval()\n"
            "local candidate = has_close_elements\n"
            "    lu.assertEquals(candidate({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.3), true)\n"
            "    lu.assertEquals(candidate({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.05), false)\n"
            "end\n\nos.exit(lu.LuaUnit.run())"),
    "R": ("has_close_elements <- function(numbers, threshold) {\n"
          "  for (i in seq_along(numbers)) for (j in seq_along(numbers))\n"
          "    if (i != j && abs(numbers[i] - numbers[j]) < threshold) return(%s)\n"
          "  return(%s)\n}\n"
          "test_humaneval <- function() {\ncandidate <- has_close_elements\n"
          "    if(!identical(candidate(c(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.3), TRUE)){quit('no', 1)}\n"
          "    if(!identical(candidate(c(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.05), FALSE)){quit('no', 1)}\n"
          "}\ntest_humaneval()"),
    "racket": ("#lang racket\n\n(define (has_close_elements numbers threshold)\n"
               "  (for*/or ([(a i) (in-indexed numbers)] [(b j) (in-indexed numbers)])\n"
               "    (and (< i j) (< (abs (- a b)) threshold) %s)))\n(define unused %s)\n"
               "(require rackunit)\n\n(define (test-humaneval) \n"
               "  (let (( candidate has_close_elements))\n"
               "    (check-equal? (candidate (list 1.0 2.0 3.9 4.0 5.0 2.2) 0.3) #t)\n"
               "    (check-equal? (candidate (list 1.0 2.0 3.9 4.0 5.0 2.2) 0.05) #f)\n))\n\n"
               "(test-humaneval)"),
    "typescript": ("function has_close_elements(numbers: number[], threshold: number): boolean {\n"
                   "  for (let i = 0; i < numbers.length; i++)\n"
                   "    for (let j = i + 1; j < numbers.length; j++)\n"
                   "      if (Math.abs(numbers[i] - numbers[j]) < threshold) return %s;\n"
                   "  return %s;\n}\n\n"
                   "declare var require: any;\nconst assert = require('node:assert');\n\n\n"
                   "function test() {\n  let candidate = has_close_elements;\n"
                   "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),true);\n"
                   "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05),false);\n"
                   "}\n\ntest();"),
    "csharp": ("using System;\nusing System.Numerics;\nusing System.Diagnostics;\n"
               "using System.Collections.Generic;\nusing System.Linq;\nusing System.Text;\n"
               "using System.Security.Cryptography;\nclass Problem {\n"
               "    public static bool HasCloseElements(List<float> numbers, float threshold) {\n"
               "        for (int i = 0; i < numbers.Count; i++)\n"
               "            for (int j = i + 1; j < numbers.Count; j++)\n"
               "                if (Math.Abs(numbers[i] - numbers[j]) < threshold) return %s;\n"
               "        return %s;\n    }\n"
               "    public static void Main(string[] args) {\n"
               "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.0f, "
               "(float)2.0f, (float)3.9f, (float)4.0f, (float)5.0f, (float)2.2f})), (0.3f)) == (true));\n"
               "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.0f, "
               "(float)2.0f, (float)3.9f, (float)4.0f, (float)5.0f, (float)2.2f})), (0.05f)) == (false));\n"
               "    }\n\n}\n"),
    "D_ut": ("import std.math;\nimport std.typecons;\n"
             "bool has_close_elements(float[] numbers, float threshold) {\n"
             "    foreach (i; 0 .. numbers.length)\n        foreach (j; i + 1 .. numbers.length)\n"
             "            if (abs(numbers[i] - numbers[j]) < threshold) return %s;\n"
             "    return %s;\n}\n\nunittest\n{\n    alias candidate = has_close_elements;\n\n"
             "    assert(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == true);\n"
             "    assert(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == false);\n}\n"
             "void main(){}"),
}
TRUTH = {"php": ("true", "false"), "ruby": ("true", "false"), "perl": ("1", "''"),
         "lua": ("true", "false"), "R": ("TRUE", "FALSE"), "racket": ("#t", "#f"),
         "typescript": ("true", "false"), "csharp": ("true", "false"), "D_ut": ("true", "false")}


def check_multipl_e(s, langs):
    """Each language's MultiPL-E-style pair: the outcome SandboxFusion's runner gives."""
    jobs = []
    for lang in langs:
        if not os.path.exists(CASES[lang][0]):
            skip("%s: MultiPL-E-style samples" % lang, "%s is not installed" % CASES[lang][0])
            continue
        t, f = TRUTH[lang]
        right = HCE[lang] % (t, f)
        wrong = HCE[lang] % (f, f)  # never close: the first test fails
        want_wrong = "Success" if lang == "racket" else "Failed"
        jobs.append((lang, right, "Success", "right"))
        jobs.append((lang, wrong, want_wrong, "wrong"))
    with ThreadPoolExecutor(4) as ex:
        futs = [(lang, want, what, ex.submit(s.post, "/run_code",
                                             {"code": code, "language": lang, "run_timeout": RUN_S,
                                              "compile_timeout": COMPILE_S,
                                              "memory_limit_MB": 2048}))
                for lang, code, want, what in jobs]
        for lang, want, what, fut in futs:
            st, j, text = fut.result()
            ok(st == 200 and j["status"] == want,
               "%s: MultiPL-E-style HumanEval/0, %s solution: %s, as SandboxFusion answers" % (
                   lang, what, want), brief(j))


GO_VET = """package main

import (
\t"fmt"
\t"testing"
)

func Show() string { return fmt.Sprintf("%%d", %s) }

func TestShow(t *testing.T) {
\tif Show() == "" {
\t\tt.Fatal("empty")
\t}
}
"""

# What SandboxFusion's runners give that crucible once did not (found by bench/multiple-e on
# SandboxFusion's MultiPL-E samples; docs/DATASETS.md): (language, file that must exist,
# package, code, SandboxFusion's status, stdout wanted or None, what it checks).
FIDELITY = [
    ("php", "/etc/php", "php-cli",
     "<?php\necho ctype_alpha('abc') && ctype_upper('A') && !ctype_lower('A') ? 'yes' : 'no', "
     "\"\\n\";\n",
     "Success", "yes\n", "php: Debian's extension modules are loaded (ctype_alpha)"),
    ("java", "/usr/share/java/javatuples.jar", "libjavatuples-java",
     "import org.javatuples.*;\nclass Main {\n  public static void main(String[] a) {\n"
     "    Pair<Integer, String> p = Pair.with(1, \"a\");\n    assert p.getValue0() == 1;\n"
     "    System.out.println(p);\n  }\n}\n",
     "Success", "[1, a]\n", "java: org.javatuples is on the class path"),
    ("cpp", "/usr/include/boost/any.hpp", "libboost-dev",
     "#include <boost/any.hpp>\n#include <cassert>\n#include <iostream>\n"
     "int main() { boost::any x = 3; assert(boost::any_cast<int>(x) == 3);"
     " std::cout << \"any\\n\"; }\n",
     "Success", "any\n", "cpp: <boost/any.hpp> (in MultiPL-E's C++ header list)"),
    ("cpp", "/usr/include/openssl/md5.h", "libssl-dev",
     "#include <openssl/md5.h>\n#include <cstdio>\nint main() { unsigned char d[16];"
     " MD5((const unsigned char *)\"a\", 1, d); printf(\"%02x\\n\", d[0]); }\n",
     "Success", "0c\n", "cpp: OpenSSL's libcrypto is linked (MD5), as SandboxFusion links it"),
    ("rust", "/usr/bin/rustc", "rustc",
     "fn main() {\n    let x: u8 = 255;\n    let y = x + std::env::args().count() as u8;\n"
     "    println!(\"{}\", y);\n}\n",
     "Failed", None, "rust: a debug build, as SandboxFusion's rustc FILE (an overflow panics)"),
    ("go_test", "/usr/share/gocode/src/github.com/stretchr/testify",
     "golang-github-stretchr-testify-dev", GO_VET % '"x"', "Failed", None,
     "go_test: go vet's checks run (a Printf verb of the wrong type fails the test)"),
    ("go_test", "/usr/share/gocode/src/github.com/stretchr/testify",
     "golang-github-stretchr-testify-dev", GO_VET % "3", "Success", None,
     "go_test: ... the same test without the finding passes"),
]


def check_fidelity(s):
    with ThreadPoolExecutor(2) as ex:
        futs = []
        for lang, need, pkg, code, want, out, what in FIDELITY:
            if not os.path.exists(need):
                skip(what, "%s is not installed (scripts/install-deps: %s)" % (need, pkg))
                continue
            futs.append((want, out, what, ex.submit(
                s.post, "/run_code", {"code": code, "language": lang, "run_timeout": RUN_S,
                                      "compile_timeout": COMPILE_S, "memory_limit_MB": 2048})))
        for want, out, what, fut in futs:
            st, j, text = fut.result()
            rr = (j or {}).get("run_result") or {}
            ok(st == 200 and j["status"] == want and (out is None or rr.get("stdout") == out),
               "%s: %s, as SandboxFusion answers" % (what, want), brief(j))
