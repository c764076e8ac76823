/* Unit tests for src/util.c: number parsing, UTF-8 validation, file helpers. */
#include <fcntl.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"

int main(void)
{
    double d;
    uint64_t u;
    char buf[64], *big;
    size_t len;
    int p[2];

    ok(util_parse_double("1.5", 0, 10, &d) && d == 1.5, "parse_double accepts 1.5");
    ok(!util_parse_double("abc", 0, 10, &d), "parse_double rejects letters");
    ok(!util_parse_double("1.5x", 0, 10, &d), "parse_double rejects trailing junk");
    ok(!util_parse_double("-1", 0, 10, &d), "parse_double rejects below range");
    ok(!util_parse_double("11", 0, 10, &d), "parse_double rejects above range");
    ok(!util_parse_double("nan", 0, 10, &d), "parse_double rejects nan");
    ok(!util_parse_double("inf", 0, 1e9, &d), "parse_double rejects inf");
    ok(!util_parse_double("", 0, 10, &d), "parse_double rejects empty");
    ok(!util_parse_double(" 1", 0, 10, &d), "parse_double rejects leading space");
    ok(util_parse_u64("42", 1, 100, &u) && u == 42, "parse_u64 accepts 42");
    ok(!util_parse_u64("-1", 0, 100, &u), "parse_u64 rejects negative");
    ok(!util_parse_u64("1.5", 0, 100, &u), "parse_u64 rejects fractions");
    ok(!util_parse_u64("0", 1, 100, &u), "parse_u64 rejects below range");
    ok(!util_parse_u64("99999999999999999999999", 0, UINT64_MAX, &u), "parse_u64 rejects overflow");
    ok(!util_parse_u64("+5", 0, 100, &u), "parse_u64 rejects a sign");

    {
        char cut1[] = "ab\xc3", cut2[] = "ab\xe2\x82", whole[] = "ab\xc3\xa9",
             emoji[] = "\xf0\x9f\x98\x80";
        util_utf8_cut(cut1);
        util_utf8_cut(cut2);
        util_utf8_cut(whole);
        util_utf8_cut(emoji);
        ok(strcmp(cut1, "ab") == 0 && strcmp(cut2, "ab") == 0,
           "utf8_cut: a sequence cut short is dropped (2 and 3 bytes)");
        ok(strcmp(whole, "ab\xc3\xa9") == 0 && strcmp(emoji, "\xf0\x9f\x98\x80") == 0,
           "utf8_cut: whole sequences are kept");
    }
    ok(util_utf8_valid("hello", 5), "utf8: ascii");
    ok(util_utf8_valid("h\xc3\xa9llo", 6), "utf8: two-byte sequence");
    ok(util_utf8_valid("\xf0\x9f\x98\x80", 4), "utf8: four-byte emoji");
    ok(!util_utf8_valid("\xff", 1), "utf8: 0xff invalid");
    ok(!util_utf8_valid("\xc3", 1), "utf8: truncated sequence invalid");
    ok(!util_utf8_valid("\xc0\xaf", 2), "utf8: overlong invalid");
    ok(!util_utf8_valid("\xed\xa0\x80", 3), "utf8: surrogate invalid");
    ok(!util_utf8_valid("\xf4\x90\x80\x80", 4), "utf8: above U+10FFFF invalid");

    ok(util_read_small("/proc/self/stat", buf, sizeof(buf)) > 0 && strlen(buf) < sizeof(buf),
       "read_small NUL-terminates within the buffer");
    ok(util_read_small("/nonexistent/x", buf, sizeof(buf)) == -ENOENT,
       "read_small reports -ENOENT");
    ok(util_write_file("/nonexistent/x", "1") == -ENOENT, "write_file reports -ENOENT");

    if (pipe(p) == 0) {
        ok(util_write_all(p[1], "abcdef", 6) == 0, "write_all to a pipe");
        close(p[1]);
        ok(util_read_fd(p[0], &big, &len, 100) == 0 && len == 6 && strcmp(big, "abcdef") == 0,
           "read_fd reads to EOF and NUL-terminates");
        free(big);
        close(p[0]);
    }
    if (pipe(p) == 0) {
        util_write_all(p[1], "0123456789", 10);
        close(p[1]);
        ok(util_read_fd(p[0], &big, &len, 5) == -EFBIG, "read_fd enforces its maximum");
        close(p[0]);
    }
    {
        struct errbuf e = {{0}};
        ok(errbuf_set(&e, "cannot open '%s'", "x") == -EINVAL &&
               strcmp(e.msg, "cannot open 'x'") == 0,
           "errbuf_set formats and returns -EINVAL");
    }
    return done_testing();
}
