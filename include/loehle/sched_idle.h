/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle's per-CPU sched-idle state: which CPUs run only idle work, and
 * which wakee is on its way to preempt it. Seeds 003 and 004 rest on one
 * premise: a CPU that runs only SCHED_IDLE work can be taken at once by a
 * wakee that may preempt it. This header says when that holds.
 *
 * Pure functions over one struct loehle_si_cpu, included by
 * scx/loehle.bpf.c (one per CPU, in the cpu_states map) and by the host
 * tests (tests/unit/sched_idle_test.cc). The BPF callbacks only report
 * what happened; every transition is decided here.
 *
 * State: what of ours runs (nothing, a normal task, a SCHED_IDLE task),
 * whether a higher scheduling class holds the CPU, and a claim word.
 *
 * Transitions, one per callback:
 *   running(p)   the CPU runs p; it is ours again (release ends). A normal
 *                task ends any claim (the CPU is not sched-idle any more),
 *                and so does the claimant itself arriving.
 *   stopping(p)  nothing of ours runs until the next running(). So a CPU
 *                whose SCHED_IDLE task was preempted by RT, DL or stop work
 *                is never sched-idle behind that thread.
 *   release      a higher class took the CPU (ops.cpu_release).
 *   acquire      it gave the CPU back (ops.cpu_acquire).
 *   idle         the CPU went idle: everything is reset.
 *   tick(idle)   the running task's idle-work status, read again: a task
 *                that keeps its CPU across slices passes through no
 *                running(), and a write to cpu.idle must still count.
 *                Turning normal ends any claim, as running() does.
 *
 * Sched-idle, for a scan: runs a SCHED_IDLE task, not released, nothing
 * else queued on its local DSQ (checked by the caller), and no live claim.
 *
 * Claims. A wakee that picks a sched-idle CPU claims it, so that two wakees
 * do not both count on preempting the same SCHED_IDLE task. The claim word
 * holds the claimant's pid and the time of the claim; the caller installs
 * it with a compare-and-swap from the word it read (loehle_si_claimable),
 * then re-checks (loehle_si_claim_holds): if a normal task started on the
 * CPU between the scan and the claim, the claim is dropped and counts as a
 * claim failure, like a lost idle CPU. A claim ends when the claimant
 * starts running there, when a normal task does, when the CPU goes idle, or
 * after `ttl` (the claimant went elsewhere). Without the expiry a SCHED_IDLE
 * wakee packed onto a sched-idle CPU (mainline, idle-first) would keep it
 * claimed until a normal task ran there; after a few packings no CPU would
 * be sched-idle for anyone.
 */
#ifndef LOEHLE_SCHED_IDLE_H
#define LOEHLE_SCHED_IDLE_H

#include "loehle/intf.h"

enum loehle_si_running {
	LOEHLE_RUN_NONE		= 0,	/* idle, between two tasks, or another class */
	LOEHLE_RUN_NORMAL	= 1,
	LOEHLE_RUN_IDLE_WORK	= 2,	/* a SCHED_IDLE task */
};

struct loehle_si_cpu {
	__u64 claim;		/* 0, or a word from loehle_si_claim_word() */
	__u32 running;		/* enum loehle_si_running */
	__u32 released;		/* a higher class holds the CPU */
};

/* Claim times are kept in 1024-ns units, 32 bits: they wrap after 73 min. */
#define LOEHLE_SI_TIME_SHIFT 10

static inline __u32 loehle_si_time_units(__u64 ns)
{
	return (__u32)(ns >> LOEHLE_SI_TIME_SHIFT);
}

/* Marks a claim word, so that it is never 0 (pids stay below 2^22). */
#define LOEHLE_SI_CLAIMED (1u << 31)

/* The claim word of `pid` at `now_ns`: marker | pid in the upper half. */
static inline __u64 loehle_si_claim_word(__u32 pid, __u64 now_ns)
{
	return (__u64)(pid | LOEHLE_SI_CLAIMED) << 32 | loehle_si_time_units(now_ns);
}

static inline __u32 loehle_si_claim_pid(__u64 word)
{
	return (__u32)(word >> 32) & ~LOEHLE_SI_CLAIMED;
}

/*
 * Is `word` a claim younger than `ttl_ns` at `now_ns`? A claim made on
 * another CPU may carry a time a little after ours (the scan read its
 * clock before that claim, and the CPUs' clocks differ slightly): an age
 * down to -ttl is live too, or two wakees would both take the CPU, the
 * second believing the first's claim expired. Ages are 32-bit differences,
 * correct across the wrap.
 */
