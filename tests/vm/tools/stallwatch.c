/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle-stallwatch: reports tasks that wait beside an idle CPU.
 *
 *   loehle-stallwatch [-i INTERVAL_MS] [-t THRESHOLD_MS] [-I IDLE_PCT]
 *                     [-S SHARED_OUT [-s WINDOW_MS]] OUT
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
 *
 * With -S it also appends to SHARED_OUT what the stall rule cannot see:
 * a thread runnable (R) at every sample of a WINDOW_MS window (default
 * 2000) that gained under SHARED_RAN_PCT of it in CPU time while a CPU of
 * its mask was idle at least SHARED_IDLE_PCT of it, i.e. that took turns
 * on a busy CPU beside an idle one:
 *
 *   shared: TID COMM runnable MS ms, ran R% of it; CPU C idle P% of it
 *
 * one line per such window. A report, not a verdict: a thread that sleeps
 * and wakes between samples looks the same, and under TCG a vCPU's ticks
 * lag its wall time now and then.
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
#define SHARED_RAN_PCT 40
#define SHARED_IDLE_PCT 80

struct thread {
	int tid;
	int seen;			/* in the current sample */
	int reported;			/* this wait was reported */
	unsigned long long cpu_ticks;	/* utime + stime at wait_start */
	long long wait_start_ns;	/* first sample of the current wait, 0: none */
	int wait_start_sample;
	/* The current window of the -S report: runnable at every sample. */
	unsigned long long run_ticks;	/* utime + stime at run_start */
	long long run_start_ns;		/* 0: not runnable at the last sample */
	int run_start_sample;
};

/* What main's options set. */
struct watch {
	FILE *out, *shared;		/* shared: NULL without -S */
	long long threshold_ns, window_ns;
	int idle_pct;
	long hz;
	int self;			/* our own pid, never reported */
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

/*
 * The -S report for thread `t` (state, CPU ticks now): windows of
 * `window_ns` in which it stayed runnable, ran little, and a CPU of its
 * mask was idle.
 */
static void check_shared(FILE *shared, struct thread *t, const char *comm, char state,
			 unsigned long long ticks, int sample, int slot, long long window_ns,
			 long hz)
{
	long long span_ns;
	int cpu, pct, ran_pct;

	if (state != 'R' || !t->run_start_ns || sample - t->run_start_sample >= MAX_HISTORY) {
		t->run_start_ns = state == 'R' ? sample_ns[slot] : 0;
		t->run_start_sample = sample;
		t->run_ticks = ticks;
		return;
	}
	span_ns = sample_ns[slot] - t->run_start_ns;
	if (span_ns < window_ns)
		return;
	ran_pct = (int)((ticks - t->run_ticks) * 1e9 / hz / span_ns * 100);
	cpu = idlest_allowed_cpu(t->tid, t->run_start_sample % MAX_HISTORY, slot, hz, &pct);
	if (ran_pct < SHARED_RAN_PCT && cpu >= 0 && pct >= SHARED_IDLE_PCT) {
		fprintf(shared, "shared: %d %s runnable %lld ms, ran %d%% of it; CPU %d idle %d%% of it\n",
			t->tid, comm, span_ns / 1000000, ran_pct, cpu, pct);
		fflush(shared);
	}
	t->run_start_ns = sample_ns[slot];
	t->run_start_sample = sample;
	t->run_ticks = ticks;
}

static void check_thread(const struct watch *w, int tid, const char *stat, int sample,
			 int slot)
{
	const char *close_paren = strrchr(stat, ')'), *open_paren = strchr(stat, '(');
	unsigned long long utime, stime;
	struct thread *t;
	char state, comm[64];
	int cpu, pct, from;
	size_t len;

	if (!close_paren || !open_paren || tid == w->self)
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
	if (w->shared)
		check_shared(w->shared, t, comm, state, utime + stime, sample, slot, w->window_ns,
			     w->hz);
	if (state != 'R' || utime + stime != t->cpu_ticks || !t->wait_start_ns) {
		t->cpu_ticks = utime + stime;
		t->wait_start_ns = state == 'R' ? sample_ns[slot] : 0;
		t->wait_start_sample = sample;
		t->reported = 0;
		return;
	}
	if (t->reported || sample_ns[slot] - t->wait_start_ns < w->threshold_ns)
		return;
	if (sample - t->wait_start_sample >= MAX_HISTORY)
		return;
	from = t->wait_start_sample % MAX_HISTORY;
	cpu = idlest_allowed_cpu(tid, from, slot, w->hz, &pct);
	if (cpu < 0 || pct < w->idle_pct)
		return;
	fprintf(w->out, "stall: %d %s waited %lld ms runnable without CPU time; CPU %d idle %d%% of it\n",
		tid, comm, (sample_ns[slot] - t->wait_start_ns) / 1000000, cpu, pct);
	fflush(w->out);
	t->reported = 1;
}

static void sample_threads(const struct watch *w, int sample, int slot)
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
				check_thread(w, tid, stat, sample, slot);
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

static FILE *open_append(const char *prog, const char *path)
{
	FILE *f = fopen(path, "a");

	if (!f)
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
	return f;
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-i INTERVAL_MS] [-t THRESHOLD_MS] [-I IDLE_PCT] [-S SHARED_OUT [-s WINDOW_MS]] OUT\n",
		prog);
	return 2;
}

/* Fills *w and *interval_ms from the command line; 0, or main's status. */
static int parse_options(int argc, char **argv, struct watch *w, long *interval_ms)
{
	long threshold_ms = 1000, window_ms = 2000;
	const char *shared = NULL;
	int opt;

	*interval_ms = 250;
	w->idle_pct = 50;
	while ((opt = getopt(argc, argv, "i:t:I:S:s:")) != -1) {
		switch (opt) {
		case 'i': *interval_ms = tool_number(argv[0], "-i", optarg, 10, 10000); break;
		case 't': threshold_ms = tool_number(argv[0], "-t", optarg, 100, 600000); break;
		case 'I': w->idle_pct = (int)tool_number(argv[0], "-I", optarg, 1, 100); break;
		case 'S': shared = optarg; break;
		case 's': window_ms = tool_number(argv[0], "-s", optarg, 100, 600000); break;
		default: return usage(argv[0]);
		}
	}
	if (optind != argc - 1)
		return usage(argv[0]);
	if (threshold_ms / *interval_ms >= MAX_HISTORY - 1 ||
	    window_ms / *interval_ms >= MAX_HISTORY - 1) {
		fprintf(stderr, "%s: THRESHOLD_MS and WINDOW_MS / INTERVAL_MS must be under %d\n",
			argv[0], MAX_HISTORY - 1);
		return 2;
	}
	w->threshold_ns = threshold_ms * 1000000LL;
	w->window_ns = window_ms * 1000000LL;
	w->hz = sysconf(_SC_CLK_TCK);
	w->self = getpid();
	w->out = open_append(argv[0], argv[optind]);
	if (!w->out)
		return 1;
	w->shared = shared ? open_append(argv[0], shared) : NULL;
	return shared && !w->shared ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct watch w = { 0 };
	struct timespec next;
	long interval_ms;
	int sample = 0, status = parse_options(argc, argv, &w, &interval_ms);

	if (status)
		return status;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		int slot = sample % MAX_HISTORY;

		sample_ns[slot] = tool_now_ns();
		read_idle(slot);
		sample_threads(&w, sample, slot);
		sample++;
		next.tv_nsec += interval_ms * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	fclose(w.out);
	if (w.shared)
		fclose(w.shared);
	return 0;
}
