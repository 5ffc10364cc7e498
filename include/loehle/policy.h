/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle placement decisions, written once.
 *
 * Pure functions over plain values: no maps, no helpers, no floating point,
 * no loops. scx/loehle.bpf.c includes this header and feeds it the facts it
 * gathers per CPU; the host tests include the very same header and feed it
 * tables transcribed from the seeds. Whatever is decided here is what the
 * kernel runs.
 *
 * Both decisions are incremental scans, because a BPF program cannot hold
 * an array of per-CPU facts on its 512-byte stack: the caller walks the
 * candidate CPUs in its own order and offers each CPU's facts in turn; the
 * scan state remembers what matters and says when the answer is known.
 *
 * Slow path (fork placement; the kernel's sched_balance_find_dst_group_cpu):
 *   loehle_slow_init(), then per candidate loehle_slow_pruned() (skip the
 *   CPU without gathering facts when it says so) and loehle_slow_step()
 *   (stop when it returns non-zero), then loehle_slow_result().
 *   - An idle candidate is ranked by the key (core rank, exit latency):
 *     core rank 0 when SMT idle-core preference is on and its whole core is
 *     idle (seed 002), 1 otherwise; exit latency is the published idle
 *     state's exit latency, LOEHLE_U64_MAX when the CPU has not published
 *     one yet, so such CPUs win only when nothing published is found
 *     (seed 000 v2).
 *   - Ties of the full key go to the tie-break policy:
 *     RECENCY   before seed 000: among equal latencies, or for unpublished
 *               states, the most recently idled CPU wins;
 *     FIRST     seed 000 patch 1: the first candidate stays unless a
 *               strictly better key appears; idle stamps are ignored;
 *     RESERVOIR seed 000 patch 2: uniform among all candidates with the
 *               best key, in one scan: the n-th tie replaces the pick iff
 *               reciprocal_scale(rand, n) == 0, n resets to 1 when a
 *               strictly better key appears. No division.
 *   - No idle candidate: the least-loaded allowed CPU (the fallback CPU
 *     given to init when nothing is less loaded than U64_MAX).
 *   - SCHED_IDLE handling, per enum loehle_sched_idle_mode:
 *     MAINLINE    a sched-idle CPU is returned at once, for every wakee;
 *     WAKEE_AWARE seed 003: likewise, but only for a wakee that may
 *                 preempt it: not idle work itself, and under the
 *                 hierarchy scope not refused by loehle/cgroup_idle.h's
 *                 rule for this CPU; for any other wakee it is busy;
 *     IDLE_FIRST  seed 004 patch 1: idle CPUs first; the first sched-idle
 *                 CPU is the fallback before least-loaded (and once it is
 *                 found, loads are no longer compared);
 *     IGNORE      seed 004 patch 2: sched-idle CPUs are busy CPUs.
 *   - Seed 002 pruning (idle-core mode only) saves work and never changes
 *     the answer: once the pick sits on a whole idle core (rank 0), a CPU
 *     seen busy, or idle on a partly busy core, proves its core can offer
 *     nothing better, so the core's remaining siblings are skipped, except
 *     those running idle work while a sched-idle CPU would end the scan. Before
 *     that, idle CPUs of partly busy cores are all rank-1 candidates, and
 *     the tie-break (reservoir: uniform) sees every one of them.
 *   - Beyond prev's group (loehle_slow_look_elsewhere and
 *     loehle_slow_other_wins): a group's answer is graded whole idle core,
 *     idle (or counts as idle), sched-idle fallback, least loaded; the
 *     caller scans the group with the most idle CPUs (or idle cores) when
 *     the grade is a fallback (or an idle CPU on a busy core under
 *     idle-core), and the better grade wins, prev's group on equal grades.
 *     So under idle-first a truly idle CPU of another node beats a
 *     sched-idle CPU of prev's node, as in the kernel, where
 *     find_idlest_group() counts only truly idle CPUs.
 *
 * Fast path (wakeup; the kernel's select_idle_sibling, in its order):
 *   loehle_fast_begin() with prev's facts (non-zero: prev decided), then
 *   loehle_fast_offer() per CPU of prev's LLC (non-zero: decided early),
 *   then loehle_fast_result(). Order of preference:
 *     1. prev, when it counts as idle (under idle-core: and its core idle);
 *     2. a CPU of a fully idle core in the LLC (idle-core mode);
 *     3. prev, when it counts as idle;
 *     4. an SMT sibling of prev that counts as idle (idle-core mode; under
 *        IDLE_FIRST a truly idle sibling, else the first sched-idle one);
 *     5. the first CPU in scan order that counts as idle;
 *     6. IDLE_FIRST only: the first sched-idle CPU of the scan;
 *     7. prev, busy.
 *   "Counts as idle": truly idle, or sched-idle under MAINLINE, or
 *   sched-idle under WAKEE_AWARE for a wakee that may preempt it. For
 *   prev also sched-idle under IDLE_FIRST: seed 004 patch 1 reverts only
 *   the scans, select_idle_sibling() still takes a sched-idle target or
 *   prev at once. IGNORE treats sched-idle CPUs as busy everywhere.
 *   Sched-idle CPUs never form an idle core. Under idle-core mode, a core
 *   is pruned once it is seen partly busy and a fallback exists (seed 002),
 *   except prev's own core, whose siblings step 4 needs; the fallback
 *   already beats anything such a core could offer.
 *
 * Every result carries its reason (enum loehle_reason) and the figures the
 * statistics need: CPUs examined, siblings pruned, tie-group size,
 * unpublished candidates seen, the chosen latency key and whether the
 * chosen CPU's core was idle.
 *
 * Queueing and sched-idle bookkeeping have their own headers
 * (loehle/vtime.h, loehle/sched_idle.h).
 */
#ifndef LOEHLE_POLICY_H
#define LOEHLE_POLICY_H

#include "loehle/intf.h"

#define LOEHLE_CORE_WORDS (LOEHLE_MAX_CPUS / 64)

/* What the caller knows about one CPU at the time of the scan. */
struct loehle_cpu_facts {
	__u64 exit_latency;	/* of the current idle state; U64_MAX: unpublished */
	__u64 idle_stamp;	/* when it last went idle (ns) */
	__u64 load;		/* any monotone measure; lower is better */
	__s32 cpu;
	__u32 core;		/* SMT core id (< LOEHLE_MAX_CPUS) */
	__u8 allowed;		/* in the task's allowed mask */
	__u8 idle;		/* truly idle: nothing runs or is queued */
	__u8 sched_idle;	/* runs only SCHED_IDLE work (implies !idle) */
	__u8 core_idle;		/* every SMT sibling is idle */
	__u8 preempt_refused;	/* sched-idle, but this wakee may not preempt
				 * what runs there (loehle_cg_refused) */
};

struct loehle_choice {
	__u64 latency_key;	/* key of the pick; U64_MAX if none or unpublished */
	__s32 cpu;
	__u32 reason;		/* enum loehle_reason */
	__u32 examined;		/* CPUs whose facts were considered */
	__u32 pruned;		/* CPUs skipped by seed 002's sibling pruning */
	__u32 ties;		/* candidates sharing the winning key (0 if no idle pick) */
	__u32 unpublished;	/* idle candidates with no published state */
	__u8 core_idle;		/* the chosen CPU's whole core was idle */
	__u8 idle_pick;		/* the chosen CPU was (counted as) idle: claim it */
	__u8 sched_idle_pick;	/* the chosen CPU runs only SCHED_IDLE work */
	__u8 si_fallback;	/* IDLE_FIRST's fallback: sched-idle, no idle CPU seen */
};

/* An idle state index no CPU has published since it went idle. */
#define LOEHLE_STATE_UNPUBLISHED ((__u32)-1)

/*
 * The exit-latency key of an idle CPU in idle state `state`, whose table
 * gives `latency` for that state: a CPU that has not published its state
 * yet (or an index past the table) counts as the deepest, LOEHLE_U64_MAX,
 * so that it wins only when nothing published is idle (seed 000 v2).
 */
static inline __u64 loehle_exit_latency_key(__u32 state, __u64 latency)
{
	return state < LOEHLE_MAX_IDLE_STATES ? latency : LOEHLE_U64_MAX;
}

/* The kernel's reciprocal_scale(): maps a 32-bit random value into [0, n). */
static inline __u32 loehle_reciprocal_scale(__u32 val, __u32 n)
{
	return (__u32)(((__u64)val * n) >> 32);
}

/* log2 bucket of a tie-group size: 1 -> 0, 2-3 -> 1, 4-7 -> 2, ... */
static inline __u32 loehle_tie_bucket(__u32 n)
{
	__u32 b = 0;

	if (n >= 1u << 8) { n >>= 8; b += 8; }
	if (n >= 1u << 4) { n >>= 4; b += 4; }
	if (n >= 1u << 2) { n >>= 2; b += 2; }
	if (n >= 1u << 1) { b += 1; }
	return b < LOEHLE_TIE_BUCKETS ? b : LOEHLE_TIE_BUCKETS - 1;
}

/*
 * May a scan offer this CPU to the task at all? Only when it is online and
 * in the task's mask: the mask may still name an offline CPU.
 */
static inline int loehle_cpu_usable(int online, int in_task_mask)
{
	return online && in_task_mask;
}

/*
 * A CPU came online (ops.cpu_online). Its core, LLC and node are known only
 * when it was online as the loader read the topology (sysfs removes a CPU's
 * topology and cache folders while it is offline): then it rejoins the scans
 * at once; otherwise the scheduler asks to be reloaded with a fresh
 * topology, as the kernel would have for any hotplug without these
 * callbacks.
 */
static inline int loehle_cpu_online_needs_reload(int online_at_load)
{
	return !online_at_load;
}

/* Does a CPU count as idle for this wakee? (seed 003's choose_idle_cpu) */
static inline int loehle_counts_idle(__u32 si_mode, int wakee_sched_idle,
				     const struct loehle_cpu_facts *f)
{
	if (f->idle)
		return 1;
	if (!f->sched_idle)
		return 0;
	switch (si_mode) {
	case LOEHLE_SI_MAINLINE:
		return 1;
	case LOEHLE_SI_WAKEE_AWARE:
		return !wakee_sched_idle && !f->preempt_refused;
	default:	/* IDLE_FIRST keeps it as a fallback; IGNORE: busy */
		return 0;
	}
}

/*
 * Does prev (the kernel's target) count as idle? As loehle_counts_idle(),
 * and under IDLE_FIRST a sched-idle prev too: seed 004 patch 1 leaves
 * select_idle_sibling()'s target and prev checks alone.
 */
static inline int loehle_prev_counts_idle(__u32 si_mode, int wakee_sched_idle,
					  const struct loehle_cpu_facts *f)
{
	if (si_mode == LOEHLE_SI_IDLE_FIRST && f->sched_idle)
		return 1;
	return loehle_counts_idle(si_mode, wakee_sched_idle, f);
}

static inline int loehle_core_is_pruned(const __u64 *words, __u32 core)
{
	core &= LOEHLE_MAX_CPUS - 1;
	return (words[core >> 6] >> (core & 63)) & 1;
}

static inline void loehle_prune_core(__u64 *words, __u32 core)
{
	core &= LOEHLE_MAX_CPUS - 1;
	words[core >> 6] |= (__u64)1 << (core & 63);
}

/* ---------------------------------------------------------------------- */
/* Slow path                                                              */

struct loehle_slow_scan {
	__u64 pruned_cores[LOEHLE_CORE_WORDS];
	__u64 min_key;		/* best exit-latency key within min_rank */
	__u64 recency_min_lat;	/* RECENCY: lowest published latency so far */
	__u64 pick_stamp;	/* RECENCY: idle stamp of the pick */
	__u64 pick_key;		/* exit-latency key of the pick */
	__u64 min_load;
	__u32 policy;
	__u32 si_mode;
	__u32 min_rank;
	__u32 ties;		/* candidates with (min_rank, min_key) */
	__u32 examined;
	__u32 pruned;
	__u32 unpublished;
	__s32 pick;
	__s32 si_cpu;
	__s32 least_loaded;
	__s32 decided;		/* -1, or a CPU returned at once */
	__u8 smt_idle_core;	/* idle-core mode on and SMT active */
	__u8 wakee_sched_idle;
	__u8 pick_core_idle;
};

static inline void loehle_slow_init(struct loehle_slow_scan *s, __u32 policy,
				    __u32 si_mode, int smt_idle_core,
				    int wakee_sched_idle, __s32 fallback_cpu)
{
	int i;

	for (i = 0; i < LOEHLE_CORE_WORDS; i++)
		s->pruned_cores[i] = 0;
	s->min_key = LOEHLE_U64_MAX;
	s->recency_min_lat = LOEHLE_U64_MAX;
	s->pick_stamp = 0;
	s->pick_key = LOEHLE_U64_MAX;
	s->min_load = LOEHLE_U64_MAX;
	s->policy = policy;
	s->si_mode = si_mode;
	s->min_rank = 2;
	s->ties = 0;
	s->examined = 0;
	s->pruned = 0;
	s->unpublished = 0;
	s->pick = -1;
	s->si_cpu = -1;
	s->least_loaded = fallback_cpu;
	s->decided = -1;
	s->smt_idle_core = !!smt_idle_core;
	s->wakee_sched_idle = !!wakee_sched_idle;
	s->pick_core_idle = 0;
}

/*
 * Would a sched-idle CPU end this scan at once? Under MAINLINE, and under
 * WAKEE_AWARE for a wakee that may preempt idle work.
 */
static inline int loehle_slow_si_decides(const struct loehle_slow_scan *s)
{
	return s->si_mode == LOEHLE_SI_MAINLINE ||
	       (s->si_mode == LOEHLE_SI_WAKEE_AWARE && !s->wakee_sched_idle);
}

/*
 * Should this CPU be skipped without gathering its facts? Counts the skip.
 * `runs_idle_work`: the CPU may be sched-idle (the caller's cheap test,
 * e.g. a mask of CPUs running idle work). Such a CPU is never skipped
 * while a sched-idle CPU would end the scan: a pruned core hides nothing
 * better than the pick except that (seed 003's return-at-once), and the
 * pruning must not change the answer.
 */
static inline int loehle_slow_pruned(struct loehle_slow_scan *s, __u32 core,
				     int runs_idle_work)
{
	if (!s->smt_idle_core || !loehle_core_is_pruned(s->pruned_cores, core))
		return 0;
	if (runs_idle_work && loehle_slow_si_decides(s))
		return 0;
	s->pruned++;
	return 1;
}

static inline __u32 loehle_slow_rank(const struct loehle_slow_scan *s,
				     const struct loehle_cpu_facts *f)
{
	return s->smt_idle_core && !f->core_idle;
}

/*
 * Would this candidate join the current tie group under RESERVOIR? The
 * caller draws a random number only then (one draw per tie, as the seed).
 */
static inline int loehle_slow_wants_rand(const struct loehle_slow_scan *s,
					 const struct loehle_cpu_facts *f)
{
	return s->policy == LOEHLE_POLICY_RESERVOIR && f->allowed && f->idle &&
	       s->pick >= 0 && loehle_slow_rank(s, f) == s->min_rank &&
	       f->exit_latency == s->min_key;
}

static inline void loehle_slow_take(struct loehle_slow_scan *s,
				    const struct loehle_cpu_facts *f)
{
	s->pick = f->cpu;
	s->pick_stamp = f->idle_stamp;
	s->pick_key = f->exit_latency;
	s->pick_core_idle = f->core_idle;
}

static inline void loehle_slow_idle_candidate(struct loehle_slow_scan *s,
					      const struct loehle_cpu_facts *f,
					      __u32 rand)
{
	__u32 rank = loehle_slow_rank(s, f);
	__u64 key = f->exit_latency;
	int published = key != LOEHLE_U64_MAX;
	int better, tie;

	if (!published)
		s->unpublished++;

	better = s->pick < 0 || rank < s->min_rank ||
		 (rank == s->min_rank && key < s->min_key);
	tie = !better && rank == s->min_rank && key == s->min_key;

	if (s->policy == LOEHLE_POLICY_RECENCY) {
		/*
		 * The pre-seed-000 rule: only published states lower the bar;
		 * an equal or unpublished state wins on a later idle stamp.
		 * A better core rank starts the comparison afresh.
		 */
		if (s->pick < 0 || rank < s->min_rank) {
			loehle_slow_take(s, f);
			s->recency_min_lat = key;
		} else if (rank == s->min_rank) {
			if (published && key < s->recency_min_lat) {
				loehle_slow_take(s, f);
				s->recency_min_lat = key;
			} else if ((!published || key == s->recency_min_lat) &&
				   f->idle_stamp > s->pick_stamp) {
				loehle_slow_take(s, f);
			}
		}
	} else if (better) {
		loehle_slow_take(s, f);
	} else if (tie && s->policy == LOEHLE_POLICY_RESERVOIR) {
		/* s->ties + 1 is this candidate's place in the tie group. */
		if (!loehle_reciprocal_scale(rand, s->ties + 1))
			loehle_slow_take(s, f);
	}

	if (better) {
		s->min_rank = rank;
		s->min_key = key;
		s->ties = 1;
	} else if (tie) {
		s->ties++;
	}
}

/*
 * Seed 002's sibling pruning, kept answer-preserving: only once the pick
 * sits on a whole idle core can a partly busy core offer nothing.
 */
static inline void loehle_slow_prune_partly_busy(struct loehle_slow_scan *s,
						 __u32 core)
{
	if (s->smt_idle_core && s->pick >= 0 && s->min_rank == 0)
		loehle_prune_core(s->pruned_cores, core);
}

/*
 * Does a busy CPU's load still matter? Only while nothing idle or
 * sched-idle has been found: "least loaded" is the last resort. The caller
 * may skip reading queue lengths otherwise (a kfunc call per busy CPU).
 */
static inline int loehle_slow_wants_load(const struct loehle_slow_scan *s)
{
	return s->pick < 0 && s->si_cpu < 0;
}

/* Offer one CPU's facts. Returns non-zero when the scan is decided. */
static inline int loehle_slow_step(struct loehle_slow_scan *s,
				   const struct loehle_cpu_facts *f, __u32 rand)
{
	int sched_idle;

	if (!f->allowed || s->decided >= 0)
		return s->decided >= 0;
	s->examined++;

	sched_idle = f->sched_idle && !f->idle;
	if (sched_idle) {
		switch (s->si_mode) {
		case LOEHLE_SI_MAINLINE:
			s->decided = f->cpu;
			return 1;
		case LOEHLE_SI_WAKEE_AWARE:
			if (!s->wakee_sched_idle && !f->preempt_refused) {
				s->decided = f->cpu;
				return 1;
			}
			break;
		case LOEHLE_SI_IDLE_FIRST:
			if (s->pick < 0 && s->si_cpu < 0)
				s->si_cpu = f->cpu;
			loehle_slow_prune_partly_busy(s, f->core);
			return 0;
		default:
			break;
		}
	}

	if (f->idle) {
		loehle_slow_idle_candidate(s, f, rand);
		if (!f->core_idle)
			loehle_slow_prune_partly_busy(s, f->core);
		return 0;
	}

	/* Busy. */
	loehle_slow_prune_partly_busy(s, f->core);
	if (loehle_slow_wants_load(s) && f->load < s->min_load) {
		s->min_load = f->load;
		s->least_loaded = f->cpu;
	}
	return 0;
}

/* A choice with the scan's figures and nothing picked yet. */
static inline void loehle_choice_init(struct loehle_choice *c, __u32 examined,
				      __u32 pruned, __u32 unpublished,
				      __u8 idle_pick)
{
	c->examined = examined;
	c->pruned = pruned;
	c->unpublished = unpublished;
	c->ties = 0;
	c->latency_key = LOEHLE_U64_MAX;
	c->idle_pick = idle_pick;
	c->sched_idle_pick = 0;
	c->core_idle = 0;
	c->si_fallback = 0;
}

static inline void loehle_slow_result(const struct loehle_slow_scan *s,
				      struct loehle_choice *c)
{
	loehle_choice_init(c, s->examined, s->pruned, s->unpublished, 0);

	if (s->decided >= 0) {
		c->cpu = s->decided;
		c->reason = LOEHLE_REASON_SCHED_IDLE;
		c->idle_pick = 1;
		c->sched_idle_pick = 1;	/* a sched-idle CPU is never an idle core */
	} else if (s->pick >= 0) {
		c->cpu = s->pick;
		c->reason = LOEHLE_REASON_SHALLOWEST;
		c->ties = s->ties;
		c->latency_key = s->pick_key;
		c->idle_pick = 1;
		c->core_idle = s->pick_core_idle;
	} else if (s->si_cpu >= 0) {
		c->cpu = s->si_cpu;
		c->reason = LOEHLE_REASON_SCHED_IDLE;
		c->idle_pick = 1;
		c->sched_idle_pick = 1;
		c->si_fallback = 1;
	} else {
		c->cpu = s->least_loaded;
		c->reason = LOEHLE_REASON_LEAST_LOADED;
	}
}

/*
 * Grade of a slow-path answer, lower is better: 0 a CPU of a whole idle
 * core (idle-core mode), 1 an idle CPU or one that counts as idle, 2
 * IDLE_FIRST's sched-idle fallback, 3 least loaded.
 */
static inline __u32 loehle_slow_grade(const struct loehle_choice *c,
				      int smt_idle_core)
{
	if (c->reason == LOEHLE_REASON_LEAST_LOADED)
		return 3;
	if (c->si_fallback)
		return 2;
	if (smt_idle_core && c->reason == LOEHLE_REASON_SHALLOWEST && c->core_idle)
		return 0;
	return 1;
}

enum loehle_group_search {
	LOEHLE_GROUP_STAY	= 0,	/* prev's group answered well enough */
	LOEHLE_GROUP_IDLE_CPUS	= 1,	/* the group with the most idle CPUs */
	LOEHLE_GROUP_IDLE_CORES	= 2,	/* the group with the most idle cores */
};

/* After prev's group: which other group, if any, the fork should try. */
static inline __u32 loehle_slow_look_elsewhere(const struct loehle_choice *c,
					       int smt_idle_core)
{
	__u32 grade = loehle_slow_grade(c, smt_idle_core);

	if (grade >= 2)
		return LOEHLE_GROUP_IDLE_CPUS;
	/* Seed 002 across groups: only partly busy cores here. */
	if (smt_idle_core && c->reason == LOEHLE_REASON_SHALLOWEST && grade == 1)
		return LOEHLE_GROUP_IDLE_CORES;
	return LOEHLE_GROUP_STAY;
}

/* Does the other group's answer beat prev's group's? Ties stay home. */
static inline int loehle_slow_other_wins(const struct loehle_choice *home,
					 const struct loehle_choice *other,
					 int smt_idle_core)
{
	return loehle_slow_grade(other, smt_idle_core) <
	       loehle_slow_grade(home, smt_idle_core);
}

/* ---------------------------------------------------------------------- */
/* Fast path                                                              */

struct loehle_fast_scan {
	__u64 pruned_cores[LOEHLE_CORE_WORDS];
	__u32 si_mode;
	__u32 prev_core;
	__u32 examined;
	__u32 pruned;
	__s32 prev;
	__s32 idle_core_cpu;
	__s32 prev_sibling;	/* counts as idle (truly idle under IDLE_FIRST) */
	__s32 prev_sibling_si;	/* IDLE_FIRST: first sched-idle sibling */
	__s32 idle_cpu;
	__s32 si_cpu;
	__u8 smt_idle_core;
	__u8 wakee_sched_idle;
	__u8 prev_counts_idle;
	__u8 prev_truly_idle;
	__u8 prev_core_idle;
	__u8 prev_decided;
	__u8 idle_cpu_truly_idle;
	__u8 idle_cpu_core_idle;
	__u8 prev_sibling_truly_idle;
	__u8 pad[3];
};

/* Start a wakeup scan at prev. Returns non-zero when prev is the answer. */
static inline int loehle_fast_begin(struct loehle_fast_scan *s, __u32 si_mode,
				    int smt_idle_core, int wakee_sched_idle,
				    const struct loehle_cpu_facts *prev)
{
	int i;

	for (i = 0; i < LOEHLE_CORE_WORDS; i++)
		s->pruned_cores[i] = 0;
	s->si_mode = si_mode;
	s->smt_idle_core = !!smt_idle_core;
	s->wakee_sched_idle = !!wakee_sched_idle;
	s->prev = prev->cpu;
	s->prev_core = prev->core;
	s->examined = 1;
	s->pruned = 0;
	s->idle_core_cpu = -1;
	s->prev_sibling = -1;
	s->prev_sibling_si = -1;
	s->idle_cpu = -1;
	s->si_cpu = -1;
	s->idle_cpu_truly_idle = 0;
	s->idle_cpu_core_idle = 0;
	s->prev_sibling_truly_idle = 0;
	s->prev_truly_idle = prev->idle;
	s->prev_core_idle = prev->idle && prev->core_idle;
	s->prev_counts_idle = prev->allowed &&
			      loehle_prev_counts_idle(si_mode, wakee_sched_idle, prev);
	s->prev_decided = s->prev_counts_idle &&
			  (!s->smt_idle_core || s->prev_core_idle);
	return s->prev_decided;
}

/* Offer one CPU of prev's LLC. Returns non-zero when decided early. */
static inline int loehle_fast_offer(struct loehle_fast_scan *s,
				    const struct loehle_cpu_facts *f)
{
	int counts, fallback, si_only;

	if (s->prev_decided || s->idle_core_cpu >= 0)
		return 1;
	if (!f->allowed || f->cpu == s->prev)
		return 0;
	if (s->smt_idle_core && f->core != s->prev_core &&
	    loehle_core_is_pruned(s->pruned_cores, f->core)) {
		s->pruned++;
		return 0;
	}
	s->examined++;

	if (s->smt_idle_core && f->idle && f->core_idle) {
		s->idle_core_cpu = f->cpu;
		return 1;
	}

	counts = loehle_counts_idle(s->si_mode, s->wakee_sched_idle, f);
	si_only = s->si_mode == LOEHLE_SI_IDLE_FIRST && f->sched_idle && !f->idle;
	if (s->smt_idle_core && f->core == s->prev_core) {
		if (counts && s->prev_sibling < 0) {
			s->prev_sibling = f->cpu;
			s->prev_sibling_truly_idle = f->idle;
		}
		if (si_only && s->prev_sibling_si < 0)
			s->prev_sibling_si = f->cpu;
	}
	if (counts && s->idle_cpu < 0) {
		s->idle_cpu = f->cpu;
		s->idle_cpu_truly_idle = f->idle;
		s->idle_cpu_core_idle = f->idle && f->core_idle;
		/* Without the core preference the first idle CPU is the answer. */
		if (!s->smt_idle_core)
			return 1;
	}
	if (si_only && s->si_cpu < 0)
		s->si_cpu = f->cpu;

	/* Seed 002: a partly busy core, once a fallback exists, is done. */
	fallback = s->idle_cpu >= 0 || s->prev_counts_idle;
	if (s->smt_idle_core && fallback && f->core != s->prev_core)
		loehle_prune_core(s->pruned_cores, f->core);
	return 0;
}

/*
 * Record a fast-path pick: `reason` when the CPU is truly idle, SCHED_IDLE
 * when it only counts as idle because it runs SCHED_IDLE work.
 */
static inline void loehle_fast_take(struct loehle_choice *c, __s32 cpu,
				    int truly_idle, __u32 reason, int core_idle)
{
	c->cpu = cpu;
	c->reason = truly_idle ? reason : (__u32)LOEHLE_REASON_SCHED_IDLE;
	c->sched_idle_pick = !truly_idle;
	c->core_idle = core_idle;
}

static inline void loehle_fast_result(const struct loehle_fast_scan *s,
				      struct loehle_choice *c)
{
	loehle_choice_init(c, s->examined, s->pruned, 0, 1);

	/* Steps 1 and 3: prev, unless a whole idle core came first. */
	if (s->prev_decided || (s->idle_core_cpu < 0 && s->prev_counts_idle))
		loehle_fast_take(c, s->prev, s->prev_truly_idle,
				 LOEHLE_REASON_PREV_IDLE, s->prev_core_idle);
	else if (s->idle_core_cpu >= 0)
		loehle_fast_take(c, s->idle_core_cpu, 1, LOEHLE_REASON_IDLE_CORE, 1);
	else if (s->prev_sibling >= 0)
		loehle_fast_take(c, s->prev_sibling, s->prev_sibling_truly_idle,
				 LOEHLE_REASON_SMT_SIBLING, 0);
	else if (s->prev_sibling_si >= 0)
		loehle_fast_take(c, s->prev_sibling_si, 0, LOEHLE_REASON_SCHED_IDLE, 0);
	else if (s->idle_cpu >= 0)
		loehle_fast_take(c, s->idle_cpu, s->idle_cpu_truly_idle,
				 LOEHLE_REASON_IDLE_CPU, s->idle_cpu_core_idle);
	else if (s->si_cpu >= 0)
		loehle_fast_take(c, s->si_cpu, 0, LOEHLE_REASON_SCHED_IDLE, 0);
	else {
		c->cpu = s->prev;
		c->reason = LOEHLE_REASON_PREV_BUSY;
		c->idle_pick = 0;
	}
}

#endif /* LOEHLE_POLICY_H */
