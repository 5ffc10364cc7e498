/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle-stallwatch: reports tasks that wait beside an idle CPU.
 *
 *   loehle-stallwatch [-i INTERVAL_MS] [-t THRESHOLD_MS] [-I IDLE_PCT] OUT
 *
 * Every INTERVAL_MS (default 250) it reads each thread's state and CPU
 * time (/proc/PID/task/TID/stat: state, utime + stime) and each CPU's idle
 * time (/proc/stat). A thread that stayed runnable (R) at every sample for
 * THRESHOLD_MS (default 1000) without gaining any CPU time, while a CPU in
 * its affinity mask was idle for at least IDLE_PCT (default 50) percent of
 * that time, is a stall: the worst bug a scheduler has, a runnable task
 * beside an idle CPU. Each one is appended to OUT as a line
 *
 *   stall: TID COMM waited MS ms runnable without CPU time; CPU C idle P% of it
 *
 * once per wait. Runs until SIGTERM or SIGINT. The vm tier's runner runs
 * it beside every case (tests/vm/run-cases.sh), and a line in OUT fails
 * the case. Sampling, not tracing: it cannot see waits shorter than the
 * threshold, and a thread that runs less than a clock tick (the resolution
 * of utime + stime) in the whole window counts as not run, which the
 * idle-CPU condition keeps from mattering: a correct scheduler runs such a
 * thread on the idle CPU long before the threshold.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define MAX_CPUS 256
#define MAX_THREADS 8192
#define MAX_HISTORY 256

struct thread {
	int tid;
	int seen;			/* in the current sample */
	int reported;			/* this wait was reported */
	unsigned long long cpu_ticks;	/* utime + stime at wait_start */
	long long wait_start_ns;	/* first sample of the current wait, 0: none */
	int wait_start_sample;
};

static struct thread threads[MAX_THREADS];
static int nr_threads;
/* Per-CPU idle ticks of the last MAX_HISTORY samples, a ring. */
static unsigned long long idle_hist[MAX_HISTORY][MAX_CPUS];
static long long sample_ns[MAX_HISTORY];
static int nr_cpus;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return (int)n;
}

/* An offline CPU has no line in /proc/stat: no idle time to compare. */
#define IDLE_UNKNOWN (~0ULL)

/* Idle + iowait ticks of every online CPU into idle_hist[slot]. */
static void read_idle(int slot)
{
	static char buf[1 << 16];
	char *line, *save = NULL;
	int cpu;
	unsigned long long v[8];

	memset(idle_hist[slot], 0xff, sizeof(idle_hist[slot]));
	if (read_file("/proc/stat", buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "cpu", 3) || !isdigit((unsigned char)line[3]))
			continue;
		if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2],
			   &v[3], &v[4]) != 6 || cpu < 0 || cpu >= MAX_CPUS)
			continue;
		idle_hist[slot][cpu] = v[3] + v[4];
		if (cpu + 1 > nr_cpus)
			nr_cpus = cpu + 1;
	}
}

static struct thread *thread_of(int tid)
{
	int i;

