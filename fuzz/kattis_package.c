/*
 * kattis_package.c — fuzz target: a Kattis problem package (or a tree of them) built in a
 * scratch directory from the input, then converted (calibration off).
 *
 * The input is a little archive: each entry starts with a line "@@ PATH", and its content
 * runs to the next such line (the newline before it not included). "@@ PATH/" makes a
 * directory, "@@ PATH -> TARGET" a symlink to TARGET (anything: links that leave the package
 * must be refused by the converter). PATH is relative, without "." or ".." steps; an entry
 * with another path is skipped. At most 64 entries, 8 levels.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "convert.h"

/* safe_path(p) — relative, no empty, "." or ".." step, not too deep or long. */
static bool safe_path(const char *p)
{
    size_t depth = 0;

    if (!*p || *p == '/' || strlen(p) > 200)
        return false;
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.') ||
            ++depth > 8)
            return false;
        s += n;
        if (*s == '/')
            s++;
    }
    return true;
}

/* make_parents(root, rel) — the directories above root/rel; false when one of them is not
 * a directory of its own (a symlink made by an earlier entry must never be written through:
 * it may point anywhere on the host). */
static bool make_parents(const char *root, const char *rel)
{
    char path[512];
    struct stat st;

    for (const char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
        snprintf(path, sizeof(path), "%s/%.*s", root, (int)(s - rel), rel);
        if (lstat(path, &st) == 0 ? !S_ISDIR(st.st_mode) : mkdir(path, 0755) < 0)
            return false;
    }
    return true;
}

static void add_entry(const char *root, char *header, const uint8_t *data, size_t size)
{
    char *arrow = strstr(header, " -> "), path[512];
    size_t n = strlen(header);
    bool dir = !arrow && n && header[n - 1] == '/';

    if (arrow)
        *arrow = '\0';
    if (dir)
        header[n - 1] = '\0';
    if (!safe_path(header) || !make_parents(root, header))
        return;
    snprintf(path, sizeof(path), "%s/%s", root, header);
    if (arrow) {
        (void)!symlink(arrow + 4, path);
    } else if (dir) {
        mkdir(path, 0755);
    } else {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd >= 0) {
            (void)!write(fd, data, size);
            close(fd);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char root[512], header[256];
    unsigned entries = 0;

    snprintf(root, sizeof(root), "%s/pkg", fuzz_scratch_dir());
    fuzz_rm_tree(root);
    if (mkdir(root, 0755) < 0 && errno != EEXIST)
        abort();
    /* the first entry starts at the first "@@ " line; anything before it is ignored */
    while (p < end && entries < 64) {
        const uint8_t *nl, *next, *body;
        size_t hn;
        if (end - p < 3 || memcmp(p, "@@ ", 3) != 0) {
            const uint8_t *q = memchr(p, '\n', (size_t)(end - p));
            p = q ? q + 1 : end;
            continue;
        }
        nl = memchr(p, '\n', (size_t)(end - p));
        body = nl ? nl + 1 : end;
        hn = (size_t)((nl ? nl : end) - (p + 3));
        /* the content ends at the next line starting "@@ " */
        for (next = body; next < end; next++)
            if ((next == body || next[-1] == '\n') && end - next >= 3 &&
                memcmp(next, "@@ ", 3) == 0)
                break;
        if (hn < sizeof(header) && !memchr(p + 3, '\0', hn)) {
            size_t blen = (size_t)(next - body);
            if (blen && next < end && body[blen - 1] == '\n')
                blen--;
            memcpy(header, p + 3, hn);
            header[hn] = '\0';
            add_entry(root, header, body, blen);
            entries++;
        }
        p = next;
    }
    fuzz_convert(CONVERT_KATTIS, root);
    return 0;
}
