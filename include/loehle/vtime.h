/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle queue ordering: the vtime rules, written once.
 *
 * Pure functions over plain values, included by scx/loehle.bpf.c and by the
 * host tests (tests/unit/vtime_test.cc). This comment is the one design note
 * on vtime; other places point here.
 *
 * Each queue (a vtime-ordered DSQ; every LLC has two, one for normal work
 * and one for idle work, loehle/queue.h) has its own clock: the largest
 * vtime with which one of its tasks started running. A task pays for the
 * time it actually ran, measured from ops.running to ops.stopping, scaled
 * by 100 / weight (weight 100 is nice 0, SCHED_IDLE tasks weigh 1 in
 * sched_ext). Charging "configured slice - remaining slice" instead would
 * bill a preempted task (the kernel zeroes its slice) a whole slice, a
 * hundred slices at weight 1, and would mischarge every task across a live
 * --slice-us change. So a preempted task goes back to its queue with the
 * vtime it has earned and keeps its place there.
 *
 * The clocks of two LLCs drift apart, so a vtime means something only
 * against the clock of the queue it is measured in. Whenever a task queues,
 * starts running (a remote dispatch or a cross-LLC fork brings a vtime from
 * another LLC), or stops (a task kept on its CPU at slice expiry runs again
 * without queueing), its vtime is put inside the window of its queue in the
 * LLC it is in: [clock - slice, clock + lead], the lead being
 * LOEHLE_MAX_LEAD_SLICES slices of at most LOEHLE_LEAD_SLICE_CAP_NS each.
 * - The lower edge is a sleeper's credit: one slice, not the whole time it
 *   slept, so a waking task cannot monopolise the CPU.
 * - The upper edge is the no-starvation guarantee. At weight 1 one slice
 *   costs 100 slices of vtime, and a clock moves only when a running task's
 *   vtime passes it, which short sleepers seldom do; and a task that moved
 *   to another LLC (a wakeup placed elsewhere, a cross-LLC fork, a remote
 *   dispatch) brings a vtime measured against another clock, possibly
 *   seconds ahead. Without the bound such tasks waited behind everyone past
 *   the watchdog (seen with idle and normal work in one queue: 34 s under
 *   hackbench and cyclictest beside SCHED_IDLE hogs). With idle work in a
 *   queue of its own, a SCHED_IDLE task's steep charge is weighed against
 *   other idle work only; a vtime brought from another LLC needs the bound
 *   in either queue.
 *   A task at the upper edge waits until the clock reaches it, and a clock
 *   moves about as fast as one task's share of a CPU: with N CPU-bound
 *   tasks per CPU, about lead x N. A lead of 4 slices at the longest
 *   --slice-us (1 s) made that 4 s x N for a weight-1 task, so each slice
 *   counts at most 5 ms in the lead (20 ms). Above 5-ms slices a task
 *   that ran a whole slice then lands at the lead whatever its weight,
 *   so CPU-bound tasks take turns in FIFO order, about N slices apart,
 *   instead of by weight: the price of the bound.
 * The clock advances to the bounded vtime of the task that starts running,
 * never backwards, and by at most the lead: the caller updates it with a
 * compare-and-swap, because several CPUs of one LLC start tasks at once.
 */
#ifndef LOEHLE_VTIME_H
#define LOEHLE_VTIME_H

#include "loehle/intf.h"

/* How far ahead of its LLC's clock a task's vtime may run, in slices... */
#define LOEHLE_MAX_LEAD_SLICES 4
/* ... each counted as at most the default slice. */
#define LOEHLE_LEAD_SLICE_CAP_NS 5000000ULL

/* The weight of a nice-0 task in sched_ext (p->scx.weight). */
#define LOEHLE_WEIGHT_NICE0 100

/* How far ahead of its queue's clock a vtime may be at `slice_ns`. */
static inline __u64 loehle_vtime_lead(__u64 slice_ns)
{
	return LOEHLE_MAX_LEAD_SLICES * (slice_ns < LOEHLE_LEAD_SLICE_CAP_NS ?
						 slice_ns : LOEHLE_LEAD_SLICE_CAP_NS);
}

/*
 * The vtime a task may carry into the queue whose clock is `clock`: at most
 * one slice behind it, at most loehle_vtime_lead() ahead.
 */
static inline __u64 loehle_vtime_bound(__u64 vtime, __u64 clock, __u64 slice_ns)
{
	__u64 lead = loehle_vtime_lead(slice_ns);

	if (vtime + slice_ns < clock)
		return clock - slice_ns;
	if (vtime > clock + lead)
		return clock + lead;
	return vtime;
}

/* Nanoseconds run between ops.running at `since` and now; 0 if unknown. */
static inline __u64 loehle_ran_ns(__u64 now, __u64 since)
{
	return since && now > since ? now - since : 0;
}

/* The vtime `ran_ns` of running costs at `weight` (0 counts as 1). */
static inline __u64 loehle_vtime_charge(__u64 ran_ns, __u32 weight)
{
	return ran_ns * LOEHLE_WEIGHT_NICE0 / (weight ? weight : 1);
}

/*
 * The clock after a task with (already bounded) vtime `vtime` starts
 * running: it only moves forward.
 */
static inline __u64 loehle_clock_advance(__u64 clock, __u64 vtime)
{
	return vtime > clock ? vtime : clock;
}

#endif /* LOEHLE_VTIME_H */
