/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_loehle: a sched_ext scheduler built around three recent fair-class
 * placement patches, so that their effect can be switched live and measured.
 *
 * This file gathers facts and acts; every decision is made by the pure
 * headers it includes, which the host tests include too:
 *   loehle/policy.h      where a waking or forking task goes (seeds 000,
 *                        002, 003, 004);
 *   loehle/sched_idle.h  which CPUs run only idle work, and their claims;
 *   loehle/cgroup_idle.h what idle work is under cpu.idle, and who may
 *                        preempt it (--sched-idle-scope);
 *   loehle/vtime.h       queue order, and why it cannot starve anyone;
 *   loehle/queue.h       normal work before idle work, idle work's
 *                        allowance, and whom a queued task preempts;
 *   loehle/sample.h      which picks become events.
 *
 * Placement (ops.select_cpu). Fork wakeups take the slow path, the
 * analogue of sched_balance_find_dst_group_cpu(): the candidate group is
 * prev's NUMA node (its LLC on single-node machines) within the task's
 * allowed, online CPUs; when the answer there is only a fallback (nothing
 * idle, or under idle-first only sched-idle CPUs, or under idle-core only
 * partly busy cores), the node or LLC with the most idle CPUs (or idle
 * cores) is scanned too and the better answer wins. Every other wakeup takes
 * the fast path, the analogue of select_idle_sibling(), over prev's LLC
 * only: the loader gives each LLC its CPU list, and the scan is skipped
 * outright when the LLC has no idle CPU and no CPU running idle work the
 * wakee could take (one cpumask intersection each: the overload cut-off K
 * Prateek Nayak's seed-003 reply asks for). Policy `builtin` hands the
 * whole decision to scx_bpf_select_cpu_dfl(), the baseline of every
 * comparison.
 *
 * Claiming. Between the scan and the enqueue another CPU may pick the same
 * idle CPU: the kernel calls this a stale pick, here it is a claim failure.
 * An idle pick is claimed with scx_bpf_test_and_clear_cpu_idle(); a
 * sched-idle pick with a compare-and-swap of the CPU's claim word, then
 * re-checked (loehle/sched_idle.h). A failed claim rescans (the lost CPU is
 * no longer idle) up to claim_retries times, then the task is queued on
 * prev's LLC. A successful claim dispatches the task straight to the
 * claimed CPU's local DSQ; a task placed on a sched-idle CPU preempts the
 * idle work at once when it may (the premise of seeds 003 and 004; who
 * may is loehle/cgroup_idle.h's, per --sched-idle-scope).
 *
 * Idle facts. The built-in idle masks (kept with SCX_OPS_KEEP_BUILTIN_IDLE
 * because ops.update_idle is implemented) say which CPUs and cores are idle.
 * ops.update_idle stamps the moment a CPU went idle and marks its idle state
 * unpublished; the power:cpu_idle tracepoint publishes the state the CPU
 * entered, and the loader's table maps (cpu, state) to an exit latency. A
 * CPU that went idle but has not published a state since has the key
 * U64_MAX, so it is picked only when nothing published is idle (seed 000).
 * The loader attaches the tracepoint only under a policy that reads exit
 * latencies and only when there is a latency table (Documentation/design.md,
 * "Load"): without a table every idle CPU stays unpublished, as the kernel's
 * own rq->idle_state stays NULL without a cpuidle driver.
 * Idle work, under --sched-idle-scope: a SCHED_IDLE task, or (cgroup and
 * hierarchy scopes) a task with a cpu.idle=1 group on its path. ops.running
 * caches the running task's group path per CPU and select_cpu reads the
 * wakee's once, so that the hierarchy rule costs a comparison of a few
 * group ids per sched-idle candidate (loehle/cgroup_idle.h).
 * What runs on each CPU is reported to loehle/sched_idle.h from running,
 * stopping, cpu_release, cpu_acquire and update_idle; a per-CPU mask of the
 * CPUs running idle work serves the scan cut-off.
 *
 * Hotplug. Offline CPUs are never offered to a scan: each candidate's
 * online flag is tested, whatever the task's mask says. ops.cpu_offline and
 * ops.cpu_online flip that flag, so a CPU leaving or coming back costs no
 * reload (without them the kernel unloads the scheduler on every hotplug);
 * hotplug.online mirrors the flags for the loader, which shows them. A CPU
 * going offline never dispatches from our queues again (from the moment it
 * is inactive, before ops.cpu_offline), and its hotplug waits for the
 * tasks counted on its runqueue, so cpu_offline hands its tasks waiting
 * in our queues to the global DSQ (loehle_offline_takes), which it still
 * consumes, and the kernel moves them on (breaking their affinity only
 * when none of their CPUs is left); per-CPU kthreads never enter our
 * queues at all (loehle/queue.h). Before that, while it waits in
 * synchronize_rcu() inactive, its LLC's queue is served by other LLCs'
 * CPUs through the remote overdue turn (loehle_remote_overdue). A CPU
 * that was offline when the loader read the topology has no known core,
 * LLC or node, so its coming online asks for a reload instead
 * (loehle_cpu_online_needs_reload). A change between the loader's topology
 * read and the attach is caught by the kernel: the loader passes the
 * hotplug sequence number it read first, and the kernel refuses the
 * enable with a restart request when it moved on. A CPU already out of
 * cpu_online_mask claims and kicks no idle CPU (kick_allowed(): its kick's
 * irq_work would never run, and the scheduler's stop would wait for it).
 *
 * SMT over time. A wakeup may leave a task beside a busy sibling, since the
 * fast path looks only inside prev's LLC. Under idle-core, a task whose
 * slice runs out on such a core moves to a whole idle core, nearest first
 * (its LLC, its node, anywhere), if there is one (counted as smt_move): the
 * seed-002 preference kept up after placement.
 *
 * Queueing. Two vtime-ordered DSQs per LLC, one for normal work and one for
 * idle work (loehle/vtime.h and loehle/queue.h have the rules and their
 * reasons): idle work runs only when no normal work is queued in reach,
 * except for a small, bounded allowance, and a normal task that finds no
 * idle CPU preempts idle work. A CPU dispatches from its own LLC first and
 * takes work from the other LLCs before it goes idle. Per-CPU kthreads skip
 * the queues for their CPU's local DSQ (loehle_goes_local: a CPU going
 * offline runs nothing from a BPF queue). When a higher class
 * takes a CPU (ops.cpu_release), the tasks already dispatched to its local
 * DSQ are re-enqueued so that other CPUs can run them.
 *
 * Configuration and statistics. The loader writes a double-buffered config
 * and flips active_config; each flip carries a new generation. Counters are
 * per CPU and per generation slot (generation % LOEHLE_GEN_SLOTS); a CPU
 * that first counts for a new generation resets its slot. Fork picks are
 * also counted per target CPU, the view in which scan-order bias shows.
 * Sampled picks go to a ring buffer; a full buffer is counted as a drop,
 * never waited on, and a half-full one wakes the reader
 * (loehle/sample.h).
 *
 * Kernels. One object serves 6.18 and 7.x: kfuncs that changed go through
 * scx/compat.bpf.h, and init records which variants the kernel gave.
 *
 * Time. Hot paths read scx_bpf_now(), the rq clock sched_ext caches, not
 * bpf_ktime_get_ns(): one clock read per select_cpu made the call 2.5x
 * dearer under TCG (57 us against 23 us per call). Two stamps are read
 * across CPUs, the sched-idle claim's time and the LLC's last idle-work
 * start; the CPUs' rq clocks agree to well within a slice, and both rules
 * take a stamp slightly ahead of the reader's clock as recent.
 */
#include "loehle.bpf.h"

char _license[] SEC("license") = "GPL";

/* Filled by the loader before load. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_llcs = 1;
const volatile __u32 nr_nodes = 1;
const volatile bool smt_active;
const volatile struct loehle_cpu_topo topo[LOEHLE_MAX_CPUS];
const volatile struct loehle_cpu_lists cpu_lists;
const volatile __u64 exit_latency_ns[LOEHLE_MAX_CPUS][LOEHLE_MAX_IDLE_STATES];

/* Written by the loader at any time. */
struct loehle_config configs[2];
__u32 active_config;

/* Written by init: LOEHLE_COMPAT_* of the running kernel. */
__u32 compat_flags;

/* Written by init, cpu_online and cpu_offline; read by the loader. */
struct loehle_hotplug hotplug;

/* Read by the loader once the kernel has disabled the scheduler. */
struct loehle_exit_info exit_info;
char exit_dump[LOEHLE_EXIT_DUMP_LEN];

/* Per-CPU facts other CPUs read while scanning. */
struct cpu_state {
	struct loehle_si_cpu si;	/* first: its claim word is CASed */
	struct loehle_cg_record cg;	/* of the running task, from ops.running */
	u64 idle_stamp;
	u64 running_since;	/* when the running task started, for its charge */
	u32 idle_state;		/* LOEHLE_STATE_UNPUBLISHED or a state index */
	u32 running_weight;
	u32 online;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_state);
} cpu_states SEC(".maps");

/*
 * Scan state lives in a map: it is too large for the BPF stack. So do the
 * facts of the CPU a scan loop looks at: the verifier does not track values
 * in map memory, so iterations that saw different facts still look alike
 * to it. On the stack, each mix of idle/busy/sched-idle/allowed values was
 * a state of its own at the loop head, and 6.18's verifier walked 290,000
 * instructions through loehle_scan_group alone (15 s at each start under
 * TCG); 7.x prunes them either way.
 */
struct scratch {
	struct loehle_slow_scan slow;
	struct loehle_fast_scan fast;
	struct loehle_cpu_facts facts;	/* of the scan's current candidate */
	struct loehle_config cfg;	/* the pick's configuration, in */
	struct loehle_choice choice;	/* a scan's answer, out */
	struct loehle_sampler sampler;
	struct loehle_cg_path wakee_cg;	/* the pick's wakee, in */
	struct loehle_cg_path cpu_cg;	/* the scan's candidate's, copied */
	u64 now;			/* the pick's time, in */
	u32 scan_skipped;		/* the fast scan found its LLC empty, out */
	u32 si_refused;			/* sched-idle CPUs refused to the wakee, out */
	u32 wakee_yields;		/* loehle_cg_wakee_yields(), in */
	u32 pad;
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

/*
 * Fork picks per target CPU, [slot * LOEHLE_MAX_CPUS + cpu]; the loader
 * zeroes a slot before reuse. In .bss, not a map: the loader reads it
 * through the skeleton's mapping, without a syscall per CPU and generation
 * (which made one stats reply cost milliseconds of the daemon's time).
 */
#define FORK_PICKS_LEN (LOEHLE_GEN_SLOTS * LOEHLE_MAX_CPUS)
__u64 fork_picks[FORK_PICKS_LEN];

/* Idle CPUs per node or LLC, scratch for loehle_busiest_idle_group(). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOEHLE_MAX_LLCS);
	__type(key, u32);
	__type(value, u32);
} group_idle SEC(".maps");

/*
 * Queues (loehle/queue.h): DSQ `llc` holds an LLC's normal work, DSQ
 * IDLE_DSQ(llc) its idle work. Each has its own virtual clock
 * (loehle/vtime.h), indexed by the DSQ id.
 */
#define IDLE_DSQ(llc) (LOEHLE_MAX_LLCS + (u32)(llc))

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * LOEHLE_MAX_LLCS);
	__type(key, u32);
	__type(value, u64);
} dsq_vtime SEC(".maps");

