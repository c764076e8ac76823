/*
 * lang.c — the language table (see lang.h). Adding a language is adding a row.
 *
 * Compiled programs are built with optimisation as judges do; Java runs without the
 * perf-data file (it would need flock, which the sandbox denies, and costs start-up time)
 * and with assertions enabled (-ea), as judges and SandboxFusion run it. A Java program's
 * file and main class come from its text (java.h), whatever they are called.
 */
#include "judge/lang.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "judge/java.h"

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The assert harness's own code, one file per language (src/judge/harness/, embedded by the
 * Makefile). Each is written beside the program of every assert run; the comment at the top
 * of each says what it guarantees. */
static const char harness_python[] =
#include "judge/harness/python.py.inc"
    ;

/* The Python harness compiled by the build's interpreter (hash-based, unchecked): an image whose
 * Python has the same cache tag imports it instead of compiling the source on every run (the
 * compile cost more than the harness's own work). HARNESS_PYC_PATH is NULL when the build had
 * no python3. */
#include "judge/harness/python.pyc.inc"

static const char harness_javascript[] =
#include "judge/harness/javascript.js.inc"
    ;

static const struct lang_file files_javascript[] = {
    {"_crucible_harness.js", harness_javascript, 0},
    {NULL, NULL, 0},
};

static const char harness_c[] =
#include "judge/harness/c.c.inc"
    ;

static const struct lang_file files_c[] = {
    {"_crucible_harness.c", harness_c, 0},
    {NULL, NULL, 0},
};

/* C and C++: between the solution (whose own macros crucible #undefs first: test_undef_macros)
 * and the test code. The test code's main and assert are its own again, and a failed assert
 * goes to the harness (judge/harness/c.c), not to an __assert_fail the solution may define. */
#define C_PROLOGUE                                                                                 \
    "#undef main\n#undef assert\n#undef NDEBUG\n#undef __assert_fail\n"                            \
    "#undef __crucible_assert_fail\n"                                                              \
    "#ifdef __cplusplus\n"                                                                         \
    "extern \"C\" void __crucible_assert_fail(const char *, const char *, unsigned int, "          \
    "const char *) noexcept __attribute__((__noreturn__));\n"                                      \
    "#else\n"                                                                                      \
    "extern void __crucible_assert_fail(const char *, const char *, unsigned int, const char *) "  \
    "__attribute__((__nothrow__, __noreturn__));\n"                                                \
    "#endif\n"                                                                                     \
    "#define __assert_fail __crucible_assert_fail\n"                                               \
    "#include <assert.h>\n"

/* C++: which of OpenSSL's crypto and ssl and pthread the image has (g++ finds the .so), as -l
 * flags in $L for g++'s command line. */
#define CPP_LIBS                                                                                   \
    "L=; for l in crypto ssl pthread; do case $(/usr/bin/g++ -print-file-name=lib$l.so) in "       \
    "/*) L=\"$L -l$l\";; esac; done; "

/* Java's class path: the work directory, then Debian's javatuples (libjavatuples-java). */
#define JAVA_CLASSPATH ".:/usr/share/java/javatuples.jar"

/* Java: appended to Main.java after the test code (a class of its own). */
static const char harness_java[] =
#include "judge/harness/java.java.inc"
    ;

static const char harness_go[] =
#include "judge/harness/go.go.inc"
    ;

static const struct lang_file files_go[] = {
    {"crucible_main_test.go", harness_go, 0},
    {NULL, NULL, 0},
};

/* Rust: appended to main.rs after the test code (two tests of its own, first and last). */
static const char harness_rust[] =
#include "judge/harness/rust.rs.inc"
    ;

/* Lua: crucible's stand-in for LuaUnit, which MultiPL-E's Lua tests require
 * (harness/luaunit.lua). */
static const char harness_luaunit[] =
#include "judge/harness/luaunit.lua.inc"
    ;

/* C#: System.Diagnostics.Debug whose failed asserts end the process, as in a .NET Debug
 * build (harness/csharp_debug.cs). */
static const char harness_csharp_debug[] =
#include "judge/harness/csharp_debug.cs.inc"
    ;

static const struct lang_file files_python[] = {
    {"_crucible_harness.py", harness_python, 0},
    {HARNESS_PYC_PATH, HARNESS_PYC_DATA, sizeof(HARNESS_PYC_DATA) - 1},
    {NULL, NULL, 0},
};

