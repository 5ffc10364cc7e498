/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle's selection walk, written once: which CPUs a fork or wakeup
 * looks at, in which order, which it skips before gathering their facts,
 * when it searches another group, and when the wakeup scan is cut off.
 * loehle/policy.h decides on each CPU's facts; this header walks the CPUs
 * and feeds them to it. scx/loehle.bpf.c, the simulator
 * (loader/sim/machine.cc) and the unit tests' harness
 * (tests/unit/policy_test.cc) all run this walk, each over its own facts,
 * so a change to the walk is tested and simulated as the kernel runs it.
 *
 * The environment. A translation unit that runs the walk defines
 * `struct loehle_walk` (what its hooks need: for the BPF side the task, the
 * idle masks and the per-CPU scratch entry) and these hooks, declared
 * below, as static functions of its own (so that each is inlined where the
 * walk calls it; no function pointers, which BPF does not have):
 *
 *   __u32 loehle_env_group_len(w, by_node, group)
 *   __s32 loehle_env_group_cpu(w, by_node, group, k)
 *                     the k-th CPU of a node's (by_node) or an LLC's list,
 *                     CPUs in id order
 *   __u32 loehle_env_cpu_llc(w, cpu), loehle_env_llc_pos(w, cpu)
 *                     cpu's LLC, and its place in that LLC's list
 *   __u32 loehle_env_core(w, cpu)
 *   int   loehle_env_allowed(w, cpu)
 *                     in the task's mask (the walk skips the CPU before
 *                     gathering anything; online is a fact of its own)
 *   int   loehle_env_runs_idle_work(w, cpu)
 *                     the cheap test loehle_slow_pruned() takes
 *   void  loehle_env_gather(w, cpu, want_load, facts)
 *   __u32 loehle_env_rand(w)
 *                     a random number, drawn only when the policy asks
 *   int   loehle_env_scan_group(w, by_node, group, fallback, out)
 *                     runs loehle_walk_group() (the BPF side puts a global
 *                     function around it for its verifier); < 0: failed
 *   __s32 loehle_env_busiest_group(w, by_node, whole_cores)
 *                     runs loehle_walk_busiest_group() likewise
 *   __u32 loehle_env_nr_groups(w, by_node), loehle_env_nr_cpus(w)
 *   int   loehle_env_idle_usable(w, cpu, whole_cores)
 *                     idle (on a whole idle core), online and allowed
 *   __u32 loehle_env_cpu_group(w, by_node, cpu)
 *   void  loehle_env_count_reset(w, group), loehle_env_count_add(w, group)
 *   __u32 loehle_env_count(w, group)
 *                     per-group counters for the group search
 *   int   loehle_env_llc_has_idle(w, llc)
 *   int   loehle_env_llc_runs_idle_work(w, llc)
 *                     the two facts of the wakeup cut-off (a mask
 *                     intersection each on the BPF side)
 *
 * Loops are LOEHLE_FOR: bpf_for() in BPF (an open-coded iterator, which
 * the verifier checks once), a plain for loop elsewhere.
 */
#ifndef LOEHLE_SELECT_H
#define LOEHLE_SELECT_H

#include "policy.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#if defined(__bpf__)
#define LOEHLE_FOR(i, start, end) bpf_for(i, start, end)
#else
#define LOEHLE_FOR(i, start, end) for ((i) = (start); (i) < (end); (i)++)
#endif

/* The environment's hooks (above), defined by the includer. */
struct loehle_walk;
static __u32 loehle_env_group_len(struct loehle_walk *w, __u32 by_node,
				  __u32 group);
static __s32 loehle_env_group_cpu(struct loehle_walk *w, __u32 by_node,
				  __u32 group, __u32 k);
static __u32 loehle_env_cpu_llc(struct loehle_walk *w, __s32 cpu);
static __u32 loehle_env_llc_pos(struct loehle_walk *w, __s32 cpu);
static __u32 loehle_env_core(struct loehle_walk *w, __s32 cpu);
static int loehle_env_allowed(struct loehle_walk *w, __s32 cpu);
static int loehle_env_runs_idle_work(struct loehle_walk *w, __s32 cpu);
static void loehle_env_gather(struct loehle_walk *w, __s32 cpu, int want_load,
			      struct loehle_cpu_facts *f);
static __u32 loehle_env_rand(struct loehle_walk *w);
static int loehle_env_scan_group(struct loehle_walk *w, __u32 by_node,
				 __u32 group, __s32 fallback,
				 struct loehle_choice *out);
