/*
 * 51-checksum — the well-behaved neighbour: a fixed computation with a known answer.
 *
 * expect: ok
 *
 * About 0.3 s of CPU: a 64-bit FNV-1a hash over a xorshift stream. run.t runs it once bare on
 * the host for the expected line, then inside the sandbox (this case) and beside a fork bomb
 * and a memory bomb (the noisy-neighbour test); every sandboxed answer must match.
 */
#include <stdint.h>
#include <stdio.h>

int main(void)
{
    uint64_t x = 0x9e3779b97f4a7c15u, h = 0xcbf29ce484222325u;
    for (long i = 0; i < 180000000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        h = (h ^ (x & 0xff)) * 0x100000001b3u;
    }
    printf("checksum %016llx\n", (unsigned long long)h);
    return 0;
}
