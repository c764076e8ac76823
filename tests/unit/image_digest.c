/* Unit tests for src/image/digest.c: sha256 against the FIPS 180-2 vectors, pieces, fds, and
 * the syntax check. */
#include <stdio.h>
#include <unistd.h>

#include "image/digest.h"
#include "tap.h"

int main(void)
{
    char out[DIGEST_LEN + 1], whole[DIGEST_LEN + 1];
    struct digest_ctx ctx;
    uint64_t size = 0;
    FILE *f = tmpfile();

    ok(digest_buffer("abc", 3, out) == 0 &&
           strcmp(out, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") ==
               0,
       "sha256(\"abc\") is the FIPS vector (%s)", out);
    ok(digest_buffer("", 0, out) == 0 &&
           strcmp(out, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") ==
               0,
       "sha256 of nothing");
    digest_buffer("hello world", 11, whole);
    ok(digest_init(&ctx) == 0, "a context");
    digest_update(&ctx, "hello", 5);
    digest_update(&ctx, " world", 6);
    digest_final(&ctx, out);
    ok(strcmp(out, whole) == 0, "pieces digest as the whole");
    fputs("hello world", f);
    fflush(f);
    lseek(fileno(f), 0, SEEK_SET);
    ok(digest_fd(fileno(f), out, &size) == 0 && strcmp(out, whole) == 0 && size == 11,
       "a file's digest and size");
    fclose(f);
    ok(digest_valid(whole), "a digest is valid");
    ok(!digest_valid("sha256:ABC"), "short or upper case is not");
    ok(!digest_valid("sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
       "another algorithm is not");
    ok(!digest_valid("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015aD"),
       "an upper-case digit is not");
    ok(!digest_valid(NULL), "NULL is not");
    return done_testing();
}