static bool is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* span(code, len, i, pred) — the index after the run of pred characters from i. */
static size_t span(const char *code, size_t len, size_t i, bool (*pred)(char))
{
    while (i < len && pred(code[i]))
        i++;
    return i;
}

/* scala_entry(code, len, e) — the scala row's hook: the class `scala NAME` runs, found as
 * SandboxFusion finds it: the first match of object\s+(\w+)|(\s+extends\s+\w+\s*)\{ in
 * the text (comments and strings included, no word boundary); its name when the object
 * alternative matched first, no entry (a compile error) otherwise or when none does. The
 * file stays main.scala: scalac takes any name. */
static void scala_entry(const char *code, size_t len, struct lang_entry *e)
{
    e->source[0] = '\0';
    e->entry[0] = '\0';
    for (size_t i = 0; i < len; i++) {
        size_t j, k;

        if (len - i > 6 && memcmp(code + i, "object", 6) == 0 &&
            (j = span(code, len, i + 6, is_space)) > i + 6 &&
            (k = span(code, len, j, is_word)) > j) {
            if (k - j < sizeof(e->entry)) {
                memcpy(e->entry, code + j, k - j);
                e->entry[k - j] = '\0';
            }
            return;
        }
        /* the other alternative: \s+extends\s+\w+\s*\{ (a match names nothing) */
        if ((j = span(code, len, i, is_space)) > i && len - j > 7 &&
            memcmp(code + j, "extends", 7) == 0 && (k = span(code, len, j + 7, is_space)) > j + 7 &&
            (j = span(code, len, k, is_word)) > k && (k = span(code, len, j, is_space)) < len &&
            code[k] == '{')
            return;
    }
}

/* java_entry(code, len, e) — the java row's hook: Different.java and Different for
 * `public class Different`, Main.java (the row's) when no top-level class is public. */
static void java_entry(const char *code, size_t len, struct lang_entry *e)
{
    struct java_entry je;

    java_find_entry(code, len, &je);
    e->source[0] = '\0';
    if (je.public_class[0] && strlen(je.public_class) + 5 < sizeof(e->source))
        snprintf(e->source, sizeof(e->source), "%s.java", je.public_class);
    snprintf(e->entry, sizeof(e->entry), "%s", je.main_class);
}

/* Rust: the crates HumanEval-X uses, prebuilt by scripts/build-image for the image's rustc
 * (with their dependencies) in one directory; --extern puts them in the extern prelude, as
 * cargo would, and a program that does not use one does not load it. */
#define RUST_CRATES_DIR "/usr/lib/crucible/rust"
static const struct lang_extra extras_rust[] = {
    {RUST_CRATES_DIR,
     ARGV("-L", RUST_CRATES_DIR, "--extern", "rand", "--extern", "regex", "--extern", "md5"), NULL},
    {NULL, NULL, NULL},
};

/* Node: the standard image's npm packages, on the javascript and typescript rows' NODE_PATH. */
#define NPM_DIR "/usr/lib/crucible/node_modules"

