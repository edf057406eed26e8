/*
 * Child processes of the benchmark: the CLI run as a user runs it, so its
 * wall time and peak RSS can be compared with any other tool on the same
 * file.
 */
#define _DEFAULT_SOURCE /* wait4 */

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

int bench_spawn(char *const argv[], const char *err_path, long *rss_kib) {
    *rss_kib = 0;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        return -1;
    }
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) {
        rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    }
    if (rc == 0) {
        rc = posix_spawn_file_actions_addopen(
            &fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    pid_t pid = -1;
    if (rc == 0) {
        rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    }
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "bench: cannot run %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t w;
    do {
        w = wait4(pid, &status, 0, &ru);
    } while (w < 0 && errno == EINTR);
    if (w < 0) {
        fprintf(stderr, "bench: wait for %s: %s\n", argv[0], strerror(errno));
        return -1;
    }
    *rss_kib = ru.ru_maxrss; /* KiB on Linux */
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double bench_load(void) {
    double load[1];
    return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

long bench_cores(void) { return sysconf(_SC_NPROCESSORS_ONLN); }
