/*
 * Unit tests for src/judge/lang.c's plans: the steps for one program whose text names its
 * entry (Java), the assert harness keeping the test code's entry, a Java program without
 * main, and multi-file programs (a Kattis validator: validate.cc + validate.h).
 */
#include "judge/lang.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

/* mkdir_p(path) — path and its missing parents; 0 or -1. */
static int mkdir_p(const char *path)
{
    char buf[512];

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *s = buf + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -1;
        *s = '/';
    }
    return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* put_file(path) — an empty file; 0 or -1. */
static int put_file(const char *path)
{
    FILE *f = fopen(path, "w");

    return f && fclose(f) == 0 ? 0 : -1;
}

/* rm_rf(dir) — removes the test's scratch tree. */
static void rm_rf(const char *dir)
{
    char cmd[600];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        diag("could not remove '%s'", dir);
}

/* joined(argv) — the argv as one space-separated string (static buffer). */
static const char *joined(const char *const *argv)
{
    static char buf[2048];

    buf[0] = '\0';
    for (const char *const *a = argv; a && *a; a++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", a == argv ? "" : " ", *a);
    return buf;
}

static void has(const char *const *argv, const char *want, const char *name)
{
    const char *got = joined(argv);
    if (!ok(strstr(got, want) != NULL, "%s", name))
        diag("  got '%s', want '%s' in it", got, want);
}

int main(void)
{
    const struct lang *java = lang_find("java"), *cpp = lang_find("cpp"), *py = lang_find("py");
    const struct lang *rust = lang_find("rust"), *c = lang_find("c");
    struct errbuf err = {{0}};
    struct lang_plan p;
    const char *diff = "import java.util.*;\npublic class Different {\n"
                       "  public static void main(String[] a) {} }\n";

    ok(lang_plan_program(java, false, diff, strlen(diff), &p) == 0 &&
           strcmp(p.source, "Different.java") == 0,
       "java: public class Different is written to Different.java");
    has(p.compile, "javac -encoding UTF-8 -J-XX:-UsePerfData -J-XX:+UseSerialGC Different.java",
        "java: javac compiles Different.java");
    has(p.run, "-ea Different", "java: runs class Different with assertions enabled");
    lang_plan_release(&p);

    const char *plain = "class Main { public static void main(String[] a) {} }";
    ok(lang_plan_program(java, false, plain, strlen(plain), &p) == 0 &&
           strcmp(p.source, "Main.java") == 0 && strcmp(p.run[4], "-ea") == 0 &&
           strcmp(p.run[5], "Main") == 0,
       "java: class Main (not public) stays Main.java, run as Main");
    lang_plan_release(&p);

    ok(lang_plan_program(java, false, "public class X { }", 18, &p) == 0 &&
           strcmp(p.source, "X.java") == 0 && strcmp(p.compile[0], "/bin/sh") == 0,
       "java without main: the compile step wraps javac");
    has(p.compile, "no class declares public static void main(String[])",
        "... and says what is missing");
    has(p.compile, "/usr/bin/javac -encoding UTF-8", "... after running javac itself");
    lang_plan_release(&p);

    {
        const char *prog = "class Solution { int f() { return 1; } }\npublic class Main {\n"
                           "  public static void main(String[] a) { assert true; } }\n";
        ok(lang_plan_program(java, true, prog, strlen(prog), &p) == 0 &&
               strcmp(p.source, "Main.java") == 0 && strcmp(p.run[4], "-ea") == 0 &&
               strcmp(p.run[5], "CrucibleAssertMain") == 0 && !p.run[6],
           "java, assert harness: Main.java, run by the harness's class (which runs the test "
           "code's Main.main) with -ea");
        lang_plan_release(&p);
    }

    ok(lang_plan_program(py, false, "print(1)", 8, &p) == 0 && strcmp(p.source, "main.py") == 0 &&
           p.compile == NULL && strcmp(joined(p.run), "/usr/bin/python3 main.py") == 0,
       "python: the row's own steps");
    lang_plan_release(&p);

    {
        struct lang_file f[] = {{"validate.h", "#pragma once\n", 13},
                                {"validate.cc", "int main(){return 42;}\n", 23},
                                {"util.cpp", "\n", 1},
                                {"README", "text", 4}};
        ok(lang_plan_files(cpp, f, 4, &p, &err) == 0 && strcmp(p.source, "util.cpp") == 0,
           "cpp files: no main.*, the first source in byte order is the main file");
        has(p.compile, "-lm -Wl,--as-needed $L util.cpp validate.cc",
            "cpp files: g++ compiles every source");
        ok(strcmp(joined(p.run), "./main") == 0, "cpp files: the binary runs");
        lang_plan_release(&p);
        ok(lang_plan_files(py, f, 4, &p, &err) == -EINVAL && strstr(err.msg, "no python source") &&
               strstr(err.msg, ".py"),
           "no source of the language: an error naming it (%s)", err.msg);
    }
    {
        struct lang_file f[] = {{"helper.py", "x = 1\n", 6}, {"Main.py", "import helper\n", 14}};
        ok(lang_plan_files(py, f, 2, &p, &err) == 0 &&
               strcmp(joined(p.run), "/usr/bin/python3 Main.py") == 0,
           "python files: Main.py (any case) is the main file");
        lang_plan_release(&p);
    }
    {
        struct lang_file f[] = {{"b.rs", "mod a;\nfn main(){}\n", 19}, {"a.rs", "\n", 1}};
        ok(lang_plan_files(rust, f, 2, &p, &err) == 0 &&
               strstr(joined(p.compile), "-o main a.rs") && !strstr(joined(p.compile), "b.rs"),
           "rust files: rustc compiles only the main file (modules follow)");
        lang_plan_release(&p);
    }
    {
        struct lang_file f[] = {{"Util.java", "public class Util { }\n", 22},
                                {"Checker.java",
                                 "public class Checker { public static void main(String[] a) {} }",
                                 64}};
        ok(lang_plan_files(java, f, 2, &p, &err) == 0 &&
               strstr(joined(p.compile), "Checker.java Util.java") &&
               strcmp(p.run[5], "Checker") == 0,
           "java files: javac compiles all, the class with main runs");
        lang_plan_release(&p);
    }
    {
        struct lang_file f[] = {{"a.c", "int main(void){return 0;}", 25}};
        ok(lang_plan_files(c, f, 1, &p, &err) == 0 && strstr(joined(p.compile), "-o main a.c"),
           "c files: one source");
        lang_plan_release(&p);
    }
    {
        /* Scala: SandboxFusion's rule, the first match of object\s+(\w+) or of
         * \s+extends\s+\w+\s*{ (which names nothing) */
        const struct lang *scala = lang_find("scala");
        const char *two = "// helpers\nobject  Helper_1 { }\nobject Main { def main(a: "
                          "Array[String]) = () }\n";
        ok(scala && lang_plan_program(scala, false, two, strlen(two), &p) == 0 &&
               strcmp(p.source, "main.scala") == 0 && strcmp(p.run[3], "Helper_1") == 0,
           "scala: runs the first object (Helper_1), as SandboxFusion");
        lang_plan_release(&p);
        const char *ext = "class A extends B {}\nobject Main { }\n";
        ok(lang_plan_program(scala, false, ext, strlen(ext), &p) == 0 &&
               strcmp(p.compile[0], "/bin/sh") == 0,
           "scala: an `extends X {` before any object names nothing: a compile error");
        has(p.compile, "Object name not found", "... saying so as SandboxFusion does");
        lang_plan_release(&p);
        const char *none = "class A { }\n";
        ok(lang_plan_program(scala, false, none, strlen(none), &p) == 0 &&
               strcmp(p.compile[0], "/bin/sh") == 0,
           "scala: no object, a compile error");
        lang_plan_release(&p);
        const char *cut = "object";
        ok(lang_plan_program(scala, false, cut, strlen(cut), &p) == 0 &&
               strcmp(p.compile[0], "/bin/sh") == 0,
           "scala: a text ending in 'object' names nothing");
        lang_plan_release(&p);
    }
    {
        /* every SandboxFusion name crucible supports is found, with its own case */
        const char *names[] = {"php",        "ruby",   "perl", "lua",     "R",     "racket",
                               "typescript", "csharp", "D_ut", "verilog", "scala", "kotlin_script"};
        int found = 0;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            found += lang_find(names[i]) != NULL;
        ok(found == 12, "SandboxFusion's language names are rows of the table (%d of 12)", found);
    }
    {
        /* a solution file's extension names its language (crucible verify --solution FILE) */
        static const struct {
            const char *file, *lang;
        } by_file[] = {
            {"sol.ts", "typescript"}, {"sol.php", "php"},
            {"dir/Sol.cs", "csharp"}, {"sol.rb", "ruby"},
            {"sol.pl", "perl"},       {"sol.lua", "lua"},
            {"sol.R", "r"},           {"sol.r", "r"},
            {"sol.rkt", "racket"},    {"sol.d", "d"},
            {"sol.v", "verilog"},     {"sol.sv", "verilog"},
            {"sol.scala", "scala"},   {"sol.kts", "kotlin_script"},
            {"a.py", "python"},       {"a.C", "cpp"},
        };
        int right = 0;
        for (size_t i = 0; i < sizeof(by_file) / sizeof(by_file[0]); i++) {
            const struct lang *l = lang_find_by_file(by_file[i].file);
            if (l && strcmp(l->name, by_file[i].lang) == 0)
                right++;
            else
                diag("  %s: got %s, want %s", by_file[i].file, l ? l->name : "none",
                     by_file[i].lang);
        }
        ok(right == (int)(sizeof(by_file) / sizeof(by_file[0])),
           "lang_find_by_file: each extension of the table names its language");
        ok(!lang_find_by_file(".py") && !lang_find_by_file("dir/.ts") &&
               !lang_find_by_file("x.txt") && !lang_find_by_file("sol") && !lang_find_by_file(NULL),
           "lang_find_by_file: a dot file, an unknown extension, none, NULL: no language");
        /* lang_plan_image: extras by what a directory image holds; nothing for host */
        char root[] = "/tmp/crucible-lang-img-XXXXXX", path[256];
        struct image img = {0}, host = {0};
        const char *javaprog = "public class Main { public static void main(String[] a) {} }";

        if (!mkdtemp(root)) {
            ok(0, "mkdtemp: %s", strerror(errno));
            return done_testing();
        }
        snprintf(img.name, sizeof(img.name), "%s", root);
        snprintf(img.root, sizeof(img.root), "%s", root);
        snprintf(host.name, sizeof(host.name), "host");
        snprintf(host.root, sizeof(host.root), "/");

        /* C++'s OpenSSL and Java's javatuples are the rows' own (a link probe in the compile
         * step, a class path), the same on host and in an image: no extras */
        ok(lang_plan_program(cpp, true, "int f();", 8, &p) == 0 &&
               lang_plan_image(cpp, &img, &p) == 0 && strstr(joined(p.compile), "crypto") &&
               !strstr(joined(p.compile), "-lcrypto"),
           "cpp: the image adds nothing to the row's own probe for OpenSSL");
        lang_plan_release(&p);
        ok(lang_plan_program(rust, true, "fn main(){}", 11, &p) == 0 &&
               lang_plan_image(rust, &img, &p) == 0 && !strstr(joined(p.compile), "--extern"),
           "rust: no crates in the image, no --extern");
        lang_plan_release(&p);
        snprintf(path, sizeof(path), "%s/usr/lib/crucible/rust", root);
        ok(mkdir_p(path) == 0, "image gets the crate directory");
        ok(lang_plan_program(rust, true, "fn main(){}", 11, &p) == 0 &&
               lang_plan_image(rust, &img, &p) == 0,
           "rust: planned for the image");
        has(p.compile,
            "main.rs -L /usr/lib/crucible/rust --extern rand --extern regex --extern md5",
            "rust: the prebuilt crates are in the extern prelude");
        lang_plan_release(&p);

        ok(lang_plan_program(java, false, javaprog, strlen(javaprog), &p) == 0 &&
               lang_plan_image(java, &img, &p) == 0 && !strstr(joined(p.compile), "-cp") &&
               !strstr(joined(p.run), "-cp"),
           "java: the image adds no class path (the row's CLASSPATH has javatuples)");
        lang_plan_release(&p);
        ok(lang_plan_program(py, false, "print(1)", 8, &p) == 0 &&
               lang_plan_image(py, &img, &p) == 0 &&
               strcmp(joined(p.run), "/usr/bin/python3 main.py") == 0,
           "python: a row without extras is unchanged");
        lang_plan_release(&p);
        /* lang_available: links resolved in the image, never on the host (Debian's
         * /usr/bin/javac -> /etc/alternatives/javac -> /usr/lib/jvm/...) */
        {
            const struct lang *go = lang_find("go");
            struct errbuf e2 = {{0}};
            char target[256];

            snprintf(path, sizeof(path), "%s/usr/bin", root);
            ok(mkdir_p(path) == 0, "made %s", path);
            snprintf(path, sizeof(path), "%s/etc/alternatives", root);
            ok(mkdir_p(path) == 0, "made %s", path);
            snprintf(path, sizeof(path), "%s/opt/crucible-test-jdk/bin", root);
            ok(mkdir_p(path) == 0, "made %s", path);
            snprintf(path, sizeof(path), "%s/opt/crucible-test-jdk/bin/javac", root);
            ok(put_file(path) == 0, "image gets a javac");
            snprintf(path, sizeof(path), "%s/usr/bin/javac", root);
            ok(symlink("/etc/alternatives/crucible-test-javac", path) == 0,
               "usr/bin/javac -> /etc/alternatives/crucible-test-javac");
            snprintf(path, sizeof(path), "%s/etc/alternatives/crucible-test-javac", root);
            ok(symlink("/opt/crucible-test-jdk/bin/javac", path) == 0,
               "which -> /opt/crucible-test-jdk/bin/javac (both only in the image)");
            ok(lang_available(java, &img, &e2),
               "java: available through absolute links in the image");
            /* /usr/bin/go -> an absolute path that exists on the host but not in the image */
            snprintf(target, sizeof(target), "/%s", "bin/sh");
            snprintf(path, sizeof(path), "%s/usr/bin/go", root);
            ok(symlink(target, path) == 0, "usr/bin/go -> /bin/sh, absent from the image");
            ok(!lang_available(go, &img, &e2) && strstr(e2.msg, "/usr/bin/go"),
               "go: a link to a host-only path is not a toolchain of the image");
        }
        rm_rf(root);
    }
    return done_testing();
}