static const struct lang langs[] = {
    {
        .name = "python",
        .aliases = ARGV("py", "python3"),
        .source = "main.py",
        .run = ARGV("/usr/bin/python3", "main.py"),
        .test_run =
            ARGV("/usr/bin/python3", "-c", "import _crucible_harness as h; h._crucible_main()",
                 "main.py", "@TESTS_OFFSET@", "@ENTRY_POINT@"),
        .test_files = files_python,
        .test_token = true,
        .assert_marker = "AssertionError",
        .toolchain = "/usr/bin/python3",
        .package = "python3",
        .extensions = ARGV(".py"),
    },
    {
        .name = "c",
        .aliases = ARGV("gcc"),
        .source = "main.c",
        .compile =
            ARGV("/usr/bin/gcc", "-O2", "-std=gnu17", "-pipe", "-o", "main", "main.c", "-lm"),
        .run = ARGV("./main"),
        /* --wrap=main: the C library starts the harness's __wrap_main, which runs main. The
         * harness links first: its .preinit_array entry (the token's read) runs before any
         * of the solution's, and before every constructor. */
        .test_compile = ARGV("/usr/bin/gcc", "-O2", "-std=gnu17", "-pipe", "-o", "main",
                             "_crucible_harness.c", "main.c", "-lm", "-Wl,--wrap=main"),
        .test_prologue = C_PROLOGUE,
        .test_files = files_c,
        .test_token = true,
        .test_undef_macros = true,
        .assert_marker = "Assertion",
        .toolchain = "/usr/bin/gcc",
        .package = "gcc",
        .compile_cpu = 20,
        .compile_wall = 40,
        .compile_memory_mb = 1024,
        .extensions = ARGV(".c"),
        .compile_all = true,
    },
    {
        .name = "cpp",
        .aliases = ARGV("c++", "cxx", "cc", "g++"),
        .source = "main.cpp",
        /* OpenSSL's crypto and ssl and pthread are linked when the image has them (-lcrypto
         * -lssl -lpthread, as SandboxFusion's cpp runner adds each flag that links: MultiPL-E's
         * and HumanEval-X's string_to_md5 call MD5), as needed only; the sources are "$0" "$@" */
        .compile = ARGV("/bin/sh", "-c",
                        CPP_LIBS "exec /usr/bin/g++ -O2 -std=gnu++17 -pipe -o main \"$0\" \"$@\" "
                                 "-lm -Wl,--as-needed $L",
                        "main.cpp"),
        .run = ARGV("./main"),
        /* g++ compiles the harness's .c as C++ */
        .test_compile = ARGV("/bin/sh", "-c",
                             CPP_LIBS "exec /usr/bin/g++ -O2 -std=gnu++17 -pipe -o main "
                                      "_crucible_harness.c \"$0\" -lm -Wl,--wrap=main "
                                      "-Wl,--as-needed $L",
                             "main.cpp"),
        .test_prologue = C_PROLOGUE,
        .test_files = files_c,
        .test_token = true,
        .test_undef_macros = true,
        .assert_marker = "Assertion",
        .toolchain = "/usr/bin/g++",
        .package = "g++",
        .compile_cpu = 30,
        .compile_wall = 60,
        .compile_memory_mb = 2048,
        .extensions = ARGV(".cc", ".cpp", ".cxx", ".c++", ".C"),
        .compile_all = true,
    },
    {
        .name = "java",
        .source = "Main.java",
        .compile = ARGV("/usr/bin/javac", "-encoding", "UTF-8", "-J-XX:-UsePerfData",
                        "-J-XX:+UseSerialGC", "Main.java"),
        .run =
            ARGV("/usr/bin/java", "-XX:-UsePerfData", "-XX:+UseSerialGC", "-Xss64m", "-ea", "Main"),
        /* The harness's class runs the test code's Main (-ea: `assert` statements count). */
        .test_run = ARGV("/usr/bin/java", "-XX:-UsePerfData", "-XX:+UseSerialGC", "-Xss64m", "-ea",
                         "CrucibleAssertMain"),
        /* javatuples on the class path (javac's and java's), as SandboxFusion's java runner
         * has it: MultiPL-E's Java programs import org.javatuples.* (a missing jar is no
         * error) */
        .env = ARGV("CLASSPATH=" JAVA_CLASSPATH),
        .test_epilogue = harness_java,
        .test_token = true,
        .assert_marker = "AssertionError",
        .toolchain = "/usr/bin/javac",
        .package = "openjdk-17-jdk-headless",
        .compile_cpu = 30,
        .compile_wall = 60,
        .compile_memory_mb = 2048,
        .extensions = ARGV(".java"),
        .compile_all = true,
        .entry_arg = "Main",
        .entry = java_entry,
    },
    {
        .name = "javascript",
        .aliases = ARGV("js", "node", "nodejs"),
        .source = "main.js",
        .run = ARGV("/usr/bin/node", "main.js"),
        /* The harness also makes a failed console.assert (which only prints in Node) fail. */
        .test_run = ARGV("/usr/bin/node", "_crucible_harness.js", "main.js", "@TESTS_OFFSET@"),
        /* npm packages of the standard image (scripts/build-image: js-md5, lodash); absent
         * elsewhere */
        .env = ARGV("NODE_PATH=" NPM_DIR),
        .test_files = files_javascript,
        .test_token = true,
        .assert_marker = "AssertionError",
        .toolchain = "/usr/bin/node",
        .package = "nodejs",
        .extensions = ARGV(".js"),
    },
    {
        .name = "bash",
        .aliases = ARGV("sh", "shell"),
        .source = "main.sh",
        .run = ARGV("/bin/bash", "main.sh"),
        .toolchain = "/bin/bash",
        .package = "bash",
        .extensions = ARGV(".sh"),
    },
    {
        .name = "go",
        .aliases = ARGV("golang"),
        .source = "main.go",
        .compile = ARGV("/usr/bin/go", "build", "-o", "main", "main.go"),
        .run = ARGV("./main"),
        .test_source = "main_test.go",
        /* -vet=off: with an empty build cache, vet analyses every package the test imports,
         * the standard library included, which took most of the time (it only lints). */
        .test_compile = ARGV("/usr/bin/go", "test", "-c", "-vet=off", "-o", "main.test"),
        .test_run = ARGV("./main.test", "-test.v"),
        .test_files = files_go,
        .test_token = true,
        /* GOPATH mode: Debian's Go libraries (testify for HumanEval-X) from /usr/share/gocode.
         * Every sandbox starts with an empty GOCACHE, so what is not prebuilt is compiled anew:
         * cgo stays on (Go's default) because the standard library archives that golang-go
         * ships are built with it; with CGO_ENABLED=0, net, crypto/tls, net/http... (which
         * testify imports) were all stale and recompiled for every task. So a solution may
         * use cgo; its gcc runs in the same sandbox, under the compile limits. */
        .env = ARGV("GOCACHE=/tmp/go-cache", "GOPATH=/tmp/go:/usr/share/gocode", "GO111MODULE=off",
                    "CGO_ENABLED=1"),
        .assert_marker = "FAIL",
        .toolchain = "/usr/bin/go",
        .package = "golang-go",
        .compile_cpu = 60,
        .compile_wall = 120,
        .compile_memory_mb = 2048,
        .extensions = ARGV(".go"),
        .compile_all = true,
    },
    {
        .name = "rust",
        .aliases = ARGV("rs"),
        .source = "main.rs",
        .compile = ARGV("/usr/bin/rustc", "-O", "--edition", "2021", "-o", "main", "main.rs"),
        .test_compile =
            ARGV("/usr/bin/rustc", "--test", "--edition", "2021", "-o", "main", "main.rs"),
        .run = ARGV("./main"),
        .test_run = ARGV("./main", "--test-threads=1"),
        .test_epilogue = harness_rust,
        .test_token = true,
        .assert_marker = "panicked",
        .toolchain = "/usr/bin/rustc",
        .package = "rustc",
        .compile_cpu = 60,
        .compile_wall = 120,
        .compile_memory_mb = 2048,
        .extensions = ARGV(".rs"),
        .extras = extras_rust,
    },
    /* The languages below follow SandboxFusion's runners (sandbox/runners/{major,minor}.py):
     * the same interpreter or compiler and flags, the same kind of file; docs/API.md has the
     * table of its names and what differs. */
    {
        .name = "php",
        .source = "main.php",
        /* SandboxFusion strips the leading white space and adds "<?php\n" when the text does
         * not start with it (plain PHP code would otherwise be printed, not run): done here in
         * place, then `php -f`. */
        .run = ARGV("/bin/sh", "-c",
                    "/usr/bin/php -n -r '$c = ltrim(file_get_contents($argv[1])); "
                    "if (strncmp($c, \"<?php\", 5) != 0) $c = \"<?php\\n\" . $c; "
                    "file_put_contents($argv[1], $c);' \"$0\" && exec /usr/bin/php -f \"$0\"",
                    "main.php"),
        .toolchain = "/usr/bin/php",
        .package = "php-cli",
        .extensions = ARGV(".php"),
    },
    {
        .name = "ruby",
        .aliases = ARGV("rb"),
        .source = "main.rb",
        .run = ARGV("/usr/bin/ruby", "main.rb"),
        .toolchain = "/usr/bin/ruby",
        .package = "ruby",
        .extensions = ARGV(".rb"),
    },
    {
        .name = "perl",
        .aliases = ARGV("pl"),
        .source = "main.pl",
        .run = ARGV("/usr/bin/perl", "main.pl"),
        .toolchain = "/usr/bin/perl",
        .package = "perl",
        .extensions = ARGV(".pl"),
    },
    {
        .name = "lua",
        .source = "main.lua",
        /* Lua 5.2, SandboxFusion's; with crucible's luaunit module last on the module path
         * (written to /tmp first: $0 is its text) */
        .run =
            ARGV("/bin/sh", "-c",
                 "mkdir -p /tmp/crucible-lua && printf '%s' \"$0\" >/tmp/crucible-lua/luaunit.lua "
                 "&& LUA_PATH=';;/tmp/crucible-lua/?.lua' exec /usr/bin/lua5.2 \"$@\"",
                 harness_luaunit, "main.lua"),
        .toolchain = "/usr/bin/lua5.2",
        .package = "lua5.2",
        .extensions = ARGV(".lua"),
    },
    {
        .name = "r",
        .aliases = ARGV("rscript"),
        .source = "main.R",
        .run = ARGV("/usr/bin/Rscript", "main.R"),
        .toolchain = "/usr/bin/Rscript",
        .package = "r-base-core",
        .extensions = ARGV(".R", ".r"),
    },
    {
        .name = "racket",
        .aliases = ARGV("rkt"),
        .source = "main.rkt",
        .run = ARGV("/usr/bin/racket", "main.rkt"),
        .toolchain = "/usr/bin/racket",
        .package = "racket",
        .extensions = ARGV(".rkt"),
    },
    {
        .name = "typescript",
        .aliases = ARGV("ts"),
        .source = "main.ts",
        /* SandboxFusion runs tsx, which strips the types without checking them: a type error
         * does not stop the program, a syntax error does. Here TypeScript's own transpiler
         * (transpileModule: no type check) turns main.ts into CommonJS, run as main.ts is. */
        .run = ARGV("/usr/bin/node", "-e",
                    "const ts = require('typescript'), fs = require('fs'), path = require('path');"
                    "const Module = require('module');"
                    "const f = path.resolve(process.argv[1]);"
                    "const r = ts.transpileModule(fs.readFileSync(f, 'utf8'), {fileName: f,"
                    " reportDiagnostics: true, compilerOptions: {module: ts.ModuleKind.CommonJS,"
                    " target: ts.ScriptTarget.ES2020, esModuleInterop: true}});"
                    "const errs = (r.diagnostics || []).filter("
                    "d => d.category === ts.DiagnosticCategory.Error);"
                    "if (errs.length) {"
                    " for (const d of errs) {"
                    "  const at = d.file && d.start !== undefined ?"
                    "   d.file.getLineAndCharacterOfPosition(d.start) : null;"
                    "  console.error((at ? 'main.ts:' + (at.line + 1) + ':' + (at.character + 1) +"
                    "   ' - ' : '') + 'error TS' + d.code + ': ' +"
                    "   ts.flattenDiagnosticMessageText(d.messageText, '\\n'));"
                    " }"
                    " process.exit(1);"
                    "}"
                    "const m = new Module(f, null); m.filename = f;"
                    "m.paths = Module._nodeModulePaths(path.dirname(f));"
                    "process.argv.splice(1, 1, f); require.main = m; m._compile(r.outputText, f);",
                    "main.ts"),
        .env = ARGV("NODE_PATH=/usr/share/nodejs:/usr/lib/nodejs:" NPM_DIR),
        .toolchain = "/usr/share/nodejs/typescript/package.json",
        .package = "node-typescript",
        .extensions = ARGV(".ts"),
    },
    {
        .name = "csharp",
        .aliases = ARGV("cs", "c#"),
        .source = "Program.cs",
        /* Mono's C# compiler (SandboxFusion's `dotnet run` is not in Debian); a compile
         * error is the compile step's, where dotnet run shows it as a failed run. */
        /* -d:DEBUG -d:TRACE as a dotnet Debug build; with crucible's Debug class (written to
         * /tmp first: $0 is its text), whose failed asserts end the program as .NET's do */
        .compile = ARGV("/bin/sh", "-c",
                        "printf '%s' \"$0\" >/tmp/crucible_debug.cs && exec /usr/bin/mcs "
                        "-optimize+ -d:DEBUG -d:TRACE -nowarn:436 -r:System.Numerics "
                        "-out:main.exe \"$@\" /tmp/crucible_debug.cs",
                        harness_csharp_debug, "Program.cs"),
        .run = ARGV("/usr/bin/mono", "main.exe"),
        .toolchain = "/usr/bin/mcs",
        .package = "mono-mcs",
        .compile_cpu = 30,
        .compile_wall = 60,
        .compile_memory_mb = 1024,
        .extensions = ARGV(".cs"),
        .compile_all = true,
    },
    {
        .name = "d",
        .aliases = ARGV("D_ut", "dlang"),
        .source = "main.d",
        /* SandboxFusion's D_ut: dmd FILE -unittest -of=test (ldmd2 takes dmd's flags): the
         * unittest blocks run before main, and a failed one fails the run. */
        .compile = ARGV("/usr/bin/ldmd2", "main.d", "-unittest", "-of=main"),
        .run = ARGV("./main"),
        .toolchain = "/usr/bin/ldmd2",
        .package = "ldc",
        .compile_cpu = 60,
        .compile_wall = 120,
        .compile_memory_mb = 2048,
        .extensions = ARGV(".d"),
        .compile_all = true,
    },
    {
        .name = "verilog",
        .aliases = ARGV("systemverilog", "sv"),
        .source = "main.sv",
        /* SandboxFusion's flags (verilog-eval's): the test bench is the module tb. */
        .compile = ARGV("/usr/bin/iverilog", "-Wall", "-Winfloop", "-Wno-timescale", "-g2012", "-s",
                        "tb", "-o", "test.vvp", "main.sv"),
        .run = ARGV("/usr/bin/vvp", "-n", "test.vvp"),
        .toolchain = "/usr/bin/iverilog",
        .package = "iverilog",
        .compile_cpu = 30,
        .compile_wall = 60,
        .compile_memory_mb = 1024,
        .extensions = ARGV(".sv", ".v"),
        .compile_all = true,
    },
    {
        .name = "scala",
        .source = "main.scala",
        .compile =
            ARGV("/usr/bin/scalac", "-J-XX:-UsePerfData", "-J-XX:+UseSerialGC", "main.scala"),
        .run = ARGV("/usr/bin/scala", "-J-XX:-UsePerfData", "-J-XX:+UseSerialGC", "Main"),
        .env = ARGV("JAVA_OPTS=-XX:-UsePerfData -XX:+UseSerialGC"),
        .toolchain = "/usr/bin/scalac",
        .package = "scala",
        .compile_cpu = 60,
        .compile_wall = 120,
        .compile_memory_mb = 2048,
        .extensions = ARGV(".scala"),
        .compile_all = true,
        .entry_arg = "Main",
        .entry = scala_entry,
        .no_entry = "Object name not found (the program must declare an object, as in "
                    "`object Main`)",
    },
    {
        .name = "kotlin_script",
        .aliases = ARGV("kts"),
        .source = "main.kts",
        /* SandboxFusion runs `kotlin FILE.kts`: the script is compiled and run in one step,
         * within the run's limits (Debian's Kotlin 1.3 takes it as kotlinc -script). */
        .run = ARGV("/usr/bin/kotlinc", "-script", "main.kts"),
        .env = ARGV("JAVA_OPTS=-XX:-UsePerfData -XX:+UseSerialGC"),
        .toolchain = "/usr/bin/kotlinc",
        .package = "kotlin",
        .extensions = ARGV(".kts"),
    },
};

