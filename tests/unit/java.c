/*
 * Unit tests for src/judge/java.c: the public class and the main class of Java sources the
 * way judges receive them — any class name, several top-level classes, nested classes,
 * interfaces, enums and records, generics and annotations — and the names that must not
 * count: in comments, strings, char literals, text blocks, local and anonymous classes,
 * and methods that only look like main.
 */
#include "judge/java.h"
#include "tap.h"

static void find(const char *src, const char *want_public, const char *want_main, const char *name)
{
    struct java_entry e;

    java_find_entry(src, strlen(src), &e);
    if (!ok(strcmp(e.public_class, want_public) == 0 && strcmp(e.main_class, want_main) == 0, "%s",
            name))
        diag("  got public '%s' main '%s', want '%s' '%s'", e.public_class, e.main_class,
             want_public, want_main);
}

int main(void)
{
    find("import java.util.*;\n\npublic class Different {\n"
         "    public static void main(String[] args) { }\n}\n",
         "Different", "Different", "public class Different");
    find("class Main { public static void main(String[] a) {} }", "", "Main",
         "class Main, not public");
    find("class Solution { int f() { return 1; } }\n"
         "class Helper { static int g; }\n"
         "class Entry { public static void main(String... args) {} }\n",
         "", "Entry", "several top-level classes, main in the third (varargs)");
    find("public class Outer {\n  static class Inner {\n"
         "    public static void main(String[] args) {}\n  }\n}\n",
         "Outer", "Outer$Inner", "main in a nested class: its binary name");
    find("class A { class B { class C { public static void main(String[] x) {} } } }", "", "A$B$C",
         "main two levels deep");
    find("interface Main { static void main(String[] args) { System.out.println(1); } }", "",
         "Main", "main in an interface is public without saying so");
    find("interface I { void main(String[] a); }\nclass K { static void main(String[] a) {} }\n",
         "", "", "an abstract main, and a main that is not public, do not count");
    find("enum E { A, B;\n public static void main(String[] args) {} }", "", "E",
         "main in an enum after its constants");
    find("record Point(int x, int y) {\n public static void main(String[] args) {} }", "", "Point",
         "main in a record");
    find("/* public class Fake { public static void main(String[] a) {} } */\n"
         "// public class Fake2 { public static void main(String[] a) {} }\n"
         "class Real { public static void main(String[] a) {} }\n",
         "", "Real", "classes in comments do not count");
    find("class Real {\n  String s = \"public class Fake { public static void main(String[] a) "
         "{} }\";\n  char c = '{'; char d = '\\''; char q = '\"';\n"
         "  String t = \"}\\\" class X {\";\n"
         "  public static void main(String[] a) {}\n}\n",
         "", "Real", "braces and classes in strings and char literals do not count");
    find("class Real {\n  String tb = \"\"\"\n    public class Fake {\n"
         "      public static void main(String[] a) {} \\\"\"\" }\n    \"\"\";\n"
         "  public static void main(String[] a) {}\n}\n",
         "", "Real", "a text block (with an escaped quote run) does not count");
    find("public class Gen<T extends Comparable<T>> implements java.io.Serializable {\n"
         "  public static <U> void main(final String[] args) throws Exception {}\n}\n",
         "Gen", "Gen", "generics, final parameter, throws");
    find("@SuppressWarnings({\"unchecked\", \"rawtypes\"})\npublic final class Ann {\n"
         "  @Override public String toString() { return \"\"; }\n"
         "  @Deprecated\n  static public void main(@SuppressWarnings(\"x\") String args[]) {}\n}\n",
         "Ann", "Ann", "annotations (with braces in their arguments), C-style array parameter");
    find("public class P { public static void main(java.lang.String[] a) {} }", "P", "P",
         "java.lang.String[]");
    find("public class Q {\n  public static void main(String[] a, int b) {}\n"
         "  public static int main(String[] a) { return 0; }\n"
         "  public void main(String[] a) {}\n  private static void main(String... a) {}\n"
         "  public static void main(int[] a) {}\n  public static void main(String[][] a) {}\n}\n",
         "Q", "", "overloads that are not an entry point");
    find("public class Helper { }\nclass Main { public static void main(String[] a) {} }\n",
         "Helper", "Main", "a public class without main, main elsewhere");
    find("class First { public static void main(String[] a) {} }\n"
         "class Main { public static void main(String[] a) {} }\n",
         "", "Main", "two top-level mains: Main is preferred");
    find("class First { public static void main(String[] a) {} }\n"
         "public class Pub { public static void main(String[] a) {} }\n",
         "Pub", "Pub", "two top-level mains: the public class is preferred");
    find("class Outer { static class In { public static void main(String[] a) {} } }\n"
         "class Top { public static void main(String[] a) {} }\n",
         "", "Top", "a top-level main is preferred to a nested one");
    find("class W {\n  void f() {\n    class Local { public static void main(String[] a) {} }\n"
         "    Runnable r = new Runnable() { public void run() {} "
         "public static void main(String[] a) {} };\n  }\n}\n",
         "", "", "local and anonymous classes cannot be run");
    find("class Lit { Class<?> k = Lit.class; Object o = String.class;\n"
         "  public static void main(String[] a) {} }\n",
         "", "Lit", "X.class is no declaration");
    find("class R { int record = 1; void record(int x) {}\n"
         "  public static void main(String[] a) { record(record); } }\n",
         "", "R", "'record' as a name is no declaration");
    find("public class U\\u0041 { }", "U", "", "unicode escapes are not decoded");
    find("public class Caf\xc3\xa9 { public static void main(String[] a) {} }", "Caf\xc3\xa9",
         "Caf\xc3\xa9", "a non-ASCII class name");
    find("", "", "", "empty source");
    find("public class Broken { public static void main(String[] a) { \"unterminated\n } }",
         "Broken", "Broken", "an unterminated string ends at the line");
    {
        /* a class body holding 300 nested blocks, then main */
        char deep[1024] = "class Deep { void f() ";
        for (int i = 0; i < 300; i++)
            strcat(deep, "{");
        for (int i = 0; i < 300; i++)
            strcat(deep, "}");
        strcat(deep, " public static void main(String[] a) {} }");
        find(deep, "", "Deep", "300 nested blocks");
    }
    {
        /* 1 MB of nested parentheses, braces and comments: linear, no crash */
        size_t n = 1 << 20;
        char *big = malloc(n + 1);
        struct java_entry e;
        for (size_t i = 0; i < n; i++)
            big[i] = "{(/*\"'"[i % 6];
        big[n] = '\0';
        java_find_entry(big, n, &e);
        ok(e.main_class[0] == '\0', "1 MB of unbalanced punctuation and open literals");
        free(big);
    }
    return done_testing();
}
