/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle-wakelat: how late a sleeping task runs after its timer expires.
 *
 *   loehle-wakelat INTERVAL_US COUNT
 *
 * Sleeps COUNT times until an absolute CLOCK_MONOTONIC deadline INTERVAL_US
 * apart and prints "avg_us p99_us max_us" of (time running - deadline).
 * A wakeup later than a whole period starts the next period from itself,
 * so one long wait is counted once, not again in every later deadline.
 * Unlike cyclictest it never sets its own CPU affinity, so its wakeups go
 * through the scheduler's select_cpu with whatever mask it inherited: the VM
 * cases use it to measure where a normal wakee is placed, and how fast it
 * then runs (tests/vm/cases/seeds.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct timespec next, now;
	long long *late, sum = 0;
	long interval_us, count, i;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: %s INTERVAL_US COUNT\n", argv[0]);
		return 2;
	}
	interval_us = strtol(argv[1], &end, 10);
	if (*end || interval_us < 1 || interval_us > 10000000) {
		fprintf(stderr, "%s: INTERVAL_US must be 1..10000000, not %s\n", argv[0], argv[1]);
		return 2;
	}
	count = strtol(argv[2], &end, 10);
	if (*end || count < 1 || count > 10000000) {
		fprintf(stderr, "%s: COUNT must be 1..10000000, not %s\n", argv[0], argv[2]);
		return 2;
	}
	late = calloc(count, sizeof(*late));
	if (!late) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (i = 0; i < count; i++) {
		next.tv_nsec += interval_us * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
		late[i] = ns_of(&now) - ns_of(&next);
		sum += late[i];
		/* Later than a period: count the next period from now. */
		if (late[i] > interval_us * 1000)
			next = now;
	}
	qsort(late, count, sizeof(*late), cmp);
	printf("%lld %lld %lld\n", sum / count / 1000, late[(count * 99) / 100] / 1000,
	       late[count - 1] / 1000);
	free(late);
	return 0;
}