static __s32 loehle_env_busiest_group(struct loehle_walk *w, __u32 by_node,
				      int whole_cores);
static __u32 loehle_env_nr_groups(struct loehle_walk *w, __u32 by_node);
static __u32 loehle_env_nr_cpus(struct loehle_walk *w);
static int loehle_env_idle_usable(struct loehle_walk *w, __s32 cpu,
				  int whole_cores);
static __u32 loehle_env_cpu_group(struct loehle_walk *w, __u32 by_node,
				  __s32 cpu);
static void loehle_env_count_reset(struct loehle_walk *w, __u32 group);
static void loehle_env_count_add(struct loehle_walk *w, __u32 group);
static __u32 loehle_env_count(struct loehle_walk *w, __u32 group);
static int loehle_env_llc_has_idle(struct loehle_walk *w, __u32 llc);
static int loehle_env_llc_runs_idle_work(struct loehle_walk *w, __u32 llc);

/* The configuration a walk runs under. */
struct loehle_walk_cfg {
	__u32 policy;		/* enum loehle_policy */
	__u32 si_mode;		/* enum loehle_sched_idle_mode */
	__u32 idle_core;	/* SMT idle-core preference on, and SMT active */
	__u32 wakee_yields;	/* loehle_cg_wakee_yields() of the wakee */
};

/*
 * Slow path over one group (a node, or an LLC on single-node machines), in
 * the group's CPU order as the kernel walks a sched_group: a CPU outside
 * the task's mask is skipped, then one loehle_slow_pruned() says to skip
 * (seed 002), before any fact is gathered; a busy CPU's load is read only
 * while loehle_slow_wants_load(), a random number drawn only when
 * loehle_slow_wants_rand() (one draw per tie, seed 000). `s` and `f` are
 * the caller's storage (a map entry on the BPF side: too large for its
 * stack).
 */
static __always_inline void loehle_walk_group(struct loehle_walk *w,
					      const struct loehle_walk_cfg *cfg,
					      struct loehle_slow_scan *s,
					      struct loehle_cpu_facts *f,
					      __u32 by_node, __u32 group,
					      __s32 fallback,
					      struct loehle_choice *out)
{
	__u32 k, len, rand;
	__s32 cpu;

	loehle_slow_init(s, cfg->policy, cfg->si_mode, cfg->idle_core,
			 cfg->wakee_yields, fallback);
	len = loehle_env_group_len(w, by_node, group);
	LOEHLE_FOR(k, 0, len) {
		cpu = loehle_env_group_cpu(w, by_node, group, k);
		if (!loehle_env_allowed(w, cpu))
			continue;
		if (loehle_slow_pruned(s, loehle_env_core(w, cpu),
				       loehle_env_runs_idle_work(w, cpu)))
			continue;
		loehle_env_gather(w, cpu, loehle_slow_wants_load(s), f);
		rand = loehle_slow_wants_rand(s, f) ? loehle_env_rand(w) : 0;
		if (loehle_slow_step(s, f, rand))
			break;
	}
	loehle_slow_result(s, out);
}

#if !defined(__bpf__)
/*
 * loehle_env_scan_group() for an environment whose stack holds the scan
 * state (every one but the BPF side's).
 */
static inline int loehle_walk_group_on_stack(struct loehle_walk *w,
					     const struct loehle_walk_cfg *cfg,
					     __u32 by_node, __u32 group,
					     __s32 fallback,
					     struct loehle_choice *out)
{
	struct loehle_slow_scan s;
	struct loehle_cpu_facts f;

	loehle_walk_group(w, cfg, &s, &f, by_node, group, fallback, out);
	return 0;
}
#endif

/*
 * The group with the most CPUs that are idle (whole_cores == 0) or sit on
 * a whole idle core, online and allowed; the lowest such group on a tie;
 * -1 when no group has any.
 */
static __always_inline __s32 loehle_walk_busiest_group(struct loehle_walk *w,
						       __u32 by_node,
						       int whole_cores)
{
	__u32 g, i, count, best_count = 0;
	__u32 nr_groups = loehle_env_nr_groups(w, by_node);
	__u32 nr_cpus = loehle_env_nr_cpus(w);
	__s32 best = -1;

	LOEHLE_FOR(g, 0, nr_groups)
		loehle_env_count_reset(w, g);
	LOEHLE_FOR(i, 0, nr_cpus) {
		if (!loehle_env_idle_usable(w, i, whole_cores))
			continue;
		loehle_env_count_add(w, loehle_env_cpu_group(w, by_node, i));
	}
	LOEHLE_FOR(g, 0, nr_groups) {
		count = loehle_env_count(w, g);
		if (count > best_count) {
			best_count = count;
			best = g;
		}
	}
	return best;
}