/* When idle work last started running in each LLC (its allowance). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_MAX_LLCS);
	__type(key, u32);
	__type(value, u64);
} llc_idle_run SEC(".maps");

/* When a CPU of each LLC last took a task from its normal queue. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_MAX_LLCS);
	__type(key, u32);
	__type(value, u64);
} llc_served SEC(".maps");

/*
 * When each task last began waiting, runnable: when it became runnable
 * (ops.runnable) or stopped running still runnable (ops.stopping). Read
 * only for tasks in our idle queues (loehle_idle_overdue). Our own stamp,
 * on the clock of scx_bpf_now(): the kernel's sched_info.last_queued
 * depends on CONFIG_SCHED_INFO's bookkeeping, and p->scx.runnable_at
 * counts jiffies of a HZ the program does not know.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, u64);
} task_wait_since SEC(".maps");

/*
 * When each LLC's oldest deferred wake of displaced idle work began, 0 for
 * none (loehle/queue.h, "Displaced idle work").
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_MAX_LLCS);
	__type(key, u32);
	__type(value, u64);
} llc_idle_wake SEC(".maps");

/*
 * Cpumasks made in init: one per LLC, and at LOEHLE_IDLE_WORK_MASK the CPUs
 * running idle work of ours (bits flip only when loehle_si_runs_idle_work()
 * changes). Read under the RCU protection every non-sleepable callback has.
 */
struct cpumask_slot {
	struct bpf_cpumask __kptr *mask;
};

#define LOEHLE_IDLE_WORK_MASK LOEHLE_MAX_LLCS

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOEHLE_MAX_LLCS + 1);
	__type(key, u32);
	__type(value, struct cpumask_slot);
} cpumasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LOEHLE_EVENTS_RING_BYTES);
} events SEC(".maps");

/*
 * Index the CPU tables through a mask: the verifier must see the bound on
 * the very register used for the address, and a compare on a copy of it is
 * not always enough after clang's register allocation.
 */
#define CPU_IDX(cpu) ((u32)(cpu) & (LOEHLE_MAX_CPUS - 1))
#define LLC_IDX(llc) ((u32)(llc) & (LOEHLE_MAX_LLCS - 1))
#define NODE_IDX(node) ((u32)(node) & (LOEHLE_MAX_NODES - 1))

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

/*
 * A masked index, masked where it is used. clang hoists a mask of a
 * loop-invariant value out of a bpf_for() body and may fold a mask into the
 * address arithmetic; 6.18's verifier widens such registers across the
 * iterations of an open-coded iterator and then rejects the access ("math
 * between map_value pointer and register with unbounded min value"). The
 * empty volatile asm keeps the mask in the loop body, on the register used.
 */
static __always_inline u32 bounded(u32 value, u32 limit_pow2)
{
	value &= limit_pow2 - 1;
	barrier_var(value);
	return value;
}

/* The k-th CPU of a group's run in the LLC or node list. */
static __always_inline s32 group_cpu(u32 by_node, u32 group, u32 k)
{
	u32 idx;

	if (by_node) {
		idx = cpu_lists.node_start[bounded(group, LOEHLE_MAX_NODES)] + k;
		return cpu_lists.node_cpus[bounded(idx, LOEHLE_MAX_CPUS)];
	}
	idx = cpu_lists.llc_start[bounded(group, LOEHLE_MAX_LLCS)] + k;
	return cpu_lists.llc_cpus[bounded(idx, LOEHLE_MAX_CPUS)];
}

static __always_inline u32 group_len(u32 by_node, u32 group)
{
	if (by_node)
		return cpu_lists.node_len[bounded(group, LOEHLE_MAX_NODES)];
	return cpu_lists.llc_len[bounded(group, LOEHLE_MAX_LLCS)];
}