struct lang_steps lang_steps(const struct lang *l, bool for_tests)
{
    struct lang_steps s = {l->source, l->compile, l->run};

    if (for_tests) {
        if (l->test_source)
            s.source = l->test_source;
        if (l->test_compile)
            s.compile = l->test_compile;
        if (l->test_run)
            s.run = l->test_run;
    }
    return s;
}

/* ---- plans ---- */

/* keep(p, s) — s (malloc'd) joins what the plan frees; NULL when s is or cannot be. */
static void *keep(struct lang_plan *p, void *s)
{
    char **grown;

    if (!s)
        return NULL;
    grown = realloc(p->owned, (p->nowned + 1) * sizeof(*grown));
    if (!grown) {
        free(s);
        return NULL;
    }
    p->owned = grown;
    p->owned[p->nowned++] = s;
    return s;
}

/* subst(p, argv, from, to, nto) — argv with every element equal to `from` replaced by the nto
 * strings of `to` (owned by the plan), or NULL when out of memory. */
static const char *const *subst(struct lang_plan *p, const char *const *argv, const char *from,
                                const char *const *to, size_t nto)
{
    size_t n = 0, k = 0;
    const char **out;

    for (const char *const *a = argv; *a; a++)
        n += from && strcmp(*a, from) == 0 ? nto : 1;
    out = keep(p, calloc(n + 1, sizeof(*out)));
    if (!out)
        return NULL;
    for (const char *const *a = argv; *a; a++) {
        if (from && strcmp(*a, from) == 0)
            for (size_t i = 0; i < nto; i++)
                out[k++] = to[i];
        else
            out[k++] = *a;
    }
    return out;
}

