/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle: a sched_ext scheduler built around three recent fair-class
 * placement patches, so that their effect can be switched live and measured.
 *
 * Placement (ops.select_cpu). Fork wakeups take the slow path, the
 * analogue of sched_balance_find_dst_group_cpu(): the candidate group is
 * prev's NUMA node (its LLC on single-node machines) within the task's
 * allowed CPUs, or, when that group has no idle CPU, the node or LLC with
 * the most idle CPUs (under idle-core mode also when it has only partly
 * busy cores and another group has a whole idle core: seed 002's preference
 * applied across groups). Within the group an idle CPU is ranked by (SMT core
 * idle, exit latency of its current idle state) and ties go to the active
 * tie-break policy: recency (before seed 000), first (seed 000 patch 1) or
 * reservoir (seed 000 patch 2). Every other wakeup takes the fast path, the
 * analogue of select_idle_sibling(): prev, an idle core, prev's sibling, an
 * idle CPU of prev's LLC. CPUs running only SCHED_IDLE work are treated as
 * the active SCHED_IDLE mode says (seeds 003 and 004). All of these rules
 * live in include/loehle/policy.h; this file only gathers the facts they
 * need and acts on the answer. Policy `builtin` hands the whole decision to
 * scx_bpf_select_cpu_dfl(), the baseline of every comparison.
 *
 * Claiming. Between the scan and the enqueue another CPU may pick the same
 * idle CPU: the kernel calls this a stale pick, here it is a claim failure.
 * An idle pick is claimed with scx_bpf_test_and_clear_cpu_idle(); a
 * sched-idle pick is claimed with a per-CPU flag, so that two wakees do not
 * both preempt the same SCHED_IDLE task. A failed claim rescans (the lost
 * CPU is no longer idle) up to claim_retries times, then the task is queued
 * on prev's LLC. A successful claim dispatches the task straight to the
 * claimed CPU's local DSQ; a non-SCHED_IDLE task placed on a sched-idle CPU
 * preempts the SCHED_IDLE work at once (the premise of seeds 003 and 004).
 *
 * Idle facts. The built-in idle masks (kept with SCX_OPS_KEEP_BUILTIN_IDLE
 * because ops.update_idle is implemented) say which CPUs and cores are idle.
 * ops.update_idle stamps the moment a CPU went idle and marks its idle state
 * unpublished; the power:cpu_idle tracepoint publishes the state the CPU
 * entered, and the loader's table maps (cpu, state) to an exit latency. A
 * CPU that went idle but has not published a state since has the key
 * U64_MAX, so it is picked only when nothing published is idle (seed 000).
 *
 * SMT over time. A wakeup may leave a task beside a busy sibling, since the
 * fast path looks only inside prev's LLC. Under idle-core, a task whose
 * slice runs out on such a core moves to a whole idle core if there is one
 * (counted as smt_move), the seed-002 preference kept up after placement.
 *
 * Queueing. One vtime-ordered DSQ per LLC, weighted by p->scx.weight
 * (SCHED_IDLE tasks weigh 1). A CPU dispatches from its own LLC first and
 * takes work from the other LLCs before it goes idle. A sleeper's vtime is
 * clamped to one slice behind its LLC's clock, and any task's vtime to a few
 * slices ahead of it, so no task, SCHED_IDLE included, waits long: neither
 * accumulated credit, nor weight 1's steep vtime, nor a vtime brought from
 * another LLC's clock can push it out of reach.
 *
 * Configuration and statistics. The loader writes a double-buffered config
 * and flips active_config; each flip carries a new generation. Counters are
 * per CPU and per generation slot (generation % LOEHLE_GEN_SLOTS); a CPU
 * that first counts for a new generation resets its slot. Fork picks are
 * also counted per target CPU, the view in which scan-order bias shows.
 * Every sample_every-th pick goes to a ring buffer; a full buffer is
 * counted as a drop, never waited on.
 */
#include "loehle.bpf.h"

char _license[] SEC("license") = "GPL";

/* Filled by the loader before load. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_llcs = 1;
const volatile __u32 nr_nodes = 1;
const volatile bool smt_active;
const volatile struct loehle_cpu_topo topo[LOEHLE_MAX_CPUS];
const volatile __u64 exit_latency_ns[LOEHLE_MAX_CPUS][LOEHLE_MAX_IDLE_STATES];

/* Written by the loader at any time. */
struct loehle_config configs[2];
__u32 active_config;

