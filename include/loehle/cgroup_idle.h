/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle's notion of idle work under cgroup v2's cpu.idle, and the
 * preemptibility rule seed 004's review converged on.
 *
 * Seeds 003 and 004 count a CPU as sched-idle when all it runs is idle work,
 * and a wakee that may preempt that work treats the CPU as idle. What "idle
 * work" means, and who "may preempt" it, depends on --sched-idle-scope:
 *
 *   TASK       idle work is a task whose policy is SCHED_IDLE; any other
 *              wakee may preempt it (seed 003's wakee-aware rule).
 *   CGROUP     idle work is also a task with a cpu.idle=1 group anywhere on
 *              its path (the kernel's h_nr_idle notion); a wakee that is not
 *              idle work in that sense may preempt it.
 *   HIERARCHY  idle work as under CGROUP, but a CPU is sched-idle *for a
 *              given wakee* only when the wakee could preempt what runs
 *              there at once. Vincent Guittot: "a sched_idle_cpu should be
 *              preempted immediately otherwise it's not a sched idle cpu";
 *              Josh Don's find_matching_se() suggestion; Abel Wu's tree,
 *              root -> {kubepods -> {guaranteed, besteffort (cpu.idle=1)},
 *              system.slice -> containerd}: a CPU running only besteffort
 *              work is sched-idle for a guaranteed wakee, and busy for a
 *              containerd wakee, since kubepods and system.slice are both
 *              non-idle siblings under the root.
 *
 * The hierarchy rule is the kernel's own wakeup-preemption test: walk both
 * tasks up to the children of their lowest common ancestor (the entities
 * find_matching_se() compares); the running task is preemptible by the
 * wakee at once iff its entity there is idle and the wakee's is not. An
 * entity is a group (idle iff its cpu.idle is 1) or, when the task sits
 * in the common ancestor itself, the task (idle iff SCHED_IDLE). Groups
 * deeper below the ancestor do not matter: an idle group inside a non-idle
 * sibling of the wakee's branch competes by weight, not as idle.
 *
 * Paths. struct loehle_cg_path is what the rule needs about one task: the
 * ids of the task groups from the root down (the root itself implied),
 * which of them are idle, and the task's own policy. The BPF side caches
 * the running task's path per CPU at ops.running (struct loehle_cg_record,
 * below: read by other CPUs while it is rewritten) and reads the wakee's once
 * per select_cpu, so the test per candidate CPU is a comparison of at most
 * LOEHLE_CG_LEVELS ids. Groups below that depth are not kept; a decision
 * that would need them refuses preemption (the conservative answer: the
 * CPU counts as busy), and an idle group there still makes the task idle
 * work (idle_below).
 *
 * Pure functions, included by scx/loehle.bpf.c and the host tests
 * (tests/unit/cgroup_idle_test.cc).
 */
#ifndef LOEHLE_CGROUP_IDLE_H
#define LOEHLE_CGROUP_IDLE_H

#include "loehle/intf.h"

/* Group levels below the root kept per path (kubepods trees use 4 or 5). */
#define LOEHLE_CG_LEVELS 8

struct loehle_cg_path {
	__u32 ids[LOEHLE_CG_LEVELS];	/* ids[l]: the group at depth l + 1 */
	__u8 depth;		/* depth of the task's group; 0: the root */
	__u8 idle_levels;	/* bit l: the group at depth l + 1 has cpu.idle=1 */
	__u8 idle_below;	/* an idle group deeper than LOEHLE_CG_LEVELS */
	__u8 task_idle;		/* the task's policy is SCHED_IDLE */
	__u8 cut;		/* the walk stopped short of the root: ids[]
				 * are not the top groups, the rule cannot
				 * align the paths */
};

/* A task in the root group (or read under TASK scope): its policy only. */
static inline void loehle_cg_path_init(struct loehle_cg_path *p, int task_idle)
{
	__u32 l;

	for (l = 0; l < LOEHLE_CG_LEVELS; l++)
		p->ids[l] = 0;
	p->depth = 0;
	p->idle_levels = 0;
	p->idle_below = 0;
	p->task_idle = !!task_idle;
	p->cut = 0;
}

/*
 * The caller walks up from the task's own group to the root's child and
 * hands each group over in that order: each goes in front of the path, so
 * the path ends up top-down, holding the top LOEHLE_CG_LEVELS groups (the
 * deepest fall off the end, their idleness kept in idle_below). Nothing
 * here depends on a walk counter: the BPF verifier sees the same state at
 * every step of the walk.
 */
static inline void loehle_cg_path_push_parent(struct loehle_cg_path *p,
					      __u32 id, int idle)
{
	__u32 l;

	if ((p->idle_levels >> (LOEHLE_CG_LEVELS - 1)) & 1)
		p->idle_below = 1;
	for (l = LOEHLE_CG_LEVELS - 1; l > 0; l--)
		p->ids[l] = p->ids[l - 1];
	p->ids[0] = id;
	p->idle_levels = (__u8)(p->idle_levels << 1) | (idle ? 1 : 0);
	if (p->depth < 255)
		p->depth++;
}

/*
 * The caller's walk ended before the root's child (a path deeper than the
 * caller walks): the groups it handed over are the bottom of the path, not
 * its top. The rule then refuses (loehle_cg_may_preempt); idleness of the
 * groups it saw still counts.
 */
static inline void loehle_cg_path_cut(struct loehle_cg_path *p)
{
	p->cut = 1;
}

/* Is the task idle work under `scope`? */
static inline int loehle_cg_idle_work(__u32 scope, const struct loehle_cg_path *p)
{
	if (p->task_idle)
		return 1;
	if (scope == LOEHLE_SCOPE_TASK)
		return 0;
	return p->idle_levels || p->idle_below;
}

/*
 * Is the entity of path `p` at the common ancestor's child level `l` idle?
 * The group at depth l + 1 when the task sits below the ancestor, else the
 * task. Sets *known to 0 when that group is deeper than the path keeps.
 */
static inline int loehle_cg_entity_idle(const struct loehle_cg_path *p, __u32 l,
					int *known)
{
	if (l >= p->depth)
		return p->task_idle;
	if (l >= LOEHLE_CG_LEVELS) {
		*known = 0;
		return 0;
	}
	return (p->idle_levels >> l) & 1;
}

/*
 * May a wakee with path `w` preempt at once a task running with path `r`?
 * (The hierarchy rule above: the two entities under the lowest common
 * ancestor.)
 */
static inline int loehle_cg_may_preempt(const struct loehle_cg_path *r,
					const struct loehle_cg_path *w)
{
	__u32 common = r->depth < w->depth ? r->depth : w->depth;
	__u32 l;
	int known = !r->cut && !w->cut, r_idle, w_idle;

	/* l: the first depth index where the paths part, or `common`. */
	for (l = 0; l < LOEHLE_CG_LEVELS; l++) {
		if (l >= common || r->ids[l] != w->ids[l])
			break;
	}
	r_idle = loehle_cg_entity_idle(r, l, &known);
	w_idle = loehle_cg_entity_idle(w, l, &known);
	return known && r_idle && !w_idle;
}

/*
 * The wakee's "is idle work itself" for the wakee-aware rule of the scans
 * (loehle/policy.h): under HIERARCHY the per-CPU test below decides, so the
 * wakee does not yield as a whole.
 */
static inline int loehle_cg_wakee_yields(__u32 scope,
					 const struct loehle_cg_path *w)
{
	return scope != LOEHLE_SCOPE_HIERARCHY && loehle_cg_idle_work(scope, w);
}

/*
 * Under HIERARCHY, is a sched-idle CPU running `r` busy for the wakee `w`
 * (struct loehle_cpu_facts.preempt_refused)? Never under the other scopes.
 */
static inline int loehle_cg_refused(__u32 scope, const struct loehle_cg_path *r,
				    const struct loehle_cg_path *w)
{
	return scope == LOEHLE_SCOPE_HIERARCHY && !loehle_cg_may_preempt(r, w);
}

/*
 * Does a refused sched-idle CPU count in sched_idle_refused under
 * `si_mode`? Only under WAKEE_AWARE, the one mode whose scans read the
 * refusal (loehle_counts_idle): mainline and idle-first take sched-idle
 * CPUs whoever the wakee, ignore never does, so a refusal changes nothing.
 */
static inline int loehle_cg_refusal_counts(__u32 si_mode)
{
	return si_mode == LOEHLE_SI_WAKEE_AWARE;
}

/*
 * A wakee placed on (or queued beside) a CPU running idle work `r`: may it
 * preempt that work at once? TASK and CGROUP: when the wakee is not idle
 * work itself; HIERARCHY: when the rule says so.
 */
static inline int loehle_cg_preempts(__u32 scope, const struct loehle_cg_path *r,
				     const struct loehle_cg_path *w)
{
	if (scope == LOEHLE_SCOPE_HIERARCHY)
		return loehle_cg_may_preempt(r, w);
	return !loehle_cg_idle_work(scope, w);
}

/*
 * A CPU's record of its running task's path. One writer, that CPU (at
 * ops.running and at each tick, which rewrites the same path); readers are
 * other CPUs' wakeups, without a lock. A path is built in place one group
 * at a time, so a read during a rewrite could see a half-built one: the
 * tick's rewrite of a besteffort hog's path [kubepods, besteffort] passes
 * through [besteffort], a cpu.idle group under the root, which a
 * containerd wakee may preempt (a 1-in-1,000 wrong preemption seen in the
 * VM). So the record is a sequence count around a copy: odd while the
 * copy is written, and a reader that saw it odd or changed has a torn
 * path (loehle_cg_record_load returns 0).
 */
struct loehle_cg_record {
	__u32 seq;
	__u32 pad;
	struct loehle_cg_path path;
};

/*
 * Compiler barrier; the writer's atomic adds order its stores for the
 * hardware too. The reader relies on loads not passing loads (x86): the
 * BPF instruction set has no load-acquire before clang 20.
 */
#define loehle_cg_barrier() __asm__ __volatile__("" ::: "memory")
/* The host tests' reader, on a host that may reorder loads. */
#ifdef __bpf__
#define loehle_cg_read_fence() loehle_cg_barrier()
#else
#define loehle_cg_read_fence() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

static inline void loehle_cg_record_store(struct loehle_cg_record *r,
					  const struct loehle_cg_path *p)
{
	__sync_fetch_and_add(&r->seq, 1);
	loehle_cg_barrier();
	r->path = *p;
	loehle_cg_barrier();
	__sync_fetch_and_add(&r->seq, 1);
}

/* Was a read between sequence counts `before` and `after` whole? */
static inline int loehle_cg_seq_whole(__u32 before, __u32 after)
{
	return !(before & 1) && before == after;
}

/* Copy r's path into `out`; 0 when the copy may be torn (see above). */
static inline int loehle_cg_record_load(const struct loehle_cg_record *r,
					struct loehle_cg_path *out)
{
	__u32 before = *(const volatile __u32 *)&r->seq;

	loehle_cg_read_fence();
	*out = r->path;
	loehle_cg_read_fence();
	return loehle_cg_seq_whole(before, *(const volatile __u32 *)&r->seq);
}

/*
 * The per-CPU tests on a path as read (`whole` from loehle_cg_record_load).
 * A torn path decides nothing: its CPU does not run idle work, under
 * HIERARCHY it is refused (busy for this wakee, the rule's conservative
 * answer), and no wakee preempts on it.
 */
static inline int loehle_cg_refused_as_read(__u32 scope, int whole,
					    const struct loehle_cg_path *r,
					    const struct loehle_cg_path *w)
{
	if (!whole)
		return scope == LOEHLE_SCOPE_HIERARCHY;
	return loehle_cg_refused(scope, r, w);
}

static inline int loehle_cg_idle_work_as_read(__u32 scope, int whole,
					      const struct loehle_cg_path *r)
{
	return whole && loehle_cg_idle_work(scope, r);
}

static inline int loehle_cg_preempts_as_read(__u32 scope, int whole,
					     const struct loehle_cg_path *r,
					     const struct loehle_cg_path *w)
{
	return loehle_cg_idle_work_as_read(scope, whole, r) &&
	       loehle_cg_preempts(scope, r, w);
}

#endif /* LOEHLE_CGROUP_IDLE_H */