	for (i = 0; i < nr_threads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	if (nr_threads == MAX_THREADS)
		return NULL;
	memset(&threads[nr_threads], 0, sizeof(threads[0]));
	threads[nr_threads].tid = tid;
	return &threads[nr_threads++];
}

/*
 * The CPU of tid's mask that was idle the largest share of the wait (from
 * sample `from` to `slot`); its share in percent through *pct.
 */
static int idlest_allowed_cpu(int tid, int from, int slot, long hz, int *pct)
{
	double window = (sample_ns[slot] - sample_ns[from]) / 1e9, share, best = -1;
	cpu_set_t set;
	int cpu, found = -1;

	if (window <= 0 || sched_getaffinity(tid, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		if (!CPU_ISSET(cpu, &set) || idle_hist[slot][cpu] == IDLE_UNKNOWN ||
		    idle_hist[from][cpu] == IDLE_UNKNOWN ||
		    idle_hist[slot][cpu] < idle_hist[from][cpu])
			continue;
		share = (idle_hist[slot][cpu] - idle_hist[from][cpu]) / (double)hz / window;
		if (share > best) {
			best = share;
			found = cpu;
		}
	}
	*pct = (int)(best * 100 + 0.5);
	return found;
}

static void check_thread(FILE *out, int tid, const char *stat, int sample, int slot,
			 long long threshold_ns, int idle_pct, long hz, int self)
{
	const char *close_paren = strrchr(stat, ')'), *open_paren = strchr(stat, '(');
	unsigned long long utime, stime;
	struct thread *t;
	char state, comm[64];
	int cpu, pct, from;
	size_t len;

	if (!close_paren || !open_paren || tid == self)
		return;
	len = (size_t)(close_paren - open_paren - 1);
	if (len >= sizeof(comm))
		len = sizeof(comm) - 1;
	memcpy(comm, open_paren + 1, len);
	comm[len] = 0;
	/* After the comm: state, then fields 4-13, then utime (14), stime (15). */
	if (sscanf(close_paren + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu",
		   &state, &utime, &stime) != 3)
		return;
	t = thread_of(tid);
	if (!t)
		return;
	t->seen = 1;
	if (state != 'R' || utime + stime != t->cpu_ticks || !t->wait_start_ns) {
		t->cpu_ticks = utime + stime;
		t->wait_start_ns = state == 'R' ? sample_ns[slot] : 0;
		t->wait_start_sample = sample;
		t->reported = 0;
		return;
	}
	if (t->reported || sample_ns[slot] - t->wait_start_ns < threshold_ns)
		return;
	if (sample - t->wait_start_sample >= MAX_HISTORY)
		return;
	from = t->wait_start_sample % MAX_HISTORY;
	cpu = idlest_allowed_cpu(tid, from, slot, hz, &pct);
	if (cpu < 0 || pct < idle_pct)
		return;
	fprintf(out, "stall: %d %s waited %lld ms runnable without CPU time; CPU %d idle %d%% of it\n",
		tid, comm, (sample_ns[slot] - t->wait_start_ns) / 1000000, cpu, pct);
	fflush(out);
	t->reported = 1;
}

static void sample_threads(FILE *out, int sample, int slot, long long threshold_ns,
			   int idle_pct, long hz, int self)
{
	char path[96], stat[1024];
	struct dirent *p, *t;
	DIR *procs, *tasks;
	int i, pid, tid;

	for (i = 0; i < nr_threads; i++)
		threads[i].seen = 0;
	procs = opendir("/proc");
	if (!procs)
		return;
	while ((p = readdir(procs))) {
		pid = atoi(p->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		tasks = opendir(path);
		if (!tasks)
			continue;
		while ((t = readdir(tasks))) {
			tid = atoi(t->d_name);
			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
			if (read_file(path, stat, sizeof(stat)) > 0)
				check_thread(out, tid, stat, sample, slot, threshold_ns, idle_pct, hz,
					     self);
		}
		closedir(tasks);
	}
	closedir(procs);
	/* Forget threads that are gone. */
	for (i = 0; i < nr_threads;) {
		if (!threads[i].seen)
			threads[i] = threads[--nr_threads];
		else
			i++;
	}
}

int main(int argc, char **argv)
{
	long interval_ms = 250, threshold_ms = 1000, idle_pct = 50, hz = sysconf(_SC_CLK_TCK);
	struct timespec next;
	int opt, sample = 0, self = getpid();
	FILE *out;

	while ((opt = getopt(argc, argv, "i:t:I:")) != -1) {
		switch (opt) {
		case 'i': interval_ms = tool_number(argv[0], "-i", optarg, 10, 10000); break;
		case 't': threshold_ms = tool_number(argv[0], "-t", optarg, 100, 600000); break;
		case 'I': idle_pct = tool_number(argv[0], "-I", optarg, 1, 100); break;
		default:
			fprintf(stderr, "usage: %s [-i INTERVAL_MS] [-t THRESHOLD_MS] [-I IDLE_PCT] OUT\n",
				argv[0]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: %s [-i INTERVAL_MS] [-t THRESHOLD_MS] [-I IDLE_PCT] OUT\n",
			argv[0]);
		return 2;
	}
	if (threshold_ms / interval_ms >= MAX_HISTORY - 1) {
		fprintf(stderr, "%s: THRESHOLD_MS / INTERVAL_MS must be under %d\n", argv[0],
			MAX_HISTORY - 1);
		return 2;
	}
	out = fopen(argv[optind], "a");
	if (!out) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[optind], strerror(errno));
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		int slot = sample % MAX_HISTORY;

		sample_ns[slot] = tool_now_ns();
		read_idle(slot);
		sample_threads(out, sample, slot, threshold_ms * 1000000LL, (int)idle_pct, hz, self);
		sample++;
		next.tv_nsec += interval_ms * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	fclose(out);
	return 0;
}