/* Read by the loader once the kernel has disabled the scheduler. */
struct loehle_exit_info exit_info;
char exit_dump[LOEHLE_EXIT_DUMP_LEN];

/* Per-CPU facts other CPUs read while scanning. */
struct cpu_state {
	u64 idle_stamp;
	u32 idle_state;		/* LOEHLE_STATE_UNPUBLISHED or a state index */
	u32 running_sched_idle;	/* the running task is SCHED_IDLE */
	u32 sched_idle_claimed;	/* a wakee is on its way to preempt it */
	u32 running_weight;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_state);
} cpu_states SEC(".maps");

/* Scan state lives in a map: it is too large for the BPF stack. */
struct scratch {
	struct loehle_slow_scan slow;
	struct loehle_fast_scan fast;
	struct loehle_config cfg;	/* the pick's configuration, in */
	struct loehle_choice choice;	/* a scan's answer, out */
	u32 picks_until_sample;
	u32 idle_allowed;		/* an idle CPU was allowed at scan time */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOEHLE_GEN_SLOTS);
	__type(key, u32);
	__type(value, struct loehle_stats);
} stats SEC(".maps");

/* [slot * LOEHLE_MAX_CPUS + cpu]; the loader zeroes a slot before reuse. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_GEN_SLOTS * LOEHLE_MAX_CPUS);
	__type(key, u32);
	__type(value, u64);
} fork_picks SEC(".maps");

/* Idle CPUs per node or LLC, scratch for loehle_busiest_idle_group(). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOEHLE_MAX_LLCS);
	__type(key, u32);
	__type(value, u32);
} group_idle SEC(".maps");

/*
 * Per-LLC virtual clock: the largest vtime that started running there. The
 * clocks of two LLCs drift apart, so a task's vtime means something only
 * against the clock of the LLC it last queued or ran in.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_MAX_LLCS);
	__type(key, u32);
	__type(value, u64);
} llc_vtime SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

/*
 * Index the CPU tables through a mask: the verifier must see the bound on
 * the very register used for the address, and a compare on a copy of it is
 * not always enough after clang's register allocation.
 */
#define CPU_IDX(cpu) ((u32)(cpu) & (LOEHLE_MAX_CPUS - 1))

static __always_inline struct cpu_state *cpu_state_of(s32 cpu)
{
	u32 key = (u32)cpu;

	return bpf_map_lookup_elem(&cpu_states, &key);
}

static __always_inline u32 cpu_llc(s32 cpu)
{
	return topo[CPU_IDX(cpu)].llc;
}

static __always_inline u32 cpu_node(s32 cpu)
{
	return topo[CPU_IDX(cpu)].node;
}

/* Does another thread of cpu's core run something? */
static __always_inline bool sibling_busy(s32 cpu)
{
	struct cpu_state *cs;
	u32 sibling = topo[CPU_IDX(cpu)].next_sibling, i;

	bpf_for(i, 0, LOEHLE_MAX_SMT) {
		if (sibling == (u32)cpu)
			break;
		cs = cpu_state_of(sibling);
		if (cs && cs->running_weight)
			return true;
		sibling = topo[CPU_IDX(sibling)].next_sibling;
	}
	return false;
}

static __always_inline void read_config(struct loehle_config *cfg)
{
	u32 idx = *(volatile u32 *)&active_config & 1;

	__builtin_memcpy(cfg, &configs[idx], sizeof(*cfg));
}

/* This CPU's counters for the given generation; resets a recycled slot. */
static __always_inline struct loehle_stats *stats_for(u32 generation)
{
	u32 slot = generation % LOEHLE_GEN_SLOTS;
	struct loehle_stats *s = bpf_map_lookup_elem(&stats, &slot);

	if (!s)
		return NULL;
	if (s->generation != generation) {
		__builtin_memset(s->counters, 0, sizeof(s->counters));
		s->generation = generation;
	}
	return s;
}

static __always_inline void stat_add(struct loehle_stats *s, u32 idx, u64 n)
{
	if (s && idx < LOEHLE_NR_STATS)
		s->counters[idx] += n;
}

