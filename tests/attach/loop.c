/* attach-loop: a program started without the shim, for the tests of fbcount attach. It falls
 * back through the test backend (tests/shim/fakevkt.c) when told to, so that a test knows
 * exactly how many fallbacks happened before and after an attach: a handshake, not timing.
 * Commands, one a line on standard input; each is answered by one line on standard output:
 *   fall N    N vkt_dot fallbacks from the named line below; "did N total T backend B"
 *             (T: all its fallbacks so far, B: the host_result calls the backend received)
 *   exit C    exits with status C (after "bye")
 * End of input exits 0. It prints "pid N" first.
 *   --term-handler   SIGTERM runs a handler of its own that prints "term after T" and
 *                    exits 3 (the program's own behaviour an attach must keep) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakevkt.h"

static fake_tensor t32 = {0, 2, {16, 32}};
static volatile long total;

static void on_term(int sig)
{
    (void)sig;
    char line[64];
    int n = snprintf(line, sizeof line, "term after %ld\n", total);
    (void)!write(STDOUT_FILENO, line, (size_t)n);
    _exit(3);
}

__attribute__((noinline)) static void fall(long n)
{
    for (long i = 0; i < n; i++) {
        vkt_dot(&t32, 2048); /* ATTACH-SITE: the user's line the census must name */
        total++;
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--term-handler")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigaction(SIGTERM, &sa, NULL);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("pid %ld\n", (long)getpid());
    char cmd[64];
    long arg;
    while (scanf("%63s %ld", cmd, &arg) == 2) {
        if (!strcmp(cmd, "fall")) {
            fall(arg);
            printf("did %ld total %ld backend %llu\n", arg, total,
                   (unsigned long long)fake_calls());
        } else if (!strcmp(cmd, "exit")) {
            printf("bye\n");
            return (int)arg;
        }
    }
    return 0;
}