/* no_main(l, p, compile) — the compile step for a program without an entry point (a Java
 * program without main): the compiler runs (its own errors come first), then the step fails
 * saying what is missing (l->no_entry). */
static const char *const *no_main(const struct lang *l, struct lang_plan *p,
                                  const char *const *compile)
{
    const char *what = l->no_entry ? l->no_entry
                                   : "no class declares public static void main(String[]), so "
                                     "there is nothing to run";
    char *script;
    size_t n = 0;
    const char **out;

    while (compile[n])
        n++;
    if (asprintf(&script, "\"$0\" \"$@\" || exit; echo 'error: %s' >&2; exit 1", what) < 0 ||
        !keep(p, script))
        return NULL;
    out = keep(p, calloc(n + 4, sizeof(*out)));
    if (!out)
        return NULL;
    out[0] = "/bin/sh";
    out[1] = "-c";
    out[2] = script;
    memcpy(out + 3, compile, n * sizeof(*out));
    return out;
}

int lang_plan_program(const struct lang *l, bool for_tests, const char *code, size_t len,
                      struct lang_plan *p)
{
    struct lang_steps st = lang_steps(l, for_tests);
    struct lang_entry e;
    const char *src;

    memset(p, 0, sizeof(*p));
    p->source = st.source;
    p->compile = st.compile;
    p->run = st.run;
    if (!l->entry)
        return 0;
    l->entry(code, len, &e);
    if (e.source[0]) {
        if (!(src = keep(p, strdup(e.source))))
            goto nomem;
        if (st.compile && !(p->compile = subst(p, st.compile, st.source, &src, 1)))
            goto nomem;
        p->source = src;
    }
    if (for_tests)
        return 0;
    if (!e.entry[0]) {
        if (p->compile && !(p->compile = no_main(l, p, p->compile)))
            goto nomem;
        return 0;
    }
    if (l->entry_arg) {
        const char *entry = keep(p, strdup(e.entry));
        if (!entry || !(p->run = subst(p, p->run, l->entry_arg, &entry, 1)))
            goto nomem;
    }
    return 0;
nomem:
    lang_plan_release(p);
    return -ENOMEM;
}