static __always_inline bool task_is_sched_idle(const struct task_struct *p)
{
	return p->policy == LOEHLE_SCHED_IDLE_POLICY;
}

/* Gather what policy.h needs to know about one CPU. */
static __always_inline void gather_facts(s32 cpu, const struct task_struct *p,
					 const struct cpumask *idle_mask,
					 const struct cpumask *idle_smt,
					 struct loehle_cpu_facts *f)
{
	struct cpu_state *cs = cpu_state_of(cpu);
	s32 queued;
	u32 state;

	f->cpu = cpu;
	f->core = topo[CPU_IDX(cpu)].core;
	f->allowed = bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
	f->idle = bpf_cpumask_test_cpu(cpu, idle_mask);
	f->core_idle = smt_active ? bpf_cpumask_test_cpu(cpu, idle_smt) : f->idle;
	f->sched_idle = 0;
	f->exit_latency = LOEHLE_U64_MAX;
	f->idle_stamp = 0;
	f->load = 0;
	if (!cs)
		return;

	f->idle_stamp = cs->idle_stamp;
	if (f->idle) {
		state = cs->idle_state;
		if (state < LOEHLE_MAX_IDLE_STATES)
			f->exit_latency = exit_latency_ns[CPU_IDX(cpu)][state];
		return;
	}
	/*
	 * Sched-idle: the running task is SCHED_IDLE, no wakee has claimed
	 * the CPU, and nothing else waits in its local DSQ.
	 */
	queued = scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu);
	if (queued < 0)
		queued = 0;
	f->sched_idle = cs->running_sched_idle && !cs->sched_idle_claimed &&
			!queued;
	f->load = (u64)cs->running_weight + (u64)queued * 1024;
}

static __always_inline struct scratch *this_scratch(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&scratch, &zero);
}

/*
 * The scans are global functions: the verifier checks each once, on its
 * own, instead of once per path through select_cpu's claim-retry loop
 * (6.18's verifier runs out of its one-million-instruction budget
 * otherwise). They take scalars and a trusted task; the configuration comes
 * in, and the choice goes out, through this CPU's scratch entry. Each takes
 * its own references to the idle masks.
 */

/*
 * Slow-path scan of one group (a node, or an LLC on single-node machines),
 * CPUs in id order as the kernel walks a sched_group. Returns 0, or -1 when
 * this CPU's scratch entry is missing.
 */
__noinline int loehle_scan_group(struct task_struct *p __arg_trusted,
				 u32 by_node, u32 group, s32 fallback)
{
	const struct cpumask *idle_mask, *idle_smt;
	struct loehle_slow_scan *s;
	struct loehle_cpu_facts f;
	struct scratch *sc;
	u32 i, rand;

	sc = this_scratch();
	if (!sc || !p)
		return -1;
	s = &sc->slow;
	idle_mask = scx_bpf_get_idle_cpumask();
	idle_smt = scx_bpf_get_idle_smtmask();
	loehle_slow_init(s, sc->cfg.policy, sc->cfg.sched_idle,
			 sc->cfg.smt == LOEHLE_SMT_IDLE_CORE && smt_active,
			 task_is_sched_idle(p), fallback);
	bpf_for(i, 0, nr_cpus) {
		if (i >= LOEHLE_MAX_CPUS)
			break;
		if ((by_node ? cpu_node(i) : cpu_llc(i)) != group)
			continue;
		if (!bpf_cpumask_test_cpu(i, p->cpus_ptr))
			continue;
		if (loehle_slow_pruned(s, topo[CPU_IDX(i)].core))
			continue;
		gather_facts(i, p, idle_mask, idle_smt, &f);
		rand = loehle_slow_wants_rand(s, &f) ? bpf_get_prandom_u32() : 0;
		if (loehle_slow_step(s, &f, rand))
			break;
	}
	loehle_slow_result(s, &sc->choice);
	scx_bpf_put_idle_cpumask(idle_smt);
	scx_bpf_put_idle_cpumask(idle_mask);
	return 0;
}

/*
 * Group with the most allowed CPUs that are idle (whole_cores == 0) or sit
 * on a whole idle core (whole_cores != 0); -1 when none has any. Counts go
 * through a map lookup keyed by the group rather than an array indexed by
 * it: a variable index computed right after a kfunc call trips 6.18's
 * verifier ("backtracking call unexpected regs").
 */