static __always_inline const struct cpumask *cpumask_at(u32 slot)
{
	struct cpumask_slot *s = bpf_map_lookup_elem(&cpumasks, &slot);

	return s ? (const struct cpumask *)s->mask : NULL;
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
		if (cs && loehle_si_busy(&cs->si))
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

static __always_inline u64 config_slice_ns(void)
{
	u32 idx = *(volatile u32 *)&active_config & 1;

	return configs[idx].slice_ns;
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

/* Count n events under the generation in force. */
static __always_inline void stat_now_add(u32 idx, u64 n)
{
	u32 slot = *(volatile u32 *)&active_config & 1;

	stat_add(stats_for(configs[slot].generation), idx, n);
}

static __always_inline void stat_now(u32 idx)
{
	stat_now_add(idx, 1);
}

/*
 * May this CPU claim and kick an idle CPU? Not once it has left
 * cpu_online_mask. scx_bpf_kick_cpu() defers the kick to an irq_work on
 * the *calling* CPU, and a CPU on its way offline still runs our callbacks
 * for the wakeups it performs on the way out (the last stopper of
 * stop_machine, for one, wakes its caller). By then x86 has soft-disabled
 * its local APIC (__cpu_disable), so the irq_work's self-interrupt is lost
 * and the work stays on that CPU's list: an irq_work queued there later
 * raises no interrupt (the list is not empty), so it waits for that CPU's
 * next trip offline, which runs the list, and a scheduler stopping first
 * spins in irq_work_sync() (Documentation/testing.md, "The hotplug
 * hang"). Nor is an idle CPU claimed there: claimed and not woken, it
 * would stay hidden from every pick until it next ran the scheduler. The
 * task waits in its queue instead, and the kernel itself reschedules the
 * wakee's CPU if that one is idle. Every kick site is behind this test;
 * a refusal is counted.
 */
static __always_inline bool kick_allowed(void)
{
	const struct cpumask *online = scx_bpf_get_online_cpumask();
	bool caller_online = bpf_cpumask_test_cpu(bpf_get_smp_processor_id(),
						  online);

	scx_bpf_put_cpumask(online);
	if (!caller_online)
		stat_now(LOEHLE_STAT_KICK_FROM_OFFLINE);
	return caller_online;
}

static __always_inline bool task_is_sched_idle(const struct task_struct *p)
{
	return p->policy == LOEHLE_SCHED_IDLE_POLICY;
}

static __always_inline u32 config_scope(void)
{
	u32 idx = *(volatile u32 *)&active_config & 1;

	return configs[idx].sched_idle_scope;
}

/* Enough for any real hierarchy; a deeper one is cut (loehle/cgroup_idle.h). */
#define CG_MAX_WALK 32

/*
 * p's task group, or NULL for the root. An autogroup (the kernel's
 * per-session group of a root-cgroup task) is not a cgroup: the root too.
 * Only ever a child of the root, so only the task's own group can be one.
 */
static __always_inline struct task_group *task_tg(const struct task_struct *p)
{
	struct task_group *tg = NULL;

	if (!bpf_core_field_exists(p->sched_task_group) ||
	    !bpf_core_field_exists(tg->idle))
		return NULL;
	tg = p->sched_task_group;
	if (!tg || !tg->parent)
		return NULL;
	if (bpf_core_field_exists(tg->autogroup) && tg->autogroup)
		return NULL;
	return tg;
}

/*
 * p's path in the cpu controller's hierarchy (loehle/cgroup_idle.h), into
 * `out`. Read through CO-RE from its task group, on every kernel: cpu.idle
 * is tg->idle, which the kernel sets on a write before it tells sched_ext
 * (on 7.x, through ops.cgroup_set_idle; 6.18 has no such callback), so a
 * write counts from the next decision on, with one code path for both
 * series. `groups` 0 (TASK scope): the policy alone, nothing walked. A
 * subprogram of its own, verified once, whose walk keeps its count in
 * `out` (loehle_cg_path_push_parent): with a depth counter in a register
 * the verifier followed every depth separately and gave up ("sequence of
 * 8193 jumps is too complex").
 */
__noinline int loehle_read_cg_path(struct task_struct *p __arg_trusted,
				   struct loehle_cg_path *out, u32 groups)
{
	struct task_group *tg;
	u32 k;

	if (!p || !out)
		return 0;
	loehle_cg_path_init(out, task_is_sched_idle(p));
	tg = groups ? task_tg(p) : NULL;
	/*
	 * bpf_for, not a plain loop: the verifier checks an open-coded
	 * iterator's body once it converges; a plain loop's 32 iterations
	 * made the load take over 30 s under TCG.
	 */
	bpf_for(k, 0, CG_MAX_WALK) {
		if (!tg || !tg->parent)
			break;
		loehle_cg_path_push_parent(out, tg->css.id, tg->idle);
		tg = tg->parent;
	}
	if (tg && tg->parent)
		loehle_cg_path_cut(out);
	return 0;
}

/*
 * Idle work: what runs only when nothing else wants the CPU, under the
 * scope in force (loehle_cg_idle_work()): the policy, or under the cgroup
 * scopes any cpu.idle=1 group on p's path.
 */
__noinline int loehle_task_idle_work(struct task_struct *p __arg_trusted)
{
	struct task_group *tg;
	u32 k;

	if (!p)
		return 0;
	if (task_is_sched_idle(p))
		return 1;
	if (config_scope() == LOEHLE_SCOPE_TASK)
		return 0;
	tg = task_tg(p);
	bpf_for(k, 0, CG_MAX_WALK) {
		if (!tg || !tg->parent)
			break;
		if (tg->idle)
			return 1;
		tg = tg->parent;
	}
	return 0;
}

static __always_inline bool task_is_idle_work(struct task_struct *p)
{
	return loehle_task_idle_work(p);
}

/* The queue of `llc` a task belongs in. */
static __always_inline u32 queue_of(struct task_struct *p, u32 llc)
{
	return task_is_idle_work(p) ? IDLE_DSQ(llc) : llc;
}

/*
 * Report a transition to loehle/sched_idle.h's state (done by the caller)
 * and keep the idle-work mask in step: `was` is what
 * loehle_si_runs_idle_work() said before it.
 */
static __always_inline void track_idle_work(s32 cpu, struct cpu_state *cs,
					    bool was)
{
	bool now = loehle_si_runs_idle_work(&cs->si);
	struct cpumask_slot *slot;
	struct bpf_cpumask *mask;
	u32 key = LOEHLE_IDLE_WORK_MASK;

	if (now == was)
		return;
	slot = bpf_map_lookup_elem(&cpumasks, &key);
	mask = slot ? slot->mask : NULL;
	if (!mask)
		return;
	if (now)
		bpf_cpumask_set_cpu(cpu, mask);
	else
		bpf_cpumask_clear_cpu(cpu, mask);
}

/* Gather what policy.h needs to know about one CPU. */
static __always_inline void gather_facts(s32 cpu, const struct task_struct *p,
					 const struct cpumask *idle_mask,
					 const struct cpumask *idle_smt,
					 struct scratch *sc, bool want_load,
					 struct loehle_cpu_facts *f)
{
	struct cpu_state *cs = cpu_state_of(cpu);
	u32 state, queued = 0;
	int whole;
	s32 n;

	f->cpu = cpu;
	f->core = topo[CPU_IDX(cpu)].core;
	f->idle = bpf_cpumask_test_cpu(cpu, idle_mask);
	f->core_idle = smt_active ? bpf_cpumask_test_cpu(cpu, idle_smt) : f->idle;
	f->sched_idle = 0;
	f->preempt_refused = 0;
	f->exit_latency = LOEHLE_U64_MAX;
	f->idle_stamp = 0;
	f->load = 0;
	/* An offline CPU is never offered, whatever the task's mask says. */
	f->allowed = cs && loehle_cpu_usable(cs->online,
					      bpf_cpumask_test_cpu(cpu, p->cpus_ptr));
	if (!cs)
		return;

	f->idle_stamp = cs->idle_stamp;
	if (f->idle) {
		state = cs->idle_state;
		f->exit_latency = loehle_exit_latency_key(state,
			state < LOEHLE_MAX_IDLE_STATES ?
			exit_latency_ns[CPU_IDX(cpu)][state] : 0);
		return;
	}
	/* Only CPUs running idle work, or a load comparison, need the queue. */
	if (want_load || cs->si.running == LOEHLE_RUN_IDLE_WORK) {
		n = scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu);
		queued = n > 0 ? n : 0;
	}
	/*
	 * cs->cg is another CPU's, rewritten at its every ops.running and
	 * tick: a torn copy decides nothing (loehle_cg_record_load). A whole
	 * one may still be a task old: the claim's re-check catches a switch
	 * to normal work; a switch between two idle tasks is taken as the
	 * rule found it.
	 */
	f->sched_idle = loehle_si_is_sched_idle(&cs->si, sc->now, sc->cfg.slice_ns,
						queued);
	if (!f->sched_idle)
		goto load;	/* busy: no path copy on select_cpu's hot path */
	whole = loehle_cg_record_load(&cs->cg, &sc->cpu_cg);
	f->sched_idle = loehle_cg_idle_work_as_read(sc->cfg.sched_idle_scope,
						    whole, &sc->cpu_cg);
	if (f->sched_idle &&
	    loehle_cg_refused_as_read(sc->cfg.sched_idle_scope, whole,
				      &sc->cpu_cg, &sc->wakee_cg)) {
		f->preempt_refused = 1;
		if (f->allowed && loehle_cg_refusal_counts(sc->cfg.sched_idle))
			sc->si_refused++;
	}
load:
	f->load = loehle_si_load(&cs->si, cs->running_weight, queued);
}

/* Does cpu run idle work of ours (its record, any scope)? */
static __always_inline bool runs_idle_work(s32 cpu)
{
	struct cpu_state *cs = cpu_state_of(cpu);

	return cs && loehle_si_runs_idle_work(&cs->si);
}

/* Is cpu in the idle mask `idle`, online, and allowed for p? */
static __always_inline bool idle_and_usable(s32 cpu, const struct cpumask *idle,
					    const struct task_struct *p)
{
	struct cpu_state *cs;

	if (!bpf_cpumask_test_cpu(cpu, idle))
		return false;
	cs = cpu_state_of(cpu);
	return cs && loehle_cpu_usable(cs->online,
				       bpf_cpumask_test_cpu(cpu, p->cpus_ptr));
}

static __always_inline struct scratch *this_scratch(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&scratch, &zero);
}

/*
 * The selection walk (loehle/select.h) runs here over this environment:
 * the task, its pick's scratch entry, and the idle masks the running
 * global function holds references to.
 */
struct loehle_walk {
	struct task_struct *p;
	struct scratch *sc;
	const struct cpumask *idle_mask;
	const struct cpumask *idle_smt;
	const struct cpumask *count_mask;	/* the group search's */
};

static __always_inline u32 loehle_env_group_len(struct loehle_walk *w,
						u32 by_node, u32 group)
{
	return group_len(by_node, group);
}

static __always_inline s32 loehle_env_group_cpu(struct loehle_walk *w,
						u32 by_node, u32 group, u32 k)
{
	return group_cpu(by_node, group, k);
}

static __always_inline u32 loehle_env_cpu_llc(struct loehle_walk *w, s32 cpu)
{
	return cpu_llc(cpu);
}

static __always_inline u32 loehle_env_llc_pos(struct loehle_walk *w, s32 cpu)
{
	return cpu_lists.llc_pos[CPU_IDX(cpu)];
}

static __always_inline u32 loehle_env_core(struct loehle_walk *w, s32 cpu)
{
	return topo[CPU_IDX(cpu)].core;
}

static __always_inline int loehle_env_allowed(struct loehle_walk *w, s32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, w->p->cpus_ptr);
}

static __always_inline int loehle_env_runs_idle_work(struct loehle_walk *w,
						     s32 cpu)
{
	return runs_idle_work(cpu);
}

static __always_inline void loehle_env_gather(struct loehle_walk *w, s32 cpu,
					      int want_load,
					      struct loehle_cpu_facts *f)
{
	gather_facts(cpu, w->p, w->idle_mask, w->idle_smt, w->sc, want_load, f);
}

static __always_inline u32 loehle_env_rand(struct loehle_walk *w)
{
	return bpf_get_prandom_u32();
}

static __always_inline u32 loehle_env_nr_groups(struct loehle_walk *w,
						u32 by_node)
{
	return by_node ? nr_nodes : nr_llcs;
}

static __always_inline u32 loehle_env_nr_cpus(struct loehle_walk *w)
{
	return nr_cpus;
}

static __always_inline int loehle_env_idle_usable(struct loehle_walk *w,
						  s32 cpu, int whole_cores)
{
	return idle_and_usable(cpu, w->count_mask, w->p);
}

static __always_inline u32 loehle_env_cpu_group(struct loehle_walk *w,
						u32 by_node, s32 cpu)
{
	return by_node ? cpu_node(cpu) : cpu_llc(cpu);
}

