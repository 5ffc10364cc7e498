/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle-percpu-work: how long per-CPU kernel work waits for its CPU.
 *
 *   loehle-percpu-work COUNT
 *
 * COUNT times: write "1" to /proc/sys/vm/stat_refresh, which queues a work
 * item on every online CPU's bound kworker (kworker/N, a per-CPU kthread)
 * and waits until all of them ran. Prints "median_us p80_us max_us" of the
 * writes (p80: a bound on it allows a few slow writes, one host hiccup each
 * under TCG, where a bound on the max would not). A CPU whose kworker waits behind the running task (a slice, up
 * to a second with --slice-us) makes each write that long: the case of
 * tests/vm/cases/stalls.sh, where idle work must yield to such a kthread
 * at once, as the fair class lets any non-idle task preempt idle work.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

int main(int argc, char **argv)
{
	const char *path = "/proc/sys/vm/stat_refresh";
	long long *took, t0;
	long count, i;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s COUNT\n", argv[0]);
		return 2;
	}
	count = tool_number(argv[0], "COUNT", argv[1], 1, 1000000);
	took = calloc(count, sizeof(*took));
	if (!took) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], path, strerror(errno));
		return 1;
	}
	for (i = 0; i < count; i++) {
		t0 = tool_now_ns();
		/* stat_refresh answers EINVAL when a counter was negative: still run. */
		if (pwrite(fd, "1\n", 2, 0) < 0 && errno != EINVAL) {
			fprintf(stderr, "%s: write %s: %s\n", argv[0], path, strerror(errno));
			return 1;
		}
		took[i] = tool_now_ns() - t0;
	}
	close(fd);
	qsort(took, count, sizeof(*took), tool_cmp_ll);
	printf("%lld %lld %lld\n", took[count / 2] / 1000, took[(count * 8) / 10] / 1000,
	       took[count - 1] / 1000);
	free(took);
	return 0;
}