__noinline int loehle_busiest_idle_group(struct task_struct *p __arg_trusted,
					 u32 by_node, u32 whole_cores)
{
	const struct cpumask *mask;
	u32 i, g, best_count = 0, *count;
	u32 nr_groups = by_node ? nr_nodes : nr_llcs;
	s32 best = -1;

	if (!p)
		return -1;
	bpf_for(g, 0, nr_groups) {
		count = bpf_map_lookup_elem(&group_idle, &g);
		if (count)
			*count = 0;
	}
	mask = whole_cores ? scx_bpf_get_idle_smtmask() : scx_bpf_get_idle_cpumask();
	bpf_for(i, 0, nr_cpus) {
		if (!bpf_cpumask_test_cpu(i, mask) ||
		    !bpf_cpumask_test_cpu(i, p->cpus_ptr))
			continue;
		g = by_node ? cpu_node(i) : cpu_llc(i);
		count = bpf_map_lookup_elem(&group_idle, &g);
		if (count)
			(*count)++;
	}
	scx_bpf_put_idle_cpumask(mask);
	bpf_for(g, 0, nr_groups) {
		count = bpf_map_lookup_elem(&group_idle, &g);
		if (count && *count > best_count) {
			best_count = *count;
			best = g;
		}
	}
	return best;
}

/* Fork placement; the answer lands in sc->choice. */
static __always_inline int slow_pick(struct scratch *sc, struct task_struct *p,
				     s32 prev)
{
	/* Groups are nodes; on one node, LLCs. */
	u32 by_node = nr_nodes > 1;
	bool idle_core = sc->cfg.smt == LOEHLE_SMT_IDLE_CORE && smt_active;
	u32 group = by_node ? cpu_node(prev) : cpu_llc(prev);
	u32 examined, pruned, reason;
	s32 other = -1;

	if (loehle_scan_group(p, by_node, group, prev) < 0)
		return -1;
	reason = sc->choice.reason;
	if (reason == LOEHLE_REASON_LEAST_LOADED) {
		/* No idle CPU here: the group with the most idle CPUs. */
		other = loehle_busiest_idle_group(p, by_node, 0);
	} else if (idle_core && reason == LOEHLE_REASON_SHALLOWEST &&
		   !sc->choice.core_idle) {
		/*
		 * Seed 002's preference across groups: only partly busy cores
		 * here, so a group that still has a whole idle core wins.
		 */
		other = loehle_busiest_idle_group(p, by_node, 1);
	}
	if (other < 0 || (u32)other == group)
		return 0;
	examined = sc->choice.examined;
	pruned = sc->choice.pruned;
	if (loehle_scan_group(p, by_node, other, prev) < 0)
		return -1;
	sc->choice.examined += examined;
	sc->choice.pruned += pruned;
	return 0;
}

/* Wakeup placement in prev's LLC; the answer lands in sc->choice. */
__noinline int loehle_fast_pick(struct task_struct *p __arg_trusted, s32 prev)
{
	const struct cpumask *idle_mask, *idle_smt;
	struct loehle_fast_scan *s;
	struct loehle_cpu_facts f;
	struct scratch *sc;
	u32 llc = cpu_llc(prev), k;
	s32 cpu;

	sc = this_scratch();
	if (!sc || !p)
		return -1;
	s = &sc->fast;
	idle_mask = scx_bpf_get_idle_cpumask();
	idle_smt = scx_bpf_get_idle_smtmask();
	gather_facts(prev, p, idle_mask, idle_smt, &f);
	if (!loehle_fast_begin(s, sc->cfg.sched_idle,
			       sc->cfg.smt == LOEHLE_SMT_IDLE_CORE && smt_active,
			       task_is_sched_idle(p), &f)) {
		/* Walk prev's LLC starting after prev, as the kernel does. */
		bpf_for(k, 1, nr_cpus) {
			cpu = prev + k;
			if (cpu >= (s32)nr_cpus)
				cpu -= nr_cpus;
			if ((u32)cpu >= LOEHLE_MAX_CPUS || cpu_llc(cpu) != llc)
				continue;
			if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
				continue;
			gather_facts(cpu, p, idle_mask, idle_smt, &f);
			if (loehle_fast_offer(s, &f))
				break;
		}
	}
	loehle_fast_result(s, &sc->choice);
	scx_bpf_put_idle_cpumask(idle_smt);
	scx_bpf_put_idle_cpumask(idle_mask);
	return 0;
}