/*
 * The group search's counts go through a map lookup keyed by the group
 * rather than an array indexed by it: a variable index computed right
 * after a kfunc call trips 6.18's verifier ("backtracking call unexpected
 * regs").
 */
static __always_inline void loehle_env_count_reset(struct loehle_walk *w,
						   u32 group)
{
	u32 *count = bpf_map_lookup_elem(&group_idle, &group);

	if (count)
		*count = 0;
}

static __always_inline void loehle_env_count_add(struct loehle_walk *w,
						 u32 group)
{
	u32 *count = bpf_map_lookup_elem(&group_idle, &group);

	if (count)
		(*count)++;
}

static __always_inline u32 loehle_env_count(struct loehle_walk *w, u32 group)
{
	u32 *count = bpf_map_lookup_elem(&group_idle, &group);

	return count ? *count : 0;
}

/* A missing mask (init failed to make it) means: scan. */
static __always_inline int loehle_env_llc_has_idle(struct loehle_walk *w,
						   u32 llc)
{
	const struct cpumask *llc_cpus = cpumask_at(LLC_IDX(llc));

	return !llc_cpus || bpf_cpumask_intersects(llc_cpus, w->idle_mask);
}

static __always_inline int loehle_env_llc_runs_idle_work(struct loehle_walk *w,
							 u32 llc)
{
	const struct cpumask *llc_cpus = cpumask_at(LLC_IDX(llc));
	const struct cpumask *idle_work = cpumask_at(LOEHLE_IDLE_WORK_MASK);

	return !llc_cpus || !idle_work || bpf_cpumask_intersects(llc_cpus, idle_work);
}

/* The walk's configuration, from the pick's. */
static __always_inline void walk_cfg_of(const struct scratch *sc,
					struct loehle_walk_cfg *cfg)
{
	cfg->policy = sc->cfg.policy;
	cfg->si_mode = sc->cfg.sched_idle;
	cfg->idle_core = sc->cfg.smt == LOEHLE_SMT_IDLE_CORE && smt_active;
	cfg->wakee_yields = sc->wakee_yields;
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
 * Slow-path scan of one group (loehle_walk_group). Returns 0, or -1 when
 * this CPU's scratch entry is missing.
 */
__noinline int loehle_scan_group(struct task_struct *p __arg_trusted,
				 u32 by_node, u32 group, s32 fallback)
{
	struct loehle_walk w = { .p = p };
	struct loehle_walk_cfg cfg;
	struct scratch *sc;

	sc = this_scratch();
	if (!sc || !p)
		return -1;
	w.sc = sc;
	walk_cfg_of(sc, &cfg);
	w.idle_mask = scx_bpf_get_idle_cpumask();
	w.idle_smt = scx_bpf_get_idle_smtmask();
	loehle_walk_group(&w, &cfg, &sc->slow, &sc->facts, by_node, group,
			  fallback, &sc->choice);
	scx_bpf_put_idle_cpumask(w.idle_smt);
	scx_bpf_put_idle_cpumask(w.idle_mask);
	return 0;
}

/* loehle_walk_busiest_group(), with its own reference to the idle mask. */
__noinline int loehle_busiest_idle_group(struct task_struct *p __arg_trusted,
					 u32 by_node, u32 whole_cores)
{
	struct loehle_walk w = { .p = p };
	s32 best;

	if (!p)
		return -1;
	w.count_mask = whole_cores ? scx_bpf_get_idle_smtmask() :
				     scx_bpf_get_idle_cpumask();
	best = loehle_walk_busiest_group(&w, by_node, whole_cores);
	scx_bpf_put_idle_cpumask(w.count_mask);
	return best;
}

/* The slow walk's group scans land in sc->choice; out is always that. */
static __always_inline int loehle_env_scan_group(struct loehle_walk *w,
						 u32 by_node, u32 group,
						 s32 fallback,
						 struct loehle_choice *out)
{
	if (loehle_scan_group(w->p, by_node, group, fallback) < 0)
		return -1;
	if (out != &w->sc->choice)
		*out = w->sc->choice;
	return 0;
}

static __always_inline s32 loehle_env_busiest_group(struct loehle_walk *w,
						    u32 by_node, int whole_cores)
{
	return loehle_busiest_idle_group(w->p, by_node, whole_cores);
}

/* Fork placement (loehle_walk_slow); the answer lands in sc->choice. */
static __always_inline int slow_pick(struct scratch *sc, struct task_struct *p,
				     s32 prev)
{
	struct loehle_walk w = { .p = p, .sc = sc };
	struct loehle_walk_cfg cfg;
	/* Groups are nodes; on one node, LLCs. */
	u32 by_node = nr_nodes > 1;

	walk_cfg_of(sc, &cfg);
	return loehle_walk_slow(&w, &cfg, by_node,
				by_node ? cpu_node(prev) : cpu_llc(prev), prev,
				&sc->choice);
}

/* Wakeup placement in prev's LLC (loehle_walk_fast); into sc->choice. */
__noinline int loehle_fast_pick(struct task_struct *p __arg_trusted, s32 prev)
{
	struct loehle_walk w = { .p = p };
	struct loehle_walk_cfg cfg;
	struct scratch *sc;

	sc = this_scratch();
	if (!sc || !p)
		return -1;
	w.sc = sc;
	walk_cfg_of(sc, &cfg);
	w.idle_mask = scx_bpf_get_idle_cpumask();
	w.idle_smt = scx_bpf_get_idle_smtmask();
	sc->scan_skipped = loehle_walk_fast(&w, &cfg, &sc->fast, &sc->facts,
					    prev, &sc->choice);
	scx_bpf_put_idle_cpumask(w.idle_smt);
	scx_bpf_put_idle_cpumask(w.idle_mask);
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

enum claim_result {
	CLAIM_LOST	= 0,	/* someone else's claim, or no longer sched-idle */
	CLAIM_HELD	= 1,
	CLAIM_STALE	= 2,	/* won, then a normal task was seen there */
};

/* Claim a sched-idle CPU for one wakee (loehle/sched_idle.h's protocol). */
static __always_inline u32 claim_sched_idle(s32 cpu, u32 pid, u64 now,
					    u64 ttl_ns)
{
	struct cpu_state *cs = cpu_state_of(cpu);
	u64 seen, mine;

	if (!cs)
		return CLAIM_LOST;
	seen = cs->si.claim;
	if (!loehle_si_claimable(&cs->si, seen, now, ttl_ns))
		return CLAIM_LOST;
	mine = loehle_si_claim_word(pid, now);
	if (__sync_val_compare_and_swap(&cs->si.claim, seen, mine) != seen)
		return CLAIM_LOST;
	if (loehle_si_claim_holds(&cs->si, mine))
		return CLAIM_HELD;
	__sync_val_compare_and_swap(&cs->si.claim, mine, 0);
	return CLAIM_STALE;
}

static __always_inline void emit_event(struct scratch *sc,
				       struct loehle_stats *st,
				       const struct loehle_config *cfg,
				       const struct task_struct *p, s32 prev,
				       u32 path, const struct loehle_choice *c,
				       u32 claim)
{
	struct loehle_pick_event *ev;

	if (!loehle_sample_due(&sc->sampler, cfg->generation, cfg->sample_every))
		return;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		stat_add(st, LOEHLE_STAT_EVENT_DROPS, 1);
		return;
	}
	ev->ts_ns = bpf_ktime_get_ns();	/* CLOCK_MONOTONIC, for readers */
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
	bpf_ringbuf_submit(ev, loehle_events_wakeup_due(
		bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA)) ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
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

	__sync_fetch_and_add(&fork_picks[bounded(key, FORK_PICKS_LEN)], 1);
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

/* Claim the scan's answer: an idle CPU, or a sched-idle one. */
static __always_inline bool claim_choice(struct loehle_stats *st,
					 const struct loehle_choice *c,
					 const struct scratch *sc, u32 pid)
{
	u32 result;

	if (!c->sched_idle_pick)
		return scx_bpf_test_and_clear_cpu_idle(c->cpu);
	result = claim_sched_idle(c->cpu, pid, sc->now, sc->cfg.slice_ns);
	if (result == CLAIM_STALE)
		stat_add(st, LOEHLE_STAT_SI_CLAIM_LOST, 1);
	return result == CLAIM_HELD;
}

/*
 * Does `cpu` run idle work, under `scope`, that a wakee with path `wakee`
 * may preempt (loehle_cg_preempts())? That CPU's record says, copied into
 * `running`.
 */
static __always_inline bool preempts_idle_work(s32 cpu, u32 scope,
					       const struct loehle_cg_path *wakee,
					       struct loehle_cg_path *running)
{
	struct cpu_state *cs = cpu_state_of(cpu);

	if (!cs || !loehle_si_runs_idle_work(&cs->si))
		return false;
	return loehle_cg_preempts_as_read(scope,
					  loehle_cg_record_load(&cs->cg, running),
					  running, wakee);
}

/* What one scan-and-claim attempt of select_cpu came to. */
enum attempt_outcome {
	ATTEMPT_FAILED = -1,	/* no scratch entry */
	ATTEMPT_NO_IDLE,	/* nothing idle to claim: place without one */
	ATTEMPT_CLAIMED,
	ATTEMPT_LOST,		/* another CPU claimed it first: rescan */
};

/*
 * One attempt: scan (slow path for forks, fast path otherwise), then claim
 * the answer, which lands in sc->choice. A subprogram of its own, so that
 * the verifier checks the scans once and the retry loop around it carries
 * one scalar: the loop's paths through the scans multiplied 6.18's
 * verifier work elevenfold (381,450 instructions and 22 s under TCG at
 * each start, against 34,619 on 7.x).
 */
__noinline int loehle_attempt(struct task_struct *p __arg_trusted, s32 prev_cpu,
			      u32 path)
{
	struct loehle_stats *st;
	struct scratch *sc = this_scratch();
	int ret;

	if (!sc)
		return ATTEMPT_FAILED;
	st = stats_for(sc->cfg.generation);
	/* Refusals of the last attempt only: a retry rescans the same CPUs. */
	sc->si_refused = 0;
	if (path == LOEHLE_PATH_FORK)
		ret = slow_pick(sc, p, prev_cpu);
	else
		ret = loehle_fast_pick(p, prev_cpu);
	if (ret < 0)
		return ATTEMPT_FAILED;
	if (path != LOEHLE_PATH_FORK && sc->scan_skipped)
		stat_add(st, LOEHLE_STAT_SCAN_SKIPPED, 1);
	if (!sc->choice.idle_pick)
		return ATTEMPT_NO_IDLE;
	stat_add(st, LOEHLE_STAT_CLAIM_ATTEMPTS, 1);
	if (claim_choice(st, &sc->choice, sc, p->pid))
		return ATTEMPT_CLAIMED;
	stat_add(st, LOEHLE_STAT_CLAIM_FAILURES, 1);
	return ATTEMPT_LOST;
}

s32 LOEHLE_STRUCT_OPS(loehle_select_cpu, struct task_struct *p, s32 prev_cpu,
		      u64 wake_flags)
{
	struct loehle_choice c = {};
	struct loehle_config cfg;
	struct loehle_stats *st;
	struct scratch *sc;
	u32 path, attempt, claim = LOEHLE_CLAIM_NONE;
	bool wakee_si, idle_allowed, is_idle = false, claimed;
	int outcome = ATTEMPT_FAILED;

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
			loehle_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, 0);
			stat_add(st, LOEHLE_STAT_DIRECT_DISPATCH, 1);
			claim = LOEHLE_CLAIM_OK;
		}
		return finish_pick(sc, st, &cfg, p, prev_cpu, path, &c, claim);
	}

	/* The wakee's path once; every candidate is tested against it. */
	loehle_read_cg_path(p, &sc->wakee_cg, cfg.sched_idle_scope != LOEHLE_SCOPE_TASK);
	wakee_si = loehle_cg_idle_work(cfg.sched_idle_scope, &sc->wakee_cg);
	sc->wakee_yields = loehle_cg_wakee_yields(cfg.sched_idle_scope,
						  &sc->wakee_cg);
	sc->si_refused = 0;
	/* Packing needs to know whether a truly idle CPU was on offer. */
	idle_allowed = wakee_si && loehle_idle_allowed(p);
	sc->cfg = cfg;
	sc->now = scx_bpf_now();

	bpf_for(attempt, 0, cfg.claim_retries + 1) {
		outcome = loehle_attempt(p, prev_cpu, path);
		if (outcome != ATTEMPT_LOST)
			break;
		if (attempt < cfg.claim_retries)
			stat_add(st, LOEHLE_STAT_CLAIM_RETRIES, 1);
	}
	if (sc->si_refused)
		stat_add(st, LOEHLE_STAT_SI_REFUSED, sc->si_refused);
	if (outcome == ATTEMPT_FAILED)
		return prev_cpu;
	c = sc->choice;
	claimed = outcome == ATTEMPT_CLAIMED;

	if (c.idle_pick && claimed) {
		u64 enq_flags = 0;
		bool local = true;

		claim = attempt ? LOEHLE_CLAIM_RETRIED : LOEHLE_CLAIM_OK;
		if (c.sched_idle_pick) {
			bool preempts = preempts_idle_work(c.cpu, cfg.sched_idle_scope,
							   &sc->wakee_cg, &sc->cpu_cg);

			if (wakee_si && idle_allowed)
				stat_add(st, LOEHLE_STAT_PACKING, 1);
			if (preempts) {
				enq_flags = SCX_ENQ_PREEMPT;
				stat_add(st, LOEHLE_STAT_SCHED_IDLE_PREEMPT, 1);
			} else {
				stat_add(st, LOEHLE_STAT_SI_NO_PREEMPT, 1);
			}
			/*
			 * Not preempting: to its queue, behind the LLC's
			 * normal work, through ops.enqueue (loehle/queue.h).
			 */
			local = loehle_sched_idle_pick_goes_local(preempts);
		}
		if (smt_active && !c.core_idle)
			stat_add(st, LOEHLE_STAT_BUSY_SIBLING_PICK, 1);
		if (local) {
			loehle_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, enq_flags);
			stat_add(st, LOEHLE_STAT_DIRECT_DISPATCH, 1);
		}
	} else if (c.idle_pick) {
		claim = LOEHLE_CLAIM_FAILED;
		c.cpu = prev_cpu;
		c.reason = LOEHLE_REASON_CLAIM_GAVE_UP;
	}

	return finish_pick(sc, st, &cfg, p, prev_cpu, path, &c, claim);
}

