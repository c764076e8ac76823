/* checker.c — fuzz target: the output checkers (judge/checker.h). The first byte picks the
 * kind; the rest is cut at NUL bytes into the kattis flag string (which, for float, gives
 * the tolerances), the output and the answer. */
#include "fuzz.h"
#include "judge/checker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *flags, *rest, *out, *exp;
    size_t flags_len, rest_len, out_len, exp_len;
    struct checker c;
    struct errbuf err = {{0}};
    char why[200], *fl;
    enum checker_kind kind;
    int rc;

    if (size < 1)
        return 0;
    kind = (enum checker_kind)(data[0] % 5);
    fuzz_split(data + 1, size - 1, &flags, &flags_len, &rest, &rest_len);
    fuzz_split((const uint8_t *)rest, rest_len, &out, &out_len, &exp, &exp_len);
    fl = fuzz_strndup((const uint8_t *)flags, flags_len);
    rc = checker_kattis_flags(fl, &c, &err);
    free(fl);
    if (rc < 0)
        return 0;
    if (kind == CHECKER_FLOAT) {
        c.abs_tol = c.abs_tol < 0 ? 0 : c.abs_tol;
        c.rel_tol = c.rel_tol < 0 ? 0 : c.rel_tol;
    }
    c.kind = kind;
    /* Exact-size copies, so that reading past either buffer is seen. */
    {
        char *o = malloc(out_len ? out_len : 1), *e = malloc(exp_len ? exp_len : 1);
        if (!o || !e)
            abort();
        memcpy(o, out, out_len);
        memcpy(e, exp, exp_len);
        checker_compare(&c, o, out_len, e, exp_len, why, sizeof(why));
        checker_compare(&c, e, exp_len, o, out_len, why, sizeof(why));
        checker_compare(&c, o, out_len, e, exp_len, why, 1);
        free(o);
        free(e);
    }
    return 0;
}
