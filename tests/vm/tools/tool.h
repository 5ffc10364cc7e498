/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the vm tier's guest tools share: a monotonic clock in nanoseconds,
 * a comparison for qsort() of long longs, and a bounded number argument.
 */
#ifndef LOEHLE_VM_TOOL_H
#define LOEHLE_VM_TOOL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline long long tool_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline int tool_cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* `s` as a number in [lo, hi]; else a one-line error and exit status 2. */
static inline long tool_number(const char *prog, const char *what, const char *s,
			       long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < lo || v > hi) {
		fprintf(stderr, "%s: %s must be %ld..%ld, not %s\n", prog, what, lo, hi, s);
		exit(2);
	}
	return v;
}

#endif /* LOEHLE_VM_TOOL_H */
