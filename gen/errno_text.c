/*
 * errno_text.c — prints errno_text[], the C library's strerror text for each errno value this
 * machine's libc names, as C source: a job's small init (src/sandbox/jobinit.c, built with
 * another libc) words its errors with it as every other crucible process does.
 */
#include <stdio.h>
#include <string.h>

int main(void)
{
    printf("static const char *const errno_text[] = {\n");
    for (int e = 0; e < 256; e++) {
        const char *t = strerror(e);
        if (strncmp(t, "Unknown error", 13) == 0)
            continue;
        printf("    [%d] = \"", e);
        for (; *t; t++)
            printf(*t == '"' || *t == '\\' ? "\\%c" : "%c", *t);
        printf("\",\n");
    }
    printf("};\n");
    return 0;
}