/* A vtime inside the window of queue `dsq`'s clock (loehle/vtime.h). */
static __always_inline u64 vtime_bound(u64 vtime, u32 dsq, u64 slice_ns)
{
	u64 *clock = bpf_map_lookup_elem(&dsq_vtime, &dsq);

	return clock ? loehle_vtime_bound(vtime, *clock, slice_ns) : vtime;
}

/*
 * Advance queue `dsq`'s clock to `vtime`. Several CPUs of one LLC start
 * tasks at once: a compare-and-swap, retried a few times, so the clock
 * never goes backwards; a lost race means another CPU moved it as far.
 */
static __always_inline void queue_clock_advance(u32 dsq, u64 vtime)
{
	u64 *clock = bpf_map_lookup_elem(&dsq_vtime, &dsq);
	u64 old, next;
	u32 i;

	if (!clock)
		return;
	bpf_for(i, 0, 4) {
		old = *clock;
		next = loehle_clock_advance(old, vtime);
		if (next == old ||
		    __sync_val_compare_and_swap(clock, old, next) == old)
			return;
	}
}

/*
 * Has p disabled migration itself? A BPF program runs with migration
 * disabled for the task it interrupts (the trampoline's migrate_disable()
 * with preemptible RCU, Debian's configuration), so for the current task
 * one level is ours, not p's. Wrong only on a kernel without that level,
 * where a task that disabled migration once is taken for movable: the
 * idle CPU's self-kick (loehle_update_idle) still runs it.
 */
static __always_inline bool task_migration_disabled(const struct task_struct *p)
{
	u32 depth;

	if (!bpf_core_field_exists(p->migration_disabled))
		return false;
	depth = p->migration_disabled;
	if (depth && p == (const struct task_struct *)bpf_get_current_task_btf())
		depth--;
	return depth > 0;
}

/*
 * Seed 002 at slice expiry: should a task of ours on `cpu` leave it for a
 * whole idle core? Only when the kernel will hand it to ops.enqueue and it
 * may run elsewhere (loehle_smt_movable), another thread of its core is
 * busy and some core it may run on is wholly idle.
 */
static __always_inline bool smt_move_wanted(struct task_struct *p, s32 cpu)
{
	const struct cpumask *idle_smt;
	bool any;

	if (!smt_active ||
	    !loehle_smt_movable(!!(p->flags & PF_EXITING),
				task_migration_disabled(p), p->nr_cpus_allowed) ||
	    !sibling_busy(cpu))
		return false;
	idle_smt = scx_bpf_get_idle_smtmask();
	any = bpf_cpumask_intersects(idle_smt, p->cpus_ptr);
	scx_bpf_put_idle_cpumask(idle_smt);
	return any;
}

/*
 * Under idle-core: claim a CPU of a whole idle core, nearest first: cpu's
 * LLC, then its node, then anywhere. The last step is what keeps seed
 * 002's preference: restricted to the node, two CPU-bound tasks were seen
 * sharing a core for good while the other node had a whole idle core.
 */
__noinline s32 loehle_claim_idle_core_near(struct task_struct *p __arg_trusted,
					   s32 cpu)
{
	const struct cpumask *idle_smt;
	u32 pass, k, len, group, by_node;
	s32 found = -1, other;

	if (!p)
		return -1;
	idle_smt = scx_bpf_get_idle_smtmask();
	bpf_for(pass, 0, 2) {
		by_node = pass;
		if (by_node && nr_nodes < 2)
			break;
		group = by_node ? cpu_node(cpu) : cpu_llc(cpu);
		len = group_len(by_node, group);
		bpf_for(k, 0, len) {
			other = group_cpu(by_node, group, k);
			if (!idle_and_usable(other, idle_smt, p))
				continue;
			if (scx_bpf_test_and_clear_cpu_idle(other)) {
				found = other;
				break;
			}
		}
		if (found >= 0)
			break;
	}
	scx_bpf_put_idle_cpumask(idle_smt);
	if (found < 0)
		found = scx_bpf_pick_idle_cpu(p->cpus_ptr, SCX_PICK_IDLE_CORE);
	return found;
}

/*
 * A task was queued and no CPU was idle: if it may preempt idle work
 * (loehle/cgroup_idle.h, per the scope), it does so at once in its LLC,
 * on its own CPU first (loehle/queue.h). Only a CPU the
 * task may run on: kicking another would cost the idle work its CPU for
 * nothing. (The other CPU is one idle-work CPU of the LLC, not a search
 * of them all for one in the task's mask.) Only behind kick_allowed().
 */
