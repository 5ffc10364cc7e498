/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle's queueing of idle work: what a CPU runs next, written once.
 *
 * Seeds 003 and 004 exist because people run background work as idle work
 * (SCHED_IDLE) and expect it to cost the foreground nothing. So idle work
 * runs on a CPU only when no other task the CPU could take is queued, in
 * its LLC or beyond, with one exception: a small, bounded allowance that
 * keeps idle work from starving (and the watchdog from ejecting us).
 *
 * Pure functions over plain values, included by scx/loehle.bpf.c and the
 * host tests (tests/unit/queue_test.cc).
 *
 * Queues. Each LLC has two vtime-ordered DSQs: one for normal work, one for
 * idle work, each with its own clock (the vtime rules and their reasons:
 * loehle/vtime.h). Idle tasks are ordered among themselves by their own
 * weights; normal tasks never compete with them on vtime.
 *
 * Dispatch order (loehle_plan_dispatch): when a CPU needs work,
 *   0. an overdue idle task of its LLC it may run (see below), a short turn;
 *   1. its LLC's idle queue, only when the allowance is due;
 *   2. its LLC's normal queue, then the other LLCs' normal queues;
 *   3. prev, if it is normal work and may keep the CPU (a new slice);
 *   4. its LLC's idle queue, then the other LLCs' idle queues;
 *   5. prev, if it is idle work and may keep the CPU.
 * "May keep": it is still runnable and seed 002 does not want it moved.
 *
 * Allowance (loehle_idle_turn_due): an LLC whose idle queue is not empty
 * and whose idle work has not started running for a period gets one turn,
 * one slice, ahead of normal work. The period is LOEHLE_IDLE_TURN_SLICES
 * slices, shortened when many idle tasks wait so that each of them runs at
 * least once every LOEHLE_IDLE_MAX_WAIT_NS (the queue is served in vtime
 * order, so n waiting tasks take n turns): with 4 CPUs per LLC saturated by
 * normal work, idle work gets about one slice in 64 * 4, 0.4% of the LLC,
 * in the spirit of the kernel's weight 3 against 1024 (0.3%), and no idle
 * task waits longer than about 5 s, well under the 30 s watchdog.
 *
 * Preemption (loehle_preempt_for): a normal task that is queued because no
 * CPU was idle takes a CPU that runs idle work at once, its own first. The
 * preempted idle task keeps its place among idle work (loehle/vtime.h).
 *
 * Displaced idle work (loehle_defer_idle_wake, loehle_idle_wake_due): idle
 * work that leaves its CPU to normal work (preempted, or passed over at its
 * slice end) goes back to its LLC's idle queue, and no idle CPU is woken
 * for it at once. Waking one at once moved the idle work onto the CPUs
 * short normal wakeups were about to take: a wakee the hierarchy rule
 * forbids to preempt it then found its LLC busy and queued (the scope
 * bench: p99 1.1-2.1x `task`'s; Documentation/benchmarks.md). Instead the
 * idle task waits for its own CPU, which takes it back as soon as the
 * normal work there stops (dispatch step 4), and an idle CPU is woken for
 * it only when it still waits LOEHLE_IDLE_WAKE_DELAY_NS later, at the next
 * tick of a CPU of that LLC. That is the kernel's own behaviour for a
 * preempted SCHED_IDLE task: it stays on its runqueue, and an idle CPU
 * pulls it at the nohz idle balance that a busy CPU's tick starts. Only
 * when the displacing CPU has a task to run next (its local DSQ is not
 * empty): that CPU then stays busy, so it ticks or dispatches again, and
 * the idle task is never left queued beside idle CPUs with nobody to
 * notice. A higher class taking that CPU (ops.cpu_release) wakes an idle
 * CPU for it at once: an RT task has no ticks of ours. (It keeps idle work
 * in place, as measured, but did not lower the scope bench's p99 cost;
 * Documentation/benchmarks.md says what is left.)
 */
#ifndef LOEHLE_QUEUE_H
#define LOEHLE_QUEUE_H

#include "loehle/intf.h"

/* Idle work's allowance: a turn after this many slices without one... */
#define LOEHLE_IDLE_TURN_SLICES 64
/* ...or sooner, so that every waiting idle task runs within this time... */
#define LOEHLE_IDLE_MAX_WAIT_NS (5ULL * 1000 * 1000 * 1000)
/*
 * ...but never sooner than this many slices: however many idle tasks wait,
 * idle work gets at most one slice in LOEHLE_IDLE_TURN_MIN_SLICES + 1 of an
 * LLC's dispatches. The wait bound above therefore holds up to
 * LOEHLE_IDLE_MAX_WAIT_NS / (LOEHLE_IDLE_TURN_MIN_SLICES slices) - 1
 * waiting tasks per LLC (249 at 5 ms slices); beyond that each waits
 * n * 4 slices (a thousand tasks: 20 s, still under the 30 s watchdog).
 */
#define LOEHLE_IDLE_TURN_MIN_SLICES 4

/*
 * Overdue idle work (loehle_idle_overdue): an idle task that has waited
 * this long, runnable, is run by the next CPU of its mask that dispatches,
 * ahead of everything, for a turn of at most LOEHLE_IDLE_OVERDUE_SLICE_NS.
 * The allowance above is an LLC's, decided by when idle work last *started*
 * anywhere in it, and only its CPUs give it; this is each task's own. It
 * catches what the allowance misses: an idle task pinned to a CPU whose
 * normal hog keeps it while other idle work of the LLC keeps starting
 * (which starved it until the watchdog ejected the scheduler), idle work
 * left in an LLC with no CPU to give its allowance, and long slices, at
 * which the allowance's 4-slice floor made 8 waiting tasks wait 32 s
 * (--slice-us=1000000). Bound: a runnable idle task waits at most this
 * long, plus the slice of what its CPUs run (they dispatch at its end),
 * plus one short turn per other overdue idle task ahead of it on that CPU
 * (each turn's end is a dispatch): with the 1 s maximum slice and 1,000
 * overdue tasks on one CPU, 5 + 1 + 5 = 11 s, well under the watchdog's
 * 30 s. A CPU looks at the first LOEHLE_IDLE_OVERDUE_LOOK tasks of its
 * LLC's idle queue (vtime order: the longest waiting come first).
 */
#define LOEHLE_IDLE_OVERDUE_NS LOEHLE_IDLE_MAX_WAIT_NS
#define LOEHLE_IDLE_OVERDUE_SLICE_NS (5ULL * 1000 * 1000)
#define LOEHLE_IDLE_OVERDUE_LOOK 16

/*
 * How long displaced idle work waits for its own CPU before an idle CPU is
 * woken for it. Checked at ticks, so the wake comes at the first tick of a
 * CPU of its LLC after this (HZ=250: within 1-5 ms); about what the
 * kernel's nohz idle balance takes to pull a preempted SCHED_IDLE task.
 */
#define LOEHLE_IDLE_WAKE_DELAY_NS (1000ULL * 1000)

enum loehle_dispatch_step {
	LOEHLE_STEP_END		= 0,
	LOEHLE_STEP_NORMAL	= 1,	/* this LLC's normal queue, then the others' */
	LOEHLE_STEP_IDLE_LOCAL	= 2,	/* this LLC's idle queue */
	LOEHLE_STEP_IDLE_REMOTE	= 3,	/* the other LLCs' idle queues */
	LOEHLE_STEP_KEEP_PREV	= 4,	/* prev keeps the CPU with a new slice */
};

#define LOEHLE_DISPATCH_STEPS 5

/*
 * A plan is its steps in 4-bit fields, the first in the lowest; a field of
 * LOEHLE_STEP_END (0) ends it. A scalar, not an array: BPF reads it
 * without indexing its stack.
 */
static inline __u32 loehle_plan_step(__u32 plan, __u32 k)
{
	return (plan >> (4 * k)) & 0xf;
}

/* The period after which an LLC's idle work is owed a turn. */
static inline __u64 loehle_idle_turn_period(__u64 slice_ns, __u32 idle_queued)
{
	__u64 period = LOEHLE_IDLE_TURN_SLICES * slice_ns;
	__u64 bound = LOEHLE_IDLE_MAX_WAIT_NS / ((__u64)idle_queued + 1);
	__u64 floor = LOEHLE_IDLE_TURN_MIN_SLICES * slice_ns;

	if (bound < period)
		period = bound;
	return period > floor ? period : floor;
}

/*
 * Is idle work owed a turn in an LLC whose idle work last started running at
 * `last_idle_run` (0: never) and whose idle queue holds `idle_queued` tasks?
 * The stamp comes from whichever CPU of the LLC started idle work, whose
 * clock may run a little ahead of ours: a stamp "in the future" is a turn
 * that just began, not an overdue one (only one further than a whole
 * period ahead is taken for garbage, and the turn given).
 */
static inline int loehle_idle_turn_due(__u64 now, __u64 last_idle_run,
				       __u64 slice_ns, __u32 idle_queued)
{
	__u64 period;

	if (!idle_queued)
		return 0;
	if (!last_idle_run)
		return 1;
	period = loehle_idle_turn_period(slice_ns, idle_queued);
	if (now < last_idle_run)
		return last_idle_run - now > period;
	return now - last_idle_run >= period;
}

/*
 * Is an idle task that has been waiting, runnable, since `queued_since`
 * (stamped when it woke or stopped running still runnable; 0 when not
 * known) overdue at `now`? Both are rq clocks, of two CPUs: a stamp ahead
 * of ours is a wait that just began.
 */
static inline int loehle_idle_overdue(__u64 now, __u64 queued_since)
{
	if (!queued_since || now < queued_since)
		return 0;
	return now - queued_since >= LOEHLE_IDLE_OVERDUE_NS;
}

/* The slice of an overdue task's turn: a short one, whatever --slice-us. */
static inline __u64 loehle_idle_overdue_slice(__u64 slice_ns)
{
	return slice_ns < LOEHLE_IDLE_OVERDUE_SLICE_NS ? slice_ns :
							 LOEHLE_IDLE_OVERDUE_SLICE_NS;
}

/* What a CPU tries, in order, when it needs work (see the header comment). */
static inline __u32 loehle_plan_dispatch(int idle_turn_due, int prev_may_keep,
					 int prev_idle_work)
{
	__u32 plan = 0, n = 0;

	if (idle_turn_due)
		plan |= (__u32)LOEHLE_STEP_IDLE_LOCAL << (4 * n++);
	plan |= (__u32)LOEHLE_STEP_NORMAL << (4 * n++);
	if (prev_may_keep && !prev_idle_work)
		return plan | (__u32)LOEHLE_STEP_KEEP_PREV << (4 * n);
	if (!idle_turn_due)
		plan |= (__u32)LOEHLE_STEP_IDLE_LOCAL << (4 * n++);
	plan |= (__u32)LOEHLE_STEP_IDLE_REMOTE << (4 * n++);
	if (prev_may_keep)
		plan |= (__u32)LOEHLE_STEP_KEEP_PREV << (4 * n);
	return plan;
}

/*
 * A normal task was queued and no CPU was idle: which CPU's idle work does
 * it preempt? Its own CPU when that runs idle work, else `llc_idle_work`
 * (a CPU of its LLC running idle work, or a negative value for none).
 * Idle work never preempts anything. Returns -1 for no preemption.
 */
static inline __s32 loehle_preempt_for(int task_idle_work, __s32 own_cpu,
				       int own_runs_idle_work, __s32 llc_idle_work)
{
	if (task_idle_work)
		return -1;
	if (own_runs_idle_work)
		return own_cpu;
	return llc_idle_work >= 0 ? llc_idle_work : -1;
}

/*
 * A task was queued in its LLC's idle queue: is it displaced idle work
 * whose wake is deferred (see the header comment)? Idle work (`idle_work`)
 * that did not just wake up (`wakeup`), whose slice is gone (`slice_left`
 * 0: preempted, or its slice ended), queued from its own CPU (`on_own_cpu`)
 * while that CPU has a task to run next (`local_queued`). A waking idle
 * task, a new one, or one sent back by a higher class with its slice left
 * gets an idle CPU woken at once, as any queued task does.
 */
static inline int loehle_defer_idle_wake(int idle_work, int wakeup,
					 __u64 slice_left, int on_own_cpu,
					 __u32 local_queued)
{
	return idle_work && !wakeup && !slice_left && on_own_cpu &&
	       local_queued > 0;
}

/*
 * Is the deferred wake of an LLC's displaced idle work due at `now`? Its
 * oldest deferral is stamped `pending_since` (0: none). The stamp comes
 * from another CPU, whose clock may run a little ahead: a stamp in the
 * future is a deferral that just began, unless it is further ahead than a
 * second, which is garbage, and the wake is given.
 */
static inline int loehle_idle_wake_due(__u64 now, __u64 pending_since)
{
	if (!pending_since)
		return 0;
	if (now < pending_since)
		return pending_since - now > 1000ULL * 1000 * 1000;
	return now - pending_since >= LOEHLE_IDLE_WAKE_DELAY_NS;
}

/*
 * A deferred wake just woke an idle CPU for one waiting idle task, and
 * `idle_queued` tasks (that one included) wait in the LLC's idle queue:
 * is the wake armed again, for the next tick after the delay? When others
 * wait too: one stamp stands for all of an LLC's deferrals, so without
 * this a second hog displaced at about the same time went on waiting
 * beside a second idle CPU. (When no idle CPU was found it is not: a CPU
 * that goes idle looks in the idle queues itself.)
 */
static inline int loehle_idle_wake_again(__s32 idle_queued)
{
	return idle_queued > 1;
}

/*
 * Does a wakee select_cpu placed on a sched-idle CPU go straight into that
 * CPU's local DSQ? Only when it preempts the idle work running there (the
 * scope's rule, loehle/cgroup_idle.h). One that does not (a SCHED_IDLE
 * wakee packed there under --sched-idle=mainline or idle-first) would run
 * from the local DSQ at the idle task's slice end, ahead of normal work
 * waiting in the LLC's queue, and a SCX_KICK_PREEMPT meant for that normal
 * work would run the packed task instead. It goes to its queue: who runs
 * it next is that CPU at its next dispatch, normal work of the LLC first
 * (the order above), or an idle CPU enqueue wakes for it, within the
 * bounds of idle work (the overdue turn).
 */
static inline int loehle_sched_idle_pick_goes_local(int preempts_idle_work)
{
	return preempts_idle_work;
}

/*
 * Does a task skip the LLC queues for its CPU's local DSQ? Per-CPU kernel
 * threads do (a kthread allowed on one CPU: ksoftirqd, kworker/N, cpuhp):
 * only that CPU may run them anyway, and a CPU on its way offline runs
 * only its local DSQ and the kernel's global one, never a BPF queue. A
 * ksoftirqd that had to park itself for the hotplug, left in an LLC queue,
 * never ran: a 33 s stall on 6.18 with CPU 3 flapping, the hotplug hung.
 * They run next on their CPU, ahead of the LLC queues (FIFO, no preemption
 * of the running task), as the kernel's per-CPU work usually must; they
 * are short.
 */
static inline int loehle_goes_local(int is_kthread, __u32 nr_cpus_allowed)
{
	return is_kthread && nr_cpus_allowed == 1;
}

/*
 * Does a per-CPU kthread going to its local DSQ preempt what runs there?
 * When that is idle work (`cpu_runs_idle_work`, read under the CPU's rq
 * lock, which enqueue holds and ops.running writes under): the fair class
 * lets any non-idle task preempt an idle entity at once, and a kworker or
 * ksoftirqd waiting a slice (up to a second with --slice-us) behind a
 * SCHED_IDLE hog stalls everything that waits for that work. Normal work
 * is not preempted: the kthread runs next, at its slice end.
 */
static inline int loehle_kthread_preempts(int cpu_runs_idle_work)
{
	return cpu_runs_idle_work;
}

/*
 * May seed 002's move at a slice end (dispatch not keeping prev, so that
 * the kernel hands it to ops.enqueue with SCX_ENQ_LAST) take this task off
 * its CPU? Not when it may run on one CPU only, and not when the kernel
 * would not call ops.enqueue for it at all: an exiting task (PF_EXITING)
 * or a migration-disabled one goes straight into the local DSQ of the CPU
 * that is about to go idle (neither SCX_OPS_ENQ_EXITING nor
 * SCX_OPS_ENQ_MIGRATION_DISABLED is set), where nothing would run it until
 * that CPU next schedules. Such a task keeps its CPU with a new slice.
 */
static inline int loehle_smt_movable(int exiting, int migration_disabled,
				     __u32 nr_cpus_allowed)
{
	return !exiting && !migration_disabled && nr_cpus_allowed > 1;
}

/*
 * A CPU is going idle with `local_queued` tasks in its local DSQ: must it
 * reschedule itself? Whenever one is there. A task can land there after
 * the CPU's last pick (ops.enqueue's insert for the SCX_ENQ_LAST task, the
 * kernel's own insert of an exiting one, a remote insert racing the
 * pick), and an idle CPU with a tickless idle period would leave it there
 * until some interrupt: the runnable task beside an idle CPU that only the
 * watchdog would notice.
 */
static inline int loehle_idle_kicks_itself(__s32 local_queued)
{
	return local_queued > 0;
}

/*
 * A CPU is going offline (ops.cpu_offline) with this task waiting in our
 * queues: must it leave them for the kernel's global DSQ? When it is that
 * CPU's (its task_cpu is the dying CPU), or only that CPU may run it. The
 * task is counted on the dying CPU's runqueue, and the kernel's hotplug
 * waits for that runqueue to empty; the dying CPU never dispatches from
 * our queues again, but it does consume its node's global DSQ, and the
 * kernel then pushes the task to an online CPU of its mask (breaking its
 * affinity when none is left). Left in our queues, only other CPUs would
 * take it, and a remote pull does not wake the dying CPU's hotplug waiter
 * if that CPU is already idle. (Seen before the one-CPU rule: a stress-ng
 * affinity worker pinned to CPU 2 left in a BPF queue, 38 s, the
 * scheduler ejected.)
 */
static inline int loehle_offline_takes(int on_dying_cpu, __u32 nr_cpus_allowed,
				       int allowed_on_dying_cpu)
{
	return on_dying_cpu || (nr_cpus_allowed == 1 && allowed_on_dying_cpu);
}

/*
 * Does this CPU take a task of another LLC's normal queue before its own
 * LLC's work? When that LLC's own CPUs have not served the queue (taken a
 * task from it) for the bound, `served_at` (0: never), and the task has
 * waited runnable for the bound since `queued_since` (0: not known). A
 * CPU looks at remote queues otherwise only when its own is empty, so a
 * queue whose own CPUs do not dispatch (each inactive on its way offline,
 * or taken by a higher class) is never served while the other LLCs are
 * saturated. Seen in the soak: the last CPU of a node going offline waits
 * in synchronize_rcu() for a reader preempted there (khugepaged), its
 * LLC's CPUs inactive and not dispatching, before ops.cpu_offline is
 * called: 19.5 s, then the kernel ejected the scheduler for the RCU stall.
 * The bound is two slices, at least LOEHLE_REMOTE_OVERDUE_MIN_NS. An LLC
 * that serves its own queue, however long it is, keeps its tasks: with
 * the task's wait alone as the test, two saturated LLCs (about 11
 * runnable tasks per CPU at 5-ms slices, 3 at 1 s) would trade tasks at
 * every dispatch.
 */
#define LOEHLE_REMOTE_OVERDUE_MIN_NS (50ULL * 1000 * 1000)

static inline __u64 loehle_remote_overdue_bound(__u64 slice_ns)
{
	return 2 * slice_ns < LOEHLE_REMOTE_OVERDUE_MIN_NS ? LOEHLE_REMOTE_OVERDUE_MIN_NS :
							     2 * slice_ns;
}

/* Has queue `served_at`'s LLC gone the bound without serving it? */
static inline int loehle_remote_unserved(__u64 now, __u64 served_at, __u64 slice_ns)
{
	if (!served_at)
		return 1;
	return now > served_at && now - served_at >= loehle_remote_overdue_bound(slice_ns);
}

static inline int loehle_remote_overdue(__u64 now, __u64 queued_since, __u64 slice_ns)
{
	if (!queued_since || now < queued_since)
		return 0;
	return now - queued_since >= loehle_remote_overdue_bound(slice_ns);
}

#endif /* LOEHLE_QUEUE_H */