/* Was an idle CPU allowed for p at all? (For the packing counter.) */
__noinline int loehle_idle_allowed(struct task_struct *p __arg_trusted)
{
	const struct cpumask *idle_mask;
	int allowed;

	if (!p)
		return 0;
	idle_mask = scx_bpf_get_idle_cpumask();
	allowed = bpf_cpumask_intersects(idle_mask, p->cpus_ptr);
	scx_bpf_put_idle_cpumask(idle_mask);
	return allowed;
}

/* Claim a sched-idle CPU for one wakee (see cpu_state.sched_idle_claimed). */
static __always_inline bool claim_sched_idle(s32 cpu)
{
	struct cpu_state *cs = cpu_state_of(cpu);

	return cs && __sync_val_compare_and_swap(&cs->sched_idle_claimed, 0, 1) == 0;
}

static __always_inline void emit_event(struct scratch *sc,
				       struct loehle_stats *st,
				       const struct loehle_config *cfg,
				       const struct task_struct *p, s32 prev,
				       u32 path, const struct loehle_choice *c,
				       u32 claim)
{
	struct loehle_pick_event *ev;

	if (!cfg->sample_every)
		return;
	if (sc->picks_until_sample > 1) {
		sc->picks_until_sample--;
		return;
	}
	sc->picks_until_sample = cfg->sample_every;

	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		stat_add(st, LOEHLE_STAT_EVENT_DROPS, 1);
		return;
	}
	ev->ts_ns = bpf_ktime_get_ns();
	ev->latency_key = c->latency_key;
	ev->pid = p->pid;
	ev->cpu = c->cpu;
	ev->prev_cpu = prev;
	ev->generation = cfg->generation;
	ev->candidates = c->examined;
	ev->ties = c->ties;
	ev->path = path;
	ev->reason = c->reason;
	ev->claim = claim;
	ev->wakee_sched_idle = task_is_sched_idle(p);
	ev->pad = 0;
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
	stat_add(st, LOEHLE_STAT_EVENTS, 1);
}

static __always_inline void count_choice(struct loehle_stats *st,
					 const struct loehle_choice *c)
{
	stat_add(st, LOEHLE_STAT_PICK + c->reason, 1);
	stat_add(st, LOEHLE_STAT_EXAMINED, c->examined);
	stat_add(st, LOEHLE_STAT_SMT_PRUNED, c->pruned);
	stat_add(st, LOEHLE_STAT_UNPUBLISHED_SEEN, c->unpublished);
	if (c->ties) {
		stat_add(st, LOEHLE_STAT_TIE_HIST + loehle_tie_bucket(c->ties), 1);
		stat_add(st, LOEHLE_STAT_CANDIDATES, c->ties);
	}
}