static __always_inline void preempt_idle_work(struct loehle_stats *st,
					      struct task_struct *p, s32 cpu,
					      u32 llc)
{
	const struct cpumask *llc_cpus, *idle_work;
	struct loehle_cg_path wakee, running;
	u32 scope = config_scope();
	s32 other = -1, target;
	bool own;

	loehle_read_cg_path(p, &wakee, scope != LOEHLE_SCOPE_TASK);
	/* Idle work itself preempts nothing, but under the hierarchy rule. */
	if (scope != LOEHLE_SCOPE_HIERARCHY && loehle_cg_idle_work(scope, &wakee))
		return;
	own = preempts_idle_work(cpu, scope, &wakee, &running);
	if (!own) {
		llc_cpus = cpumask_at(LLC_IDX(llc));
		idle_work = cpumask_at(LOEHLE_IDLE_WORK_MASK);
		if (llc_cpus && idle_work) {
			other = bpf_cpumask_any_and_distribute(llc_cpus, idle_work);
			if (other >= (s32)nr_cpus ||
			    !bpf_cpumask_test_cpu(other, p->cpus_ptr) ||
			    !preempts_idle_work(other, scope, &wakee, &running))
				other = -1;
		}
	}
	target = loehle_preempt_for(0, cpu,
				    own && bpf_cpumask_test_cpu(cpu, p->cpus_ptr),
				    other);
	if (target < 0)
		return;
	scx_bpf_kick_cpu(target, SCX_KICK_PREEMPT);
	stat_add(st, LOEHLE_STAT_SCHED_IDLE_PREEMPT, 1);
}

/*
 * Idle work queued in its LLC's idle queue: displaced from this CPU by
 * normal work this CPU runs next? Then no idle CPU is woken for it yet; the
 * LLC's deferral is stamped unless an older one is pending (loehle/queue.h).
 */
static __always_inline bool defer_idle_wake(s32 cpu, u32 llc, u64 enq_flags,
					    u64 slice_left)
{
	s32 next = scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL);
	u64 *since;

	if (!loehle_defer_idle_wake(1, !!(enq_flags & SCX_ENQ_WAKEUP),
				    slice_left,
				    cpu == (s32)bpf_get_smp_processor_id(),
				    next > 0 ? next : 0))
		return false;
	since = bpf_map_lookup_elem(&llc_idle_wake, &llc);
	if (!since)
		return false;
	if (!*since)
		__sync_val_compare_and_swap(since, 0, scx_bpf_now());
	return true;
}

/* Idle tasks the deferred wake looks at, from the head of an idle queue. */
#define LOEHLE_IDLE_WAKE_LOOK 8

/*
 * The deferred wake: an LLC's displaced idle work still waits after the
 * delay (or `now_anyway`: a higher class took one of the LLC's CPUs), so
 * claim and wake an idle CPU that one of the first waiting tasks may run
 * on (the kernel's pick, whole idle cores first; dispatch reaches other
 * LLCs' idle queues too). Any idle CPU of the LLC would not do: a task
 * pinned elsewhere (taskset) then went on waiting, the stamp spent, while
 * its allowed CPU stayed idle. One CPU acts on a deferral: the one whose
 * compare-and-swap clears the stamp.
 */
static __always_inline void wake_for_idle_work(u32 llc, bool now_anyway)
{
	u64 *since = bpf_map_lookup_elem(&llc_idle_wake, &llc);
	struct task_struct *p;
	s32 cpu = -1;
	u32 looked = 0;
	u64 seen;

	if (!since)
		return;
	seen = *since;
	if (!seen || (!now_anyway && !loehle_idle_wake_due(scx_bpf_now(), seen)))
		return;
	if (!kick_allowed())
		return;
	if (__sync_val_compare_and_swap(since, seen, 0) != seen)
		return;
	/* An empty queue: its own CPU took it back meanwhile, the usual case. */
	bpf_for_each(scx_dsq, p, IDLE_DSQ(llc), 0) {
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
		if (cpu >= 0 || ++looked >= LOEHLE_IDLE_WAKE_LOOK)
			break;
	}
	if (cpu < 0)
		return;
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	stat_now(now_anyway ? LOEHLE_STAT_IDLE_WAKE_RELEASED : LOEHLE_STAT_IDLE_WAKE_LATE);
	if (loehle_idle_wake_again(scx_bpf_dsq_nr_queued(IDLE_DSQ(llc))))
		__sync_val_compare_and_swap(since, 0, scx_bpf_now());
}

void LOEHLE_STRUCT_OPS(loehle_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct loehle_config cfg;
	struct loehle_stats *st;
	s32 cpu = scx_bpf_task_cpu(p), idle;
	u32 llc = cpu_llc(cpu), dsq = queue_of(p, llc);
	u64 vtime = p->scx.dsq_vtime;
	/* Read before the insert, which (on 6.18) sets a new slice. */
	u64 slice_left = p->scx.slice;

	read_config(&cfg);
	st = stats_for(cfg.generation);
	stat_add(st, LOEHLE_STAT_ENQUEUE, 1);

	/*
	 * Per-CPU kthreads: their own CPU, next (loehle/queue.h). Who runs
	 * it: that CPU, at once when it runs idle work (preempted here, under
	 * its rq lock, where its record is current), else at the end of the
	 * running task's slice; an idle CPU is rescheduled by the insert.
	 */
	if (loehle_goes_local(!!(p->flags & PF_KTHREAD), p->nr_cpus_allowed) &&
	    bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
		if (loehle_kthread_preempts(runs_idle_work(cpu))) {
			enq_flags |= SCX_ENQ_PREEMPT;
			stat_add(st, LOEHLE_STAT_KTHREAD_PREEMPT, 1);
		}
		loehle_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, enq_flags);
		return;
	}

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
		 * prev's LLC). If a whole core is idle, move there now,
		 * nearest first.
		 */
		if (cfg.smt == LOEHLE_SMT_IDLE_CORE && smt_move_wanted(p, cpu) &&
		    kick_allowed()) {
			idle = loehle_claim_idle_core_near(p, cpu);
			if (idle >= 0) {
				loehle_dsq_insert(p, SCX_DSQ_LOCAL_ON | idle,
						  cfg.slice_ns, enq_flags);
				scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
				stat_add(st, LOEHLE_STAT_SMT_MOVE, 1);
				return;
			}
		}
		/*
		 * Normal work with nobody waiting in its LLC keeps the CPU:
		 * bouncing through the shared queue would let another CPU
		 * (maybe a busy core's sibling) steal it for nothing. Idle
		 * work always goes back to its queue, behind whatever came.
		 */
		if (dsq == llc && !scx_bpf_dsq_nr_queued(llc)) {
			loehle_dsq_insert(p, SCX_DSQ_LOCAL, cfg.slice_ns, enq_flags);
			return;
		}
	}

	loehle_dsq_insert_vtime(p, dsq, cfg.slice_ns,
				vtime_bound(vtime, dsq, cfg.slice_ns), enq_flags);

	if (!kick_allowed())
		return;
	/* Wake an idle CPU for it, ours first. */
	if (scx_bpf_test_and_clear_cpu_idle(cpu)) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		stat_add(st, LOEHLE_STAT_KICK, 1);
		return;
	}
	/* Displaced idle work waits for its own CPU first (loehle/queue.h). */
	if (dsq != llc && defer_idle_wake(cpu, llc, enq_flags, slice_left)) {
		stat_add(st, LOEHLE_STAT_IDLE_WAKE_DEFERRED, 1);
		return;
	}
	/*
	 * One pass: with SMT active the kernel's pick tries whole idle cores
	 * before single idle CPUs by itself (seed 002's preference, whatever
	 * --smt says: this only chooses which idle CPU to wake).
	 */
	idle = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (idle >= 0) {
		scx_bpf_kick_cpu(idle, SCX_KICK_IDLE);
		stat_add(st, LOEHLE_STAT_KICK, 1);
		return;
	}
	preempt_idle_work(st, p, cpu, llc);
}

/* A CPU of `llc` took a task from its normal queue (loehle_remote_unserved). */
static __always_inline void note_llc_served(u32 llc)
{
	u64 *served = bpf_map_lookup_elem(&llc_served, &llc);

	if (served)
		*served = scx_bpf_now();
}

/* Has `llc`'s normal queue work its own CPUs left unserved for the bound? */
static __always_inline bool llc_unserved(u32 llc, u64 now, u64 slice_ns)
{
	u64 *served = bpf_map_lookup_elem(&llc_served, &llc);

	return served && scx_bpf_dsq_nr_queued(llc) > 0 &&
	       loehle_remote_unserved(now, *served, slice_ns);
}

/*
 * Move the first task of one of the queues base + llc, base + llc + 1, ...
 * (wrapping; from the `from`-th on) to this CPU. Counts `own_stat` when it
 * came from this CPU's LLC, else `remote_stat`.
 */
static __always_inline bool move_from_queues(u32 base, u32 llc, u32 from,
					     u32 own_stat, u32 remote_stat)
{
	u32 i, other;

	bpf_for(i, from, nr_llcs) {
		other = llc + i;
		if (other >= nr_llcs)
			other -= nr_llcs;
		if (loehle_dsq_move_to_local(base + other)) {
			stat_now(i ? remote_stat : own_stat);
			if (!base && !i)
				note_llc_served(llc);
			return true;
		}
	}
	return false;
}

