/*
 * 33-bpf — catalogue row 30: the bpf() syscall.
 *
 * expect: ok
 *
 * Creating a map and loading a trivial socket-filter program must both fail.
 */
#include "../hostile.h"
#include <linux/bpf.h>

static long bpf_map(void)
{
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.map_type = BPF_MAP_TYPE_ARRAY;
    a.key_size = 4;
    a.value_size = 8;
    a.max_entries = 1;
    return syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
}

static long bpf_prog(void)
{
    struct bpf_insn insns[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0}, /* r0 = 0 */
        {.code = BPF_JMP | BPF_EXIT},                                  /* exit */
    };
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    a.insns = (uint64_t)(uintptr_t)insns;
    a.insn_cnt = 2;
    a.license = (uint64_t)(uintptr_t) "GPL";
    return syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
}

int main(void)
{
    hostile_init(15);
    PROBE("bpf(BPF_MAP_CREATE)", bpf_map());
    PROBE("bpf(BPF_PROG_LOAD socket filter)", bpf_prog());
    return hostile_finish();
}