/*
 * Fork placement, the analogue of sched_balance_find_dst_group_cpu(): the
 * home group (prev's node, its LLC on one node) first; when its answer is
 * only a fallback (loehle_slow_look_elsewhere()), the group with the most
 * idle CPUs or whole idle cores is scanned too, and the better answer wins
 * (ties stay home). The CPUs examined and pruned are the two scans' sum.
 * Returns < 0 when a scan failed.
 */
static __always_inline int loehle_walk_slow(struct loehle_walk *w,
					    const struct loehle_walk_cfg *cfg,
					    __u32 by_node, __u32 home_group,
					    __s32 prev, struct loehle_choice *out)
{
	struct loehle_choice home;
	__u32 search;
	__s32 other;

	if (loehle_env_scan_group(w, by_node, home_group, prev, out) < 0)
		return -1;
	search = loehle_slow_look_elsewhere(out, cfg->idle_core);
	if (search == LOEHLE_GROUP_STAY)
		return 0;
	other = loehle_env_busiest_group(w, by_node,
					 search == LOEHLE_GROUP_IDLE_CORES);
	if (other < 0 || (__u32)other == home_group)
		return 0;
	home = *out;
	if (loehle_env_scan_group(w, by_node, other, prev, out) < 0)
		return -1;
	if (!loehle_slow_other_wins(&home, out, cfg->idle_core)) {
		home.examined += out->examined;
		home.pruned += out->pruned;
		*out = home;
		return 0;
	}
	out->examined += home.examined;
	out->pruned += home.pruned;
	return 0;
}

/*
 * Can prev's LLC offer the wakee anything? An idle CPU, or, when the mode
 * lets this wakee take sched-idle CPUs, a CPU running idle work: K Prateek
 * Nayak's overload cut-off (seed 003), a mask intersection or two instead
 * of a scan.
 */
static __always_inline int loehle_walk_llc_has_candidates(struct loehle_walk *w,
							  const struct loehle_walk_cfg *cfg,
							  __u32 llc)
{
	if (loehle_env_llc_has_idle(w, llc))
		return 1;
	if (cfg->si_mode == LOEHLE_SI_IGNORE ||
	    (cfg->si_mode == LOEHLE_SI_WAKEE_AWARE && cfg->wakee_yields))
		return 0;
	return loehle_env_llc_runs_idle_work(w, llc);
}

/*
 * Wakeup placement, the analogue of select_idle_sibling(): prev first,
 * then prev's LLC only, from the CPU after prev round to the one before
 * it, as the kernel walks; not at all when the cut-off says the LLC has
 * nothing to offer. Returns 1 when the scan was cut off, else 0.
 */
static __always_inline int loehle_walk_fast(struct loehle_walk *w,
					    const struct loehle_walk_cfg *cfg,
					    struct loehle_fast_scan *s,
					    struct loehle_cpu_facts *f,
					    __s32 prev,
					    struct loehle_choice *out)
{
	__u32 llc = loehle_env_cpu_llc(w, prev), k, len, pos, idx;
	int skipped = 0;
	__s32 cpu;

	loehle_env_gather(w, prev, 0, f);
	if (!loehle_fast_begin(s, cfg->si_mode, cfg->idle_core,
			       cfg->wakee_yields, f)) {
		if (!loehle_walk_llc_has_candidates(w, cfg, llc)) {
			skipped = 1;
			goto out;
		}
		len = loehle_env_group_len(w, 0, llc);
		pos = loehle_env_llc_pos(w, prev);
		LOEHLE_FOR(k, 1, len) {
			idx = pos + k;
			if (idx >= len)
				idx -= len;
			cpu = loehle_env_group_cpu(w, 0, llc, idx);
			if (!loehle_env_allowed(w, cpu))
				continue;
			loehle_env_gather(w, cpu, 0, f);
			if (loehle_fast_offer(s, f))
				break;
		}
	}
out:
	loehle_fast_result(s, out);
	return skipped;
}

#endif /* LOEHLE_SELECT_H */