/* Is this LLC's idle work owed its allowance now (loehle/queue.h)? */
static __always_inline bool idle_turn_due(u32 llc, u64 slice_ns)
{
	u64 *last = bpf_map_lookup_elem(&llc_idle_run, &llc);
	s32 queued = scx_bpf_dsq_nr_queued(IDLE_DSQ(llc));

	return last && queued > 0 &&
	       loehle_idle_turn_due(scx_bpf_now(), *last, slice_ns, queued);
}

/* When p began waiting, runnable (task_wait_since; 0: not known). */
static __always_inline u64 waiting_since(struct task_struct *p)
{
	u64 *since = bpf_task_storage_get(&task_wait_since, p, 0, 0);

	return since ? *since : 0;
}

/* p begins waiting, runnable, now. */
static __always_inline void note_wait_start(struct task_struct *p)
{
	u64 *since = bpf_task_storage_get(&task_wait_since, p, 0, 0);

	if (since)
		*since = scx_bpf_now();
}

/*
 * Run an overdue idle task of this LLC that this CPU may run
 * (loehle/queue.h, loehle_idle_overdue), for a short turn. Who runs it:
 * this CPU, now, ahead of everything; its turn's end is the next dispatch,
 * where the next overdue task goes. Looks at the first
 * LOEHLE_IDLE_OVERDUE_LOOK tasks of the idle queue only.
 */
static __always_inline bool run_overdue_idle_work(s32 cpu, u32 llc, u64 slice_ns)
{
	struct task_struct *p;
	u64 now = scx_bpf_now();
	u32 looked = 0;

	if (scx_bpf_dsq_nr_queued(IDLE_DSQ(llc)) <= 0)
		return false;
	bpf_for_each(scx_dsq, p, IDLE_DSQ(llc), 0) {
		if (++looked > LOEHLE_IDLE_OVERDUE_LOOK)
			break;
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr) ||
		    !loehle_idle_overdue(now, waiting_since(p)))
			continue;
		scx_bpf_dsq_move_set_slice(LOEHLE_DSQ_ITER,
					   loehle_idle_overdue_slice(slice_ns));
		if (scx_bpf_dsq_move(LOEHLE_DSQ_ITER, p, SCX_DSQ_LOCAL, 0)) {
			stat_now(LOEHLE_STAT_IDLE_OVERDUE);
			return true;
		}
	}
	return false;
}

/*
 * Take a task of another LLC's normal queue that its own CPUs have left
 * unserved and that has waited past the bound (loehle_remote_overdue), if
 * this CPU may run it: the first such of the first
 * LOEHLE_IDLE_OVERDUE_LOOK tasks, in vtime order, past any this CPU may
 * not run. Who runs such a task otherwise: only its own LLC's CPUs, or
 * others once their own queue is empty; with its own CPUs not dispatching
 * (inactive on their way offline, taken by a higher class) and the rest
 * saturated, nobody. A served queue costs a map read and a count.
 */
static __always_inline bool run_overdue_remote_work(s32 cpu, u32 llc, u64 slice_ns)
{
	struct task_struct *p;
	u64 now = scx_bpf_now();
	u32 i, other, looked;

	bpf_for(i, 1, nr_llcs) {
		other = llc + i;
		if (other >= nr_llcs)
			other -= nr_llcs;
		if (!llc_unserved(other, now, slice_ns))
			continue;
		looked = 0;
		bpf_for_each(scx_dsq, p, other, 0) {
			if (++looked > LOEHLE_IDLE_OVERDUE_LOOK)
				break;
			if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr) ||
			    !loehle_remote_overdue(now, waiting_since(p), slice_ns))
				continue;
			if (scx_bpf_dsq_move(LOEHLE_DSQ_ITER, p, SCX_DSQ_LOCAL, 0)) {
				stat_now(LOEHLE_STAT_REMOTE_OVERDUE);
				return true;
			}
		}
	}
	return false;
}

/*
 * What this CPU runs next, in loehle/queue.h's order: normal work anywhere
 * before idle work, a normal prev before idle work, idle work's allowance
 * first when it is due. "prev may keep the CPU": its slice ran out, nothing
 * else was found, and seed 002 does not want it moved. Then it gets a new
 * slice; otherwise the kernel hands it to enqueue (SCX_OPS_ENQ_LAST), where
 * the seed-002 move happens. Without ENQ_LAST the kernel would keep the last
 * task running unasked, and the move would happen only when another task
 * waited.
 */
void LOEHLE_STRUCT_OPS(loehle_dispatch, s32 cpu, struct task_struct *prev)
{
	u32 llc = cpu_llc(cpu), idx, k, plan;
	bool due, may_keep;

	idx = *(volatile u32 *)&active_config & 1;
	/* Step 0: an idle task that waited too long, whatever else waits. */
	if (run_overdue_idle_work(cpu, llc, configs[idx].slice_ns))
		return;
	/* Then a remote LLC's normal task nobody there took for two slices. */
	if (run_overdue_remote_work(cpu, llc, configs[idx].slice_ns))
		return;
	due = idle_turn_due(llc, configs[idx].slice_ns);
	may_keep = prev && (prev->scx.flags & SCX_TASK_QUEUED) &&
		   !(configs[idx].smt == LOEHLE_SMT_IDLE_CORE &&
		     smt_move_wanted(prev, cpu));
	plan = loehle_plan_dispatch(due, may_keep, prev && task_is_idle_work(prev));
	for (k = 0; k < LOEHLE_DISPATCH_STEPS; k++) {
		switch (loehle_plan_step(plan, k)) {
		case LOEHLE_STEP_NORMAL:
			if (move_from_queues(0, llc, 0, LOEHLE_STAT_DISPATCH_LOCAL_LLC,
					     LOEHLE_STAT_DISPATCH_REMOTE_LLC))
				return;
			break;
		case LOEHLE_STEP_IDLE_LOCAL:
			if (loehle_dsq_move_to_local(IDLE_DSQ(llc))) {
				stat_now(due ? LOEHLE_STAT_IDLE_TURN : LOEHLE_STAT_DISPATCH_IDLE);
				return;
			}
			break;
		case LOEHLE_STEP_IDLE_REMOTE:
			if (move_from_queues(LOEHLE_MAX_LLCS, llc, 1, 0,
					     LOEHLE_STAT_DISPATCH_IDLE))
				return;
			break;
		case LOEHLE_STEP_KEEP_PREV:
			/*
			 * Only with nothing in the local DSQ: a task that
			 * arrived there while the rq lock was dropped during
			 * balance would otherwise wait for prev's new slice.
			 */
			if (prev && !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL))
				loehle_set_slice(prev, configs[idx].slice_ns);
			return;
		default:
			return;
		}
	}
}

void LOEHLE_STRUCT_OPS(loehle_running, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_state *cs = cpu_state_of(cpu);
	u32 llc = cpu_llc(cpu), dsq, scope;
	struct loehle_cg_path path;
	u64 vtime, *last;
	bool was;

	if (cs) {
		/*
		 * The record holds idle work under the scope in force, which
		 * the idle-work mask, the claim's re-check and enqueue's
		 * preemption read as they find it; the groups are read only
		 * where the scope looks at them. A scope switch reaches a CPU
		 * at its next running or tick.
		 */
		scope = config_scope();
		loehle_read_cg_path(p, &path, scope != LOEHLE_SCOPE_TASK);
		loehle_cg_record_store(&cs->cg, &path);
		was = loehle_si_runs_idle_work(&cs->si);
		loehle_si_on_running(&cs->si, loehle_cg_idle_work(scope, &path),
				     p->pid);
		track_idle_work(cpu, cs, was);
		cs->running_weight = p->scx.weight;
		cs->running_since = scx_bpf_now();
		/* queue_of()'s answer from the path just read: one walk. */
		dsq = loehle_si_runs_idle_work(&cs->si) ? IDLE_DSQ(llc) : llc;
	} else {
		dsq = queue_of(p, llc);
	}
	/* Into its queue's window in this LLC (loehle/vtime.h). */
	vtime = vtime_bound(p->scx.dsq_vtime, dsq, config_slice_ns());
	if (vtime != p->scx.dsq_vtime)
		loehle_set_dsq_vtime(p, vtime);
	queue_clock_advance(dsq, vtime);
	if (dsq != llc) {
		last = bpf_map_lookup_elem(&llc_idle_run, &llc);
		if (last)
			*last = scx_bpf_now();
	}
}

/*
 * The running task's path and idle-work status, read again at each tick:
 * a task that keeps its CPU across slices passes through no ops.running,
 * and a scope switch or a write to cpu.idle must reach the CPUs it runs on
 * within a tick.
 */
void LOEHLE_STRUCT_OPS(loehle_tick, struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_state *cs = cpu_state_of(cpu);
	struct loehle_cg_path path;
	bool was;
	u32 scope;

	/* A busy CPU's tick is where displaced idle work's wake comes due. */
	wake_for_idle_work(cpu_llc(cpu), false);
	if (!cs || cs->si.running == LOEHLE_RUN_NONE)
		return;
	scope = config_scope();
	loehle_read_cg_path(p, &path, scope != LOEHLE_SCOPE_TASK);
	loehle_cg_record_store(&cs->cg, &path);
	was = loehle_si_runs_idle_work(&cs->si);
	loehle_si_on_tick(&cs->si, loehle_cg_idle_work(scope, &path));
	track_idle_work(cpu, cs, was);
}

