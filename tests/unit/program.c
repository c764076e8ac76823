/*
 * Unit tests for src/judge/program.c (what POST /v1/run {code, language} and /run_code
 * execute) with real sandboxes: Java programs run whatever their classes are called, with
 * assertions enabled, and one without main is a compile error saying so.
 */
#include "judge/program.h"
#include "tap.h"

static struct sandbox_runtime rt;
static struct image host;

static void run_java(const char *code, const char *in, struct program_result *pr)
{
    struct program_spec spec = {
        .lang = lang_find("java"),
        .code = code,
        .code_len = strlen(code),
        .stdin_data = in,
        .stdin_len = in ? strlen(in) : 0,
        .infra_retries = 1,
    };

    sandbox_limits_default(&spec.limits);
    spec.limits.cpu_time = 10;
    spec.limits.wall_time = 30;
    program_run(&rt, &host, &spec, pr);
}

int main(void)
{
    struct errbuf err = {{0}};
    struct program_result pr;

    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &host, &err) < 0 ||
        !lang_available(lang_find("java"), &host, &err)) {
        skip("no sandbox runtime or no Java toolchain");
        return done_testing();
    }
    run_java("import java.util.*;\npublic class Different {\n"
             "  public static void main(String[] args) {\n"
             "    Scanner s = new Scanner(System.in);\n"
             "    System.out.println(Math.abs(s.nextLong() - s.nextLong()));\n  }\n}\n",
             "10 12\n", &pr);
    ok(pr.ran && pr.run.status == RESULT_OK && strcmp(pr.run.out.data, "2\n") == 0,
       "public class Different compiles and runs (%s)", pr.run.message);
    program_result_release(&pr);

    run_java("interface Util { static int two() { return 2; } }\n"
             "class Outer { static class Main {\n"
             "  public static void main(String... a) { System.out.println(Util.two()); } } }\n",
             NULL, &pr);
    ok(pr.ran && pr.run.status == RESULT_OK && strcmp(pr.run.out.data, "2\n") == 0,
       "main in a nested class runs (%s)", pr.run.out.data ? pr.run.out.data : "");
    program_result_release(&pr);

    run_java("public class A { public static void main(String[] a) { assert 1 == 2; } }\n", NULL,
             &pr);
    ok(pr.ran && pr.run.status == RESULT_RUNTIME_ERROR && pr.run.err.data &&
           strstr(pr.run.err.data, "AssertionError"),
       "assertions are enabled");
    program_result_release(&pr);

    run_java("public class NoMain { void main() {} }\n", NULL, &pr);
    ok(!pr.ran && pr.has_compile && pr.compile.status != RESULT_OK && pr.compile.err.data &&
           strstr(pr.compile.err.data, "no class declares public static void main"),
       "no main: the compile step fails saying so");
    program_result_release(&pr);

    run_java("public class Broken { public static void main(String[] a) { int x = } }\n", NULL,
             &pr);
    ok(!pr.ran && pr.has_compile && pr.compile.status != RESULT_OK && pr.compile.err.data &&
           strstr(pr.compile.err.data, "Broken.java") &&
           !strstr(pr.compile.err.data, "no class declares"),
       "javac's own errors come first, for the file named after the class");
    program_result_release(&pr);
    sandbox_runtime_release(&rt);
    return done_testing();
}