static bool is_source(const struct lang *l, const char *name)
{
    size_t n = strlen(name);

    for (const char *const *x = l->extensions; x && *x; x++) {
        size_t k = strlen(*x);
        if (n > k && strcmp(name + n - k, *x) == 0)
            return true;
    }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int lang_plan_files(const struct lang *l, const struct lang_file *files, size_t n,
                    struct lang_plan *p, struct errbuf *err)
{
    struct lang_steps st = lang_steps(l, false);
    const char **srcs, *mainfile = NULL;
    size_t ns = 0;

    memset(p, 0, sizeof(*p));
    srcs = keep(p, calloc(n + 1, sizeof(*srcs)));
    if (!srcs)
        goto nomem;
    for (size_t i = 0; i < n; i++)
        if (is_source(l, files[i].path))
            srcs[ns++] = files[i].path;
    if (ns == 0) {
        char exts[128] = "";
        for (const char *const *x = l->extensions; x && *x; x++)
            snprintf(exts + strlen(exts), sizeof(exts) - strlen(exts), "%s%s",
                     x == l->extensions ? "" : " ", *x);
        lang_plan_release(p);
        return errbuf_set(err, "no %s source among its files (a name ending in %s)", l->name,
                          exts[0] ? exts : "?");
    }
    qsort(srcs, ns, sizeof(*srcs), by_name);
    for (size_t i = 0; i < ns && !mainfile; i++) {
        const char *base = strrchr(srcs[i], '/');
        base = base ? base + 1 : srcs[i];
        if (strncasecmp(base, "main.", 5) == 0)
            mainfile = srcs[i];
    }
    if (!mainfile)
        mainfile = srcs[0];
    p->source = mainfile;
    p->run = subst(p, st.run, st.source, &mainfile, 1);
    if (!p->run)
        goto nomem;
    if (st.compile) {
        p->compile = l->compile_all ? subst(p, st.compile, st.source, srcs, ns)
                                    : subst(p, st.compile, st.source, &mainfile, 1);
        if (!p->compile)
            goto nomem;
    }
    if (l->entry) {
        /* the class to run: the main file's main, else the first in another source */
        struct lang_entry e = {{0}, {0}};
        for (size_t pass = 0; pass < 2 && !e.entry[0]; pass++)
            for (size_t i = 0; i < n && !e.entry[0]; i++)
                if (is_source(l, files[i].path) && (files[i].path == mainfile) == (pass == 0))
                    l->entry(files[i].data, files[i].len, &e);
        if (!e.entry[0]) {
            if (p->compile && !(p->compile = no_main(l, p, p->compile)))
                goto nomem;
        } else if (l->entry_arg) {
            const char *entry = keep(p, strdup(e.entry));
            if (!entry || !(p->run = subst(p, p->run, l->entry_arg, &entry, 1)))
                goto nomem;
        }
    }
    return 0;
nomem:
    lang_plan_release(p);
    return -ENOMEM;
}

/* in_image(img, path) — whether absolute path exists in image img as the sandbox will see it:
 * for a directory image, resolved inside its root (openat2 RESOLVE_IN_ROOT), so that an
 * absolute symbolic link (Debian's /usr/bin/javac -> /etc/alternatives/javac -> ...) is
 * followed in the image, not on the host. Kernels without openat2: the host path, followed. */
static bool in_image(const struct image *img, const char *path)
{
    char full[PATH_MAX + 64];
    struct open_how how = {
        .flags = O_PATH | O_CLOEXEC,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
    };
    struct stat st;
    long fd = -1;
    int root;

    if (strcmp(img->root, "/") == 0)
        return stat(path, &st) == 0;
    root = open(img->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return false;
    /* EAGAIN: a rename elsewhere raced with a ".." step; the kernel asks to retry */
    for (int tries = 0; tries < 100; tries++) {
        fd = syscall(SYS_openat2, root, path, &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    if (fd < 0 && errno == ENOSYS) {
        snprintf(full, sizeof(full), "%s%s", img->root, path);
        fd = stat(full, &st) == 0 ? 0 : -1;
    } else if (fd >= 0) {
        close((int)fd);
    }
    close(root);
    return fd >= 0;
}

/* insert_args(p, argv, at, add) — argv with the strings of add inserted before argv[at] (at may be
 * argv's length: appended), owned by the plan; NULL when out of memory. */
static const char *const *insert_args(struct lang_plan *p, const char *const *argv, size_t at,
                                      const char *const *add)
{
    size_t n = 0, k = 0, m = 0;
    const char **out;

    while (argv[n])
        n++;
    while (add[m])
        m++;
    out = keep(p, calloc(n + m + 1, sizeof(*out)));
    if (!out)
        return NULL;
    for (size_t i = 0; i < n + 1; i++) {
        if (i == at)
            for (size_t j = 0; j < m; j++)
                out[k++] = add[j];
        if (i < n)
            out[k++] = argv[i];
    }
    return out;
}

int lang_plan_image(const struct lang *l, const struct image *img, struct lang_plan *p)
{
    if (!l->extras || !img || strcmp(img->root, "/") == 0)
        return 0;
    for (const struct lang_extra *x = l->extras; x->needs; x++) {
        size_t n = 0;

        if (!in_image(img, x->needs))
            continue;
        if (x->compile_args && p->compile) {
            while (p->compile[n])
                n++;
            if (!(p->compile = insert_args(p, p->compile, n, x->compile_args)))
                goto nomem;
        }
        if (x->run_args && p->run && p->run[0] &&
            !(p->run = insert_args(p, p->run, 1, x->run_args)))
            goto nomem;
    }
    return 0;
nomem:
    lang_plan_release(p);
    return -ENOMEM;
}

void lang_plan_release(struct lang_plan *p)
{
    for (size_t i = 0; i < p->nowned; i++)
        free(p->owned[i]);
    free(p->owned);
    memset(p, 0, sizeof(*p));
}

const struct lang *lang_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++) {
        if (strcasecmp(langs[i].name, name) == 0)
            return &langs[i];
        for (const char *const *a = langs[i].aliases; a && *a; a++)
            if (strcasecmp(*a, name) == 0)
                return &langs[i];
    }
    return NULL;
}

const struct lang *lang_find_by_file(const char *name)
{
    const char *base;

    if (!name)
        return NULL;
    base = strrchr(name, '/');
    base = base ? base + 1 : name;
    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
        if (is_source(&langs[i], base))
            return &langs[i];
    return NULL;
}

bool lang_available(const struct lang *l, const struct image *img, struct errbuf *err)
{
    if (in_image(img, l->toolchain))
        return true;
    errbuf_set(err, "the %s toolchain is not in image '%s' ('%s' is missing; Debian package %s)",
               l->name, img->name, l->toolchain, l->package);
    return false;
}

void lang_names(char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]) && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", langs[i].name);
}

bool lang_cold_only_file(const struct lang *l, const char *path)
{
    /* Every Python test file: the harness's source, which the fork server preloads as the
     * module a job imports (verify_forkserver_preload), and its compiled form (NULL path when
     * the build had no python3). A job then runs without the file, as it never reads it: the
     * import finds the module in sys.modules, and the harness leaves its own frames out of
     * tracebacks. */
    if (l->test_files != files_python)
        return false;
    for (const struct lang_file *f = files_python; f->path; f++)
        if (strcmp(path, f->path) == 0)
            return true;
    return false;
}
