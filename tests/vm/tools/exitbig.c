/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle-exitbig: how long a large process takes to exit.
 *
 *   loehle-exitbig CPU MIB COUNT
 *
 * COUNT times: fork a child that pins itself to CPU, touches MIB MiB of
 * anonymous memory, widens its affinity to every CPU and then _exit()s at
 * once, still on CPU (its slice does not end in between). The parent times
 * the span from the child's last word before _exit() to wait4() returning,
 * and prints "median_us max_us" of the COUNT exits.
 *
 * The exit unmaps the memory over many slices, as an exiting
 * (PF_EXITING) task whose mask allows other CPUs: the stall-path case of
 * tests/vm/cases/stalls.sh, where a scheduler that wants to move it at a
 * slice end (seed 002's SMT move) must not leave it behind an idle CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

/* The child: never returns. */
static void child(int cpu, long mib, int fd)
{
	cpu_set_t set;
	size_t len = (size_t)mib << 20;
	char *mem;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(10);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(11);
	memset(mem, 1, len);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(12);
	if (write(fd, "x", 1) != 1)
		_exit(13);
	_exit(0);
}

int main(int argc, char **argv)
{
	long cpu, mib, count, i;
	long long *took, t0;
	int fds[2], status;
	char c;
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: %s CPU MIB COUNT\n", argv[0]);
		return 2;
	}
	cpu = tool_number(argv[0], "CPU", argv[1], 0, CPU_SETSIZE - 1);
	mib = tool_number(argv[0], "MIB", argv[2], 1, 65536);
	count = tool_number(argv[0], "COUNT", argv[3], 1, 100000);
	took = calloc(count, sizeof(*took));
	if (!took) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	for (i = 0; i < count; i++) {
		if (pipe(fds)) {
			fprintf(stderr, "%s: pipe: %s\n", argv[0], strerror(errno));
			return 1;
		}
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", argv[0], strerror(errno));
			return 1;
		}
		if (pid == 0) {
			close(fds[0]);
			child((int)cpu, mib, fds[1]);
		}
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1) {
			waitpid(pid, &status, 0);
			fprintf(stderr, "%s: child %d ended early (status 0x%x)\n", argv[0], pid, status);
			return 1;
		}
		t0 = tool_now_ns();
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "%s: child %d failed (status 0x%x)\n", argv[0], pid, status);
			return 1;
		}
		took[i] = tool_now_ns() - t0;
		close(fds[0]);
	}
	qsort(took, count, sizeof(*took), tool_cmp_ll);
	printf("%lld %lld\n", took[count / 2] / 1000, took[count - 1] / 1000);
	free(took);
	return 0;
}