static __always_inline void count_fork_pick(u32 generation, s32 cpu)
{
	u32 key = (generation % LOEHLE_GEN_SLOTS) * LOEHLE_MAX_CPUS +
		  ((u32)cpu & (LOEHLE_MAX_CPUS - 1));
	u64 *n = bpf_map_lookup_elem(&fork_picks, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* Counters, fork-pick tally and sampled event of one decision. */
static __always_inline s32 finish_pick(struct scratch *sc,
				       struct loehle_stats *st,
				       const struct loehle_config *cfg,
				       const struct task_struct *p, s32 prev,
				       u32 path, const struct loehle_choice *c,
				       u32 claim)
{
	count_choice(st, c);
	if (path == LOEHLE_PATH_FORK)
		count_fork_pick(cfg->generation, c->cpu);
	emit_event(sc, st, cfg, p, prev, path, c, claim);
	return c->cpu;
}

s32 LOEHLE_STRUCT_OPS(loehle_select_cpu, struct task_struct *p, s32 prev_cpu,
		      u64 wake_flags)
{
	struct loehle_choice c = {};
	struct loehle_config cfg;
	struct loehle_stats *st;
	struct scratch *sc;
	u32 path, attempt, claim = LOEHLE_CLAIM_NONE;
	bool wakee_si, idle_allowed, is_idle = false, claimed = false;
	int ret;

	read_config(&cfg);
	st = stats_for(cfg.generation);
	sc = this_scratch();
	if (!sc)
		return prev_cpu;

	if (wake_flags & SCX_WAKE_FORK)
		path = LOEHLE_PATH_FORK;
	else if (wake_flags & SCX_WAKE_SYNC)
		path = LOEHLE_PATH_SYNC;
	else
		path = LOEHLE_PATH_WAKEUP;
	stat_add(st, LOEHLE_STAT_SELECT + path, 1);

	if (cfg.policy == LOEHLE_POLICY_BUILTIN) {
		c.cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
		c.reason = is_idle ? LOEHLE_REASON_BUILTIN_IDLE :
				     LOEHLE_REASON_BUILTIN_BUSY;
		c.latency_key = LOEHLE_U64_MAX;
		if (is_idle) {
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, 0);
			stat_add(st, LOEHLE_STAT_DIRECT_DISPATCH, 1);
			claim = LOEHLE_CLAIM_OK;
		}
		return finish_pick(sc, st, &cfg, p, prev_cpu, path, &c, claim);
	}

	wakee_si = task_is_sched_idle(p);
	/* Packing needs to know whether a truly idle CPU was on offer. */
	idle_allowed = wakee_si && loehle_idle_allowed(p);
	sc->cfg = cfg;

	bpf_for(attempt, 0, cfg.claim_retries + 1) {
		if (attempt > LOEHLE_MAX_CPUS)
			break;
		if (path == LOEHLE_PATH_FORK)
			ret = slow_pick(sc, p, prev_cpu);
		else
			ret = loehle_fast_pick(p, prev_cpu);
		if (ret < 0)
			return prev_cpu;
		c = sc->choice;
		if (!c.idle_pick)
			break;

		stat_add(st, LOEHLE_STAT_CLAIM_ATTEMPTS, 1);
		if (c.sched_idle_pick)
			claimed = claim_sched_idle(c.cpu);
		else
			claimed = scx_bpf_test_and_clear_cpu_idle(c.cpu);
		if (claimed)
			break;
		stat_add(st, LOEHLE_STAT_CLAIM_FAILURES, 1);
		if (attempt < cfg.claim_retries)
			stat_add(st, LOEHLE_STAT_CLAIM_RETRIES, 1);
	}

	if (c.idle_pick && claimed) {
		u64 enq_flags = 0;

		claim = attempt ? LOEHLE_CLAIM_RETRIED : LOEHLE_CLAIM_OK;
		if (c.sched_idle_pick) {
			if (wakee_si && idle_allowed)
				stat_add(st, LOEHLE_STAT_PACKING, 1);
			if (!wakee_si) {
				enq_flags = SCX_ENQ_PREEMPT;
				stat_add(st, LOEHLE_STAT_SCHED_IDLE_PREEMPT, 1);
			}
		}
		if (smt_active && !c.core_idle)
			stat_add(st, LOEHLE_STAT_BUSY_SIBLING_PICK, 1);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, enq_flags);
		stat_add(st, LOEHLE_STAT_DIRECT_DISPATCH, 1);
	} else if (c.idle_pick) {
		claim = LOEHLE_CLAIM_FAILED;
		c.cpu = prev_cpu;
		c.reason = LOEHLE_REASON_CLAIM_GAVE_UP;
	}

	return finish_pick(sc, st, &cfg, p, prev_cpu, path, &c, claim);
}

/*
 * A vtime that means something in this LLC's queue: at most one slice
 * behind its clock (a sleeper keeps one slice of credit) and at most
 * LOEHLE_MAX_LEAD_SLICES ahead of it. The lead bound is what keeps every
 * task within reach. At weight 1 (SCHED_IDLE) one slice costs 100 slices
 * of vtime, and the clock moves only when a running task's vtime passes it,
 * which short sleepers (pipes, timers) seldom do. And a task that changed
 * LLC (a wakeup placed elsewhere, a remote dispatch) brings a vtime measured
 * against another clock, which may be seconds ahead of this one. Without
 * the bound such tasks waited behind everyone else past the watchdog (seen:
 * 34 s under hackbench + cyclictest beside SCHED_IDLE hogs).
 */