static inline int loehle_si_claim_live(__u64 word, __u64 now_ns, __u64 ttl_ns)
{
	__u32 ttl = loehle_si_time_units(ttl_ns);
	__u32 age;

	if (!word)
		return 0;
	if (!ttl)
		ttl = 1;
	age = loehle_si_time_units(now_ns) - (__u32)word;
	return (__u32)(age + ttl) < 2 * ttl;
}

/* Does the CPU run idle work of ours that nobody has claimed? */
static inline int loehle_si_claimable(const struct loehle_si_cpu *s,
				      __u64 claim_word, __u64 now_ns,
				      __u64 ttl_ns)
{
	return s->running == LOEHLE_RUN_IDLE_WORK && !s->released &&
	       !loehle_si_claim_live(claim_word, now_ns, ttl_ns);
}

/* The scan's fact: sched-idle now, given how many tasks its local DSQ holds. */
static inline int loehle_si_is_sched_idle(const struct loehle_si_cpu *s,
					  __u64 now_ns, __u64 ttl_ns,
					  __u32 local_queued)
{
	return !local_queued && loehle_si_claimable(s, s->claim, now_ns, ttl_ns);
}

/* After installing `mine`: does the claim still stand? If not, drop it. */
static inline int loehle_si_claim_holds(const struct loehle_si_cpu *s,
					__u64 mine)
{
	return s->claim == mine && s->running == LOEHLE_RUN_IDLE_WORK &&
	       !s->released;
}

/* Does the CPU run a SCHED_IDLE task of ours (for the per-LLC mask)? */
static inline int loehle_si_runs_idle_work(const struct loehle_si_cpu *s)
{
	return s->running == LOEHLE_RUN_IDLE_WORK && !s->released;
}

/*
 * The load a scan compares for a busy (not idle) CPU: the running task's
 * weight plus a nice-0 weight per task waiting in its local DSQ. A busy CPU
 * that runs nothing of ours is held by something else (RT, DL or stop
 * work) and counts as heavily loaded: its load of ours, 0, would make it
 * "least loaded", and a fork placed there waits until the other class lets
 * go. ops.cpu_release does not always say so: a task of ours that switches
 * itself to SCHED_FIFO never passes through it.
 */
#define LOEHLE_LOAD_NOT_OURS (1ULL << 40)

static inline __u64 loehle_si_load(const struct loehle_si_cpu *s,
				   __u32 running_weight, __u32 local_queued)
{
	__u64 load = (__u64)running_weight + (__u64)local_queued * 1024;

	if (s->released || s->running == LOEHLE_RUN_NONE)
		load += LOEHLE_LOAD_NOT_OURS;
	return load;
}

/* Is anything running there, ours or a higher class's? */
static inline int loehle_si_busy(const struct loehle_si_cpu *s)
{
	return s->running != LOEHLE_RUN_NONE || s->released;
}

static inline void loehle_si_on_running(struct loehle_si_cpu *s,
					int idle_work, __u32 pid)
{
	s->running = idle_work ? LOEHLE_RUN_IDLE_WORK : LOEHLE_RUN_NORMAL;
	s->released = 0;
	if (!idle_work || loehle_si_claim_pid(s->claim) == pid)
		s->claim = 0;
}

static inline void loehle_si_on_tick(struct loehle_si_cpu *s, int idle_work)
{
	if (s->running == LOEHLE_RUN_NONE)
		return;
	if (idle_work) {
		s->running = LOEHLE_RUN_IDLE_WORK;
	} else {
		s->running = LOEHLE_RUN_NORMAL;
		s->claim = 0;
	}
}

static inline void loehle_si_on_stopping(struct loehle_si_cpu *s)
{
	s->running = LOEHLE_RUN_NONE;
}

static inline void loehle_si_on_release(struct loehle_si_cpu *s)
{
	s->running = LOEHLE_RUN_NONE;
	s->released = 1;
}

static inline void loehle_si_on_acquire(struct loehle_si_cpu *s)
{
	s->released = 0;
}

static inline void loehle_si_on_idle(struct loehle_si_cpu *s)
{
	s->running = LOEHLE_RUN_NONE;
	s->released = 0;
	s->claim = 0;
}

#endif /* LOEHLE_SCHED_IDLE_H */
