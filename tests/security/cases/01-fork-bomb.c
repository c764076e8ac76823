/*
 * 01-fork-bomb — catalogue row 1: an exponential fork bomb.
 *
 * expect: ok
 * run: --pids 32 --wall-time 10
 *
 * Every process forks again and again. The pids cgroup must make fork() fail with EAGAIN long
 * before the program's own cap of 2000 forks; the program then stops the bomb and exits 0.
 * Bounds for a broken sandbox: 2000 forks in total (a shared counter), every process exits on
 * the stop flag or after 10 s (alarm), and the children hold /dev/null, not the output pipes.
 */
#include "../hostile.h"
#include <stdatomic.h>
#include <sys/mman.h>

#define FORK_CAP 2000

struct bomb {
    atomic_int attempts; /* fork() calls made, across all processes */
    atomic_int forks;    /* successful forks */
    atomic_int eagain;   /* failed forks (EAGAIN) */
    atomic_int other;    /* failed forks (another errno) */
    atomic_int stop;     /* set by the main process: everybody exits */
};

static struct bomb *b;

static void bomb_loop(void)
{
    while (!atomic_load(&b->stop)) {
        if (atomic_fetch_add(&b->attempts, 1) >= FORK_CAP + 200)
            break;
        if (atomic_load(&b->forks) >= FORK_CAP)
            break;
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10);
            int fd = open("/dev/null", O_RDWR);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
            continue; /* the child keeps bombing */
        }
        if (pid > 0) {
            atomic_fetch_add(&b->forks, 1);
        } else if (errno == EAGAIN) {
            atomic_fetch_add(&b->eagain, 1);
            usleep(2000);
        } else {
            atomic_fetch_add(&b->other, 1);
            usleep(2000);
        }
        if (atomic_load(&b->eagain) + atomic_load(&b->other) > 400)
            break;
    }
}

int main(void)
{
    hostile_init(15);
    b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) {
        inconclusive("mmap: %s", strerror(errno));
        return hostile_finish();
    }
    pid_t self = getpid();
    double deadline = now_s() + 5;
    pid_t first = fork();
    if (first == 0) {
        alarm(10);
        int fd = open("/dev/null", O_RDWR);
        dup2(fd, 1);
        dup2(fd, 2);
        bomb_loop();
        while (!atomic_load(&b->stop))
            usleep(10000);
        _exit(0);
    }
    if (first < 0) {
        inconclusive("first fork failed: %s", strerror(errno));
        return hostile_finish();
    }
    atomic_fetch_add(&b->forks, 1);
    /* Let the bomb run until the limit bites, the cap is reached, or 5 s pass. */
    while (now_s() < deadline && atomic_load(&b->forks) < FORK_CAP &&
           atomic_load(&b->eagain) + atomic_load(&b->other) < 200)
        usleep(10000);
    atomic_store(&b->stop, 1);
    int forks = atomic_load(&b->forks), eagain = atomic_load(&b->eagain);
    int other = atomic_load(&b->other);
    note("pid %d: %d successful forks, %d EAGAIN, %d other failures", (int)self, forks, eagain,
         other);
    if (forks >= FORK_CAP)
        escaped("%d forks succeeded without hitting a pids limit", forks);
    else if (eagain > 0)
        contained("fork bomb stopped by EAGAIN after %d forks", forks);
    else
        inconclusive("the bomb neither hit EAGAIN nor the cap within 5 s");
    usleep(200000); /* let the children see the stop flag */
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    return hostile_finish();
}
