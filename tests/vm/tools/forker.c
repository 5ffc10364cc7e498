/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle-forker: forks from one CPU onto all of them.
 *
 *   loehle-forker HOME_CPU FORKS
 *
 * Runs on HOME_CPU only and FORKS times forks a child that exits at once,
 * then reaps it. A count rather than a duration, so that a test's sample
 * size does not depend on how fast the guest runs. Fails when more than a
 * tenth of the forks were made away from HOME_CPU (the parent was moved
 * while its mask was wide), since those would bias the counts again. Each child is placed by the
 * scheduler's fork path (select_cpu with SCX_WAKE_FORK) with every online
 * CPU allowed: the parent widens its own mask just before fork(), since the
 * child inherits it, and narrows it again just after. A stress-ng --fork
 * parent instead runs wherever its wakeups put it, so at each fork one of
 * the CPUs a test expects to tie is busy with the parent itself, and which
 * one drifts from run to run; pinning the parent takes that bias out of the
 * uniformity checks of tests/vm/cases/seeds.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_mask(const cpu_set_t *mask, const char *what)
{
	if (sched_setaffinity(0, sizeof(*mask), mask)) {
		perror(what);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	cpu_set_t home, everywhere;
	long home_cpu, forks, cpu, ncpus, i, away = 0;
	char *end;
	pid_t child;

	if (argc != 3) {
		fprintf(stderr, "usage: %s HOME_CPU FORKS\n", argv[0]);
		return 2;
	}
	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	home_cpu = strtol(argv[1], &end, 10);
	if (!*argv[1] || *end || home_cpu < 0 || home_cpu >= ncpus || home_cpu >= CPU_SETSIZE) {
		fprintf(stderr, "%s: HOME_CPU must be 0..%ld, not %s\n", argv[0], ncpus - 1, argv[1]);
		return 2;
	}
	forks = strtol(argv[2], &end, 10);
	if (!*argv[2] || *end || forks < 1 || forks > 100000000) {
		fprintf(stderr, "%s: FORKS must be 1..100000000, not %s\n", argv[0], argv[2]);
		return 2;
	}
	CPU_ZERO(&home);
	CPU_SET(home_cpu, &home);
	CPU_ZERO(&everywhere);
	for (cpu = 0; cpu < ncpus && cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &everywhere);
	if (set_mask(&home, "sched_setaffinity(HOME_CPU)"))
		return 1;
	for (i = 0; i < forks; i++) {
		/* Widening the mask of a running task never moves it. */
		if (set_mask(&everywhere, "sched_setaffinity(all)"))
			return 1;
		if (sched_getcpu() != home_cpu)
			away++;
		child = fork();
		if (child == 0)
			_exit(0);
		if (set_mask(&home, "sched_setaffinity(HOME_CPU)"))
			return 1;
		if (child < 0) {
			perror("fork");
			return 1;
		}
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (away * 10 > forks) {
		fprintf(stderr, "%s: %ld of %ld forks were made away from CPU %ld\n", argv[0], away, forks,
			home_cpu);
		return 1;
	}
	return 0;
}