static __always_inline u64 vtime_bound(u64 vtime, u32 llc, u64 slice_ns)
{
	u64 *clock = bpf_map_lookup_elem(&llc_vtime, &llc);

	return clock ? loehle_vtime_bound(vtime, *clock, slice_ns) : vtime;
}

void LOEHLE_STRUCT_OPS(loehle_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct loehle_config cfg;
	struct loehle_stats *st;
	struct cpu_state *cs;
	s32 cpu = scx_bpf_task_cpu(p), idle;
	u32 llc = cpu_llc(cpu);
	u64 vtime = p->scx.dsq_vtime;

	read_config(&cfg);
	st = stats_for(cfg.generation);
	stat_add(st, LOEHLE_STAT_ENQUEUE, 1);

	/*
	 * The slice ran out on this very CPU (a new task has no WAKEUP flag
	 * either, but a full slice, and must stay stealable).
	 */
	if (!(enq_flags & SCX_ENQ_WAKEUP) && !p->scx.slice &&
	    cpu == (s32)bpf_get_smp_processor_id() &&
	    bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
		/*
		 * Seed 002, kept up over time: a wakeup may have left this
		 * task beside a busy sibling (the fast path looks only inside
		 * prev's LLC). If a whole core is idle, move there now.
		 */
		if (cfg.smt == LOEHLE_SMT_IDLE_CORE && smt_active &&
		    sibling_busy(cpu)) {
			idle = scx_bpf_pick_idle_cpu(p->cpus_ptr, SCX_PICK_IDLE_CORE);
			if (idle >= 0) {
				scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | idle,
						   cfg.slice_ns, enq_flags);
				scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
				stat_add(st, LOEHLE_STAT_SMT_MOVE, 1);
				return;
			}
		}
		/*
		 * Nobody waiting in its LLC: keep the CPU. Bouncing through
		 * the shared DSQ would let another CPU (maybe a busy core's
		 * sibling) steal it for nothing.
		 */
		if (!scx_bpf_dsq_nr_queued(llc)) {
			scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, enq_flags);
			return;
		}
	}

	scx_bpf_dsq_insert_vtime(p, llc, cfg.slice_ns,
				 vtime_bound(vtime, llc, cfg.slice_ns), enq_flags);

	/* Wake an idle CPU for it, ours first. */
	if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		stat_add(st, LOEHLE_STAT_KICK, 1);
		return;
	}
	/* Under idle-core, a whole idle core first (seed 002). */
	idle = -1;
	if (cfg.smt == LOEHLE_SMT_IDLE_CORE && smt_active)
		idle = scx_bpf_pick_idle_cpu(p->cpus_ptr, SCX_PICK_IDLE_CORE);
	if (idle < 0)
		idle = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (idle >= 0) {
		scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
		stat_add(st, LOEHLE_STAT_KICK, 1);
		return;
	}
	/* No idle CPU: a non-SCHED_IDLE task preempts SCHED_IDLE work. */
	cs = cpu_state_of(cpu);
	if (cs && !task_is_sched_idle(p) && cs->running_sched_idle) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
		stat_add(st, LOEHLE_STAT_SCHED_IDLE_PREEMPT, 1);
	}
}

/* Count one event under the generation in force. */
static __always_inline void stat_now(u32 idx)
{
	struct loehle_config cfg;

	read_config(&cfg);
	stat_add(stats_for(cfg.generation), idx, 1);
}

void LOEHLE_STRUCT_OPS(loehle_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 llc = cpu_llc(cpu), i, other;

	if (scx_bpf_dsq_move_to_local(llc)) {
		stat_now(LOEHLE_STAT_DISPATCH_LOCAL_LLC);
		return;
	}
	bpf_for(i, 1, nr_llcs) {
		other = llc + i;
		if (other >= nr_llcs)
			other -= nr_llcs;
		if (scx_bpf_dsq_move_to_local(other)) {
			stat_now(LOEHLE_STAT_DISPATCH_REMOTE_LLC);
			return;
		}
	}
}

