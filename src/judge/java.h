/*
 * java.h — where a Java program starts, read from its source text.
 *
 * javac wants a file named after its public top-level class, and `java` must be given the
 * class that declares `public static void main(String[])`. Judges (Kattis, Codeforces)
 * take programs whatever those classes are called (`public class Different`, `class Main`,
 * several top-level classes, a main in a nested class or an interface), so crucible finds
 * both names in the source before it compiles. A small lexer skips comments, string and
 * char literals and text blocks, so a name inside them never counts.
 */
#ifndef CRUCIBLE_JAVA_H
#define CRUCIBLE_JAVA_H

#include <stdbool.h>
#include <stddef.h>

#define JAVA_NAME_MAX 256 /* longer class names are not considered */

struct java_entry {
    char public_class[JAVA_NAME_MAX]; /* first public top-level class, or "" */
    char main_class[JAVA_NAME_MAX];   /* the class to run (binary name: Outer$Inner), or "" */
};

/* java_find_entry(src, len, e) — fills e from the source text (src need not end in NUL).
 * A main method is `main` with `static` and `void` (and `public`, implicit in an
 * interface) taking one String[] / String... parameter, declared directly in a class,
 * interface, enum or record that is top-level or nested in such (never a local or anonymous
 * class). When several classes declare one, the first that applies of: the public top-level
 * class, a top-level class named Main, the first top-level class, the first nested class.
 * Runs in time linear in len; never reads past it. */
void java_find_entry(const char *src, size_t len, struct java_entry *e);

#endif