void LOEHLE_STRUCT_OPS(loehle_stopping, struct task_struct *p, bool runnable)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_state *cs = cpu_state_of(cpu);
	u64 vtime = p->scx.dsq_vtime;
	bool was;

	if (cs) {
		vtime += loehle_vtime_charge(
			loehle_ran_ns(scx_bpf_now(), cs->running_since),
			p->scx.weight);
		cs->running_since = 0;
		cs->running_weight = 0;
		was = loehle_si_runs_idle_work(&cs->si);
		loehle_si_on_stopping(&cs->si);
		track_idle_work(cpu, cs, was);
	}
	/* Into the window when it stops too (loehle/vtime.h). */
	loehle_set_dsq_vtime(p, vtime_bound(vtime, queue_of(p, cpu_llc(cpu)),
					    config_slice_ns()));
	if (runnable)
		note_wait_start(p);
}

/* A task that wakes begins to wait (loehle_idle_overdue measures from here). */
void LOEHLE_STRUCT_OPS(loehle_runnable, struct task_struct *p, u64 enq_flags)
{
	note_wait_start(p);
}

/* Every task of ours gets its wait stamp here, where allocating is allowed. */
s32 LOEHLE_STRUCT_OPS(loehle_init_task, struct task_struct *p,
		      struct scx_init_task_args *args)
{
	u64 *since = bpf_task_storage_get(&task_wait_since, p, 0,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (since)
		*since = scx_bpf_now();
	return 0;
}

/*
 * A higher class (RT, DL, stop) takes the CPU: it is not sched-idle behind
 * that thread, and what we already dispatched to it goes back through
 * enqueue so that other CPUs can run it meanwhile.
 */
void LOEHLE_STRUCT_OPS(loehle_cpu_release, s32 cpu,
		       struct scx_cpu_release_args *args)
{
	struct cpu_state *cs = cpu_state_of(cpu);
	bool was;

	if (cs) {
		was = loehle_si_runs_idle_work(&cs->si);
		loehle_si_on_release(&cs->si);
		track_idle_work(cpu, cs, was);
		cs->running_weight = 0;
	}
	stat_now(LOEHLE_STAT_CPU_RELEASE);
	/* That CPU's ticks stop being ours: no deferred wake waits for them. */
	wake_for_idle_work(cpu_llc(cpu), true);
	loehle_reenqueue_local();
}

void LOEHLE_STRUCT_OPS(loehle_cpu_acquire, s32 cpu,
		       struct scx_cpu_acquire_args *args)
{
	struct cpu_state *cs = cpu_state_of(cpu);

	if (cs)
		loehle_si_on_acquire(&cs->si);
}

void LOEHLE_STRUCT_OPS(loehle_enable, struct task_struct *p)
{
	u32 dsq = queue_of(p, cpu_llc(scx_bpf_task_cpu(p)));
	u64 *clock = bpf_map_lookup_elem(&dsq_vtime, &dsq);

	loehle_set_dsq_vtime(p, clock ? *clock : 0);
}

void LOEHLE_STRUCT_OPS(loehle_update_idle, s32 cpu, bool idle)
{
	struct cpu_state *cs = cpu_state_of(cpu);
	bool was;

	if (!cs || !idle)
		return;
	/* A new idle period: nothing published yet (seed 000's U64_MAX). */
	cs->idle_stamp = scx_bpf_now();
	cs->idle_state = LOEHLE_STATE_UNPUBLISHED;
	cs->running_weight = 0;
	was = loehle_si_runs_idle_work(&cs->si);
	loehle_si_on_idle(&cs->si);
	track_idle_work(cpu, cs, was);
	/*
	 * A task in this CPU's local DSQ as it goes idle (loehle/queue.h,
	 * loehle_idle_kicks_itself): who runs it is this CPU, rescheduled by
	 * its own kick as soon as it leaves this callback. A CPU already out
	 * of cpu_online_mask cannot kick itself; the kernel pushes its tasks
	 * on (balance_push).
	 */
	if (loehle_idle_kicks_itself(scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu)) &&
	    kick_allowed()) {
		scx_bpf_kick_cpu(cpu, 0);
		stat_now(LOEHLE_STAT_IDLE_LOCAL_KICK);
	}
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

/* cs->online is what the scans test; hotplug.online mirrors it for the loader. */
static void set_cpu_online(s32 cpu, bool online)
{
	struct cpu_state *cs = cpu_state_of(cpu);
	u32 word = CPU_IDX(cpu) / 64;
	u64 bit = 1ULL << (CPU_IDX(cpu) % 64);

	if (!cs || word >= LOEHLE_ONLINE_WORDS)
		return;
	cs->online = online;
	if (online)
		__sync_fetch_and_or(&hotplug.online[word], bit);
	else
		__sync_fetch_and_and(&hotplug.online[word], ~bit);
}

static char reload_fmt[] = "cpu %d came online, its topology unknown at load";

void LOEHLE_STRUCT_OPS(loehle_cpu_online, s32 cpu)
{
	u64 args[1] = { cpu };

	if (loehle_cpu_online_needs_reload(topo[CPU_IDX(cpu)].online)) {
		scx_bpf_exit_bstr(SCX_ECODE_ACT_RESTART | SCX_ECODE_RSN_HOTPLUG,
				  reload_fmt, args, sizeof(args));
		return;
	}
	set_cpu_online(cpu, true);
	__sync_fetch_and_add(&hotplug.events, 1);
}

/*
 * Hands the tasks of queue `dsq` that loehle_offline_takes names (the
 * dying CPU's, and those only it may run) to the global DSQ; returns how
 * many.
 */
static __always_inline u32 rehome_from(u64 dsq, s32 cpu)
{
	struct task_struct *p;
	u32 moved = 0;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		if (!loehle_offline_takes(scx_bpf_task_cpu(p) == cpu, p->nr_cpus_allowed,
					  bpf_cpumask_test_cpu(cpu, p->cpus_ptr)))
			continue;
		if (scx_bpf_dsq_move(LOEHLE_DSQ_ITER, p, SCX_DSQ_GLOBAL, 0))
			moved++;
	}
	return moved;
}

/*
 * Who runs the tasks of the dying CPU waiting in our queues: a CPU of its
 * node, from the node's global DSQ (consumed before our queues), before
 * it goes: the dying CPU itself, whereupon the kernel pushes the task to
 * an online CPU of its mask, or another CPU of the node
 * (loehle/queue.h, loehle_offline_takes).
 */
void LOEHLE_STRUCT_OPS(loehle_cpu_offline, s32 cpu)
{
	u32 llc, moved = 0;

	set_cpu_online(cpu, false);
	bpf_for(llc, 0, nr_llcs) {
		moved += rehome_from(llc, cpu);
		moved += rehome_from(IDLE_DSQ(llc), cpu);
	}
	if (moved)
		stat_now_add(LOEHLE_STAT_OFFLINE_REHOMED, moved);
	__sync_fetch_and_add(&hotplug.events, 1);
}

/* A new cpumask in cpumasks[slot] holding `len` CPUs of `by_node`'s list. */
static int make_group_mask(u32 slot, u32 by_node, u32 group, u32 len)
{
	struct bpf_cpumask *mask, *old;
	struct cpumask_slot *s;
	u32 k;

	s = bpf_map_lookup_elem(&cpumasks, &slot);
	if (!s)
		return -ENOENT;
	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	bpf_for(k, 0, len)
		bpf_cpumask_set_cpu(group_cpu(by_node, group, k), mask);
	old = bpf_kptr_xchg(&s->mask, mask);
	if (old)
		bpf_cpumask_release(old);
	return 0;
}

s32 LOEHLE_STRUCT_OPS_SLEEPABLE(loehle_init)
{
	u32 i;
	s32 ret;

	compat_flags = loehle_compat_flags();
	bpf_for(i, 0, nr_llcs) {
		ret = scx_bpf_create_dsq(i, -1);
		if (ret)
			return ret;
		ret = scx_bpf_create_dsq(IDLE_DSQ(i), -1);
		if (ret)
			return ret;
		ret = make_group_mask(i, 0, i, group_len(0, i));
		if (ret)
			return ret;
	}
	ret = make_group_mask(LOEHLE_IDLE_WORK_MASK, 0, 0, 0);
	if (ret)
		return ret;
	bpf_for(i, 0, nr_cpus) {
		struct cpu_state *cs = cpu_state_of(i);

		if (!cs)
			continue;
		cs->idle_state = LOEHLE_STATE_UNPUBLISHED;
		set_cpu_online(i, topo[CPU_IDX(i)].online);
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
	.runnable	= (void *)loehle_runnable,
	.running	= (void *)loehle_running,
	.tick		= (void *)loehle_tick,
	.stopping	= (void *)loehle_stopping,
	.cpu_acquire	= (void *)loehle_cpu_acquire,
	.cpu_release	= (void *)loehle_cpu_release,
	.init_task	= (void *)loehle_init_task,
	.enable		= (void *)loehle_enable,
	.update_idle	= (void *)loehle_update_idle,
	.cpu_online	= (void *)loehle_cpu_online,
	.cpu_offline	= (void *)loehle_cpu_offline,
	.init		= (void *)loehle_init,
	.exit		= (void *)loehle_exit,
	/* ENQ_LAST: see loehle_dispatch, which keeps the last task running. */
	.flags		= SCX_OPS_KEEP_BUILTIN_IDLE | SCX_OPS_ENQ_LAST,
	.exit_dump_len	= LOEHLE_EXIT_DUMP_LEN,
	.name		= "loehle",
};