void LOEHLE_STRUCT_OPS(loehle_running, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_state *cs = cpu_state_of(cpu);
	u32 llc = cpu_llc(cpu);
	u64 *clock;

	if (cs) {
		cs->running_sched_idle = task_is_sched_idle(p);
		cs->running_weight = p->scx.weight;
		if (!cs->running_sched_idle)
			cs->sched_idle_claimed = 0;
	}
	clock = bpf_map_lookup_elem(&llc_vtime, &llc);
	if (clock && p->scx.dsq_vtime > *clock)
		*clock = p->scx.dsq_vtime;
}

void LOEHLE_STRUCT_OPS(loehle_stopping, struct task_struct *p, bool runnable)
{
	u32 llc = cpu_llc(scx_bpf_task_cpu(p));
	struct loehle_config cfg;
	u64 used;

	read_config(&cfg);
	used = cfg.slice_ns > p->scx.slice ? cfg.slice_ns - p->scx.slice : 0;
	p->scx.dsq_vtime += used * 100 / (p->scx.weight ? p->scx.weight : 1);
	/*
	 * Bound it here too, not only when it queues: a task kept on its CPU
	 * at slice expiry runs again without queueing, and ops.running would
	 * otherwise drag the LLC clock up by a weight-1 task's steep charge.
	 */
	p->scx.dsq_vtime = vtime_bound(p->scx.dsq_vtime, llc, cfg.slice_ns);
}

void LOEHLE_STRUCT_OPS(loehle_enable, struct task_struct *p)
{
	u32 llc = cpu_llc(scx_bpf_task_cpu(p));
	u64 *clock = bpf_map_lookup_elem(&llc_vtime, &llc);

	p->scx.dsq_vtime = clock ? *clock : 0;
}

void LOEHLE_STRUCT_OPS(loehle_update_idle, s32 cpu, bool idle)
{
	struct cpu_state *cs = cpu_state_of(cpu);

	if (!cs || !idle)
		return;
	/* A new idle period: nothing published yet (seed 000's U64_MAX). */
	cs->idle_stamp = bpf_ktime_get_ns();
	cs->idle_state = LOEHLE_STATE_UNPUBLISHED;
	cs->running_sched_idle = 0;
	cs->running_weight = 0;
	cs->sched_idle_claimed = 0;
}

SEC("tp_btf/cpu_idle")
int BPF_PROG(loehle_cpu_idle, unsigned int state, unsigned int cpu_id)
{
	struct cpu_state *cs = cpu_state_of(cpu_id);

	if (cs)
		cs->idle_state = state == LOEHLE_PWR_EVENT_EXIT ?
				 LOEHLE_STATE_UNPUBLISHED : state;
	return 0;
}

s32 LOEHLE_STRUCT_OPS_SLEEPABLE(loehle_init)
{
	u32 i;
	s32 ret;

	bpf_for(i, 0, nr_llcs) {
		ret = scx_bpf_create_dsq(i, -1);
		if (ret)
			return ret;
	}
	bpf_for(i, 0, nr_cpus) {
		struct cpu_state *cs = cpu_state_of(i);

		if (cs)
			cs->idle_state = LOEHLE_STATE_UNPUBLISHED;
	}
	return 0;
}

void LOEHLE_STRUCT_OPS(loehle_exit, struct scx_exit_info *ei)
{
	exit_info.exit_code = ei->exit_code;
	bpf_probe_read_kernel_str(exit_info.reason, sizeof(exit_info.reason),
				  ei->reason);
	bpf_probe_read_kernel_str(exit_info.msg, sizeof(exit_info.msg), ei->msg);
	if (ei->dump)
		bpf_probe_read_kernel_str(exit_dump, sizeof(exit_dump), ei->dump);
	/* kind last: the loader polls it to learn that the rest is there. */
	exit_info.kind = ei->kind;
}

SEC(".struct_ops.link")
struct sched_ext_ops loehle_ops = {
	.select_cpu	= (void *)loehle_select_cpu,
	.enqueue	= (void *)loehle_enqueue,
	.dispatch	= (void *)loehle_dispatch,
	.running	= (void *)loehle_running,
	.stopping	= (void *)loehle_stopping,
	.enable		= (void *)loehle_enable,
	.update_idle	= (void *)loehle_update_idle,
	.init		= (void *)loehle_init,
	.exit		= (void *)loehle_exit,
	.flags		= SCX_OPS_KEEP_BUILTIN_IDLE,
	.exit_dump_len	= LOEHLE_EXIT_DUMP_LEN,
	.name		= "loehle",
};
