/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between scx_loehle's BPF program and its userspace loader.
 *
 * Plain C, types only: this header is included by scx/loehle.bpf.c (after
 * vmlinux.h) and by the C++ loader and tests (after <linux/types.h>). It
 * holds the configuration the loader writes, the statistics indices both
 * sides agree on, the ring-buffer event layout and the topology and
 * idle-latency tables the loader fills. Changing anything here changes the
 * ABI between the two halves of one build; nothing else depends on it.
 */
#ifndef LOEHLE_INTF_H
#define LOEHLE_INTF_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Hard limits; the loader refuses machines beyond them. */
#define LOEHLE_MAX_CPUS		512
#define LOEHLE_MAX_LLCS		64
#define LOEHLE_MAX_NODES	16
#define LOEHLE_MAX_IDLE_STATES	10
/* Statistics are kept for the newest LOEHLE_GEN_SLOTS generations. */
#define LOEHLE_GEN_SLOTS	8
#define LOEHLE_TIE_BUCKETS	10	/* log2 buckets: 1, 2-3, 4-7, ..., 512+ */

#define LOEHLE_SCHED_IDLE_POLICY 5	/* SCHED_IDLE in <linux/sched.h> */
#define LOEHLE_U64_MAX		(~(__u64)0)

/* Tie-break policy for the slow path; BUILTIN delegates to the kernel. */
enum loehle_policy {
	LOEHLE_POLICY_BUILTIN	= 0,
	LOEHLE_POLICY_RECENCY	= 1,	/* before seed 000 */
	LOEHLE_POLICY_FIRST	= 2,	/* seed 000 patch 1 */
	LOEHLE_POLICY_RESERVOIR	= 3,	/* seed 000 patch 2 */
	LOEHLE_NR_POLICIES,
};

/* How a CPU that runs only SCHED_IDLE work is treated (seeds 003, 004). */
enum loehle_sched_idle_mode {
	LOEHLE_SI_MAINLINE	= 0,	/* counts as idle for everyone */
	LOEHLE_SI_WAKEE_AWARE	= 1,	/* seed 003 */
	LOEHLE_SI_IDLE_FIRST	= 2,	/* seed 004 patch 1 */
	LOEHLE_SI_IGNORE	= 3,	/* seed 004 patch 2 */
	LOEHLE_NR_SI_MODES,
};

/*
 * Which work is idle work, and whom it yields to (seed 004's review;
 * loehle/cgroup_idle.h has the rules).
 */
enum loehle_si_scope {
	LOEHLE_SCOPE_TASK	= 0,	/* the task's policy only */
	LOEHLE_SCOPE_CGROUP	= 1,	/* or any cpu.idle=1 group on its path */
	LOEHLE_SCOPE_HIERARCHY	= 2,	/* and only for a wakee that may preempt it */
	LOEHLE_NR_SCOPES,
};

/* SMT idle-core preference (seed 002). */
enum loehle_smt_mode {
	LOEHLE_SMT_OFF		= 0,
	LOEHLE_SMT_IDLE_CORE	= 1,
	LOEHLE_NR_SMT_MODES,
};

/* Which select_cpu path made a decision. */
enum loehle_path {
	LOEHLE_PATH_FORK	= 0,	/* SCX_WAKE_FORK: slow path */
	LOEHLE_PATH_WAKEUP	= 1,	/* ordinary wakeup: fast path */
	LOEHLE_PATH_SYNC	= 2,	/* SCX_WAKE_SYNC wakeup: fast path */
	LOEHLE_NR_PATHS,
};

/* Why a CPU was chosen. */
enum loehle_reason {
	LOEHLE_REASON_PREV_IDLE		= 0,	/* fast: prev counts as idle */
	LOEHLE_REASON_IDLE_CORE		= 1,	/* fast: CPU of a fully idle core */
	LOEHLE_REASON_SMT_SIBLING	= 2,	/* fast: idle SMT sibling of prev */
	LOEHLE_REASON_IDLE_CPU		= 3,	/* fast: idle CPU in prev's LLC */
	LOEHLE_REASON_SHALLOWEST	= 4,	/* slow: best (core, exit latency) key */
	LOEHLE_REASON_SCHED_IDLE	= 5,	/* any: a CPU running only SCHED_IDLE */
	LOEHLE_REASON_LEAST_LOADED	= 6,	/* slow: no idle CPU in the group */
	LOEHLE_REASON_PREV_BUSY		= 7,	/* fast: nothing idle, stay on prev */
	LOEHLE_REASON_BUILTIN_IDLE	= 8,	/* builtin found an idle CPU */
	LOEHLE_REASON_BUILTIN_BUSY	= 9,	/* builtin found none */
	LOEHLE_REASON_CLAIM_GAVE_UP	= 10,	/* every claim failed; prev, queued */
	LOEHLE_NR_REASONS,
};

/* Result of claiming the chosen CPU, as carried in events. */
enum loehle_claim {
	LOEHLE_CLAIM_NONE	= 0,	/* nothing to claim (busy pick, builtin) */
	LOEHLE_CLAIM_OK		= 1,	/* first claim succeeded */
	LOEHLE_CLAIM_RETRIED	= 2,	/* succeeded after at least one failure */
	LOEHLE_CLAIM_FAILED	= 3,	/* every attempt failed */
};

/*
 * Statistics counters. Each CPU keeps one array per generation slot; the
 * loader sums CPUs. Ranges are contiguous so that a loop can walk them.
 */
enum loehle_stat {
	LOEHLE_STAT_SELECT		= 0,	/* + enum loehle_path */
	LOEHLE_STAT_PICK		= LOEHLE_STAT_SELECT + LOEHLE_NR_PATHS,	/* + reason */
	LOEHLE_STAT_TIE_HIST		= LOEHLE_STAT_PICK + LOEHLE_NR_REASONS,	/* + bucket */
	LOEHLE_STAT_CANDIDATES		= LOEHLE_STAT_TIE_HIST + LOEHLE_TIE_BUCKETS,
	LOEHLE_STAT_UNPUBLISHED_SEEN,	/* idle candidates without a published state */
	LOEHLE_STAT_EXAMINED,		/* CPUs examined by the scans */
	LOEHLE_STAT_SMT_PRUNED,		/* siblings skipped by seed 002's pruning */
	LOEHLE_STAT_CLAIM_ATTEMPTS,
	LOEHLE_STAT_CLAIM_FAILURES,	/* seed 000's "stale pick" analogue */
	LOEHLE_STAT_CLAIM_RETRIES,
	LOEHLE_STAT_DIRECT_DISPATCH,
	LOEHLE_STAT_SCHED_IDLE_PREEMPT,
	LOEHLE_STAT_PACKING,		/* SCHED_IDLE wakee onto a sched-idle CPU, idle CPU allowed */
	LOEHLE_STAT_BUSY_SIBLING_PICK,	/* picked CPU's SMT core was not idle */
	LOEHLE_STAT_ENQUEUE,
	LOEHLE_STAT_DISPATCH_LOCAL_LLC,
	LOEHLE_STAT_DISPATCH_REMOTE_LLC,
	LOEHLE_STAT_KICK,
	LOEHLE_STAT_SMT_MOVE,		/* slice ran out beside a busy sibling: moved to an idle core */
	LOEHLE_STAT_SI_CLAIM_LOST,	/* sched-idle claim dropped at the re-check */
	LOEHLE_STAT_SCAN_SKIPPED,	/* wakeup scan skipped: nothing idle in the LLC */
	LOEHLE_STAT_CPU_RELEASE,	/* a higher sched class took a CPU */
	LOEHLE_STAT_DISPATCH_IDLE,	/* idle work dispatched: nothing else in reach */
	LOEHLE_STAT_IDLE_TURN,		/* idle work dispatched by its allowance */
	LOEHLE_STAT_SI_REFUSED,		/* sched-idle CPU the wakee may not preempt (hierarchy) */
	LOEHLE_STAT_SI_NO_PREEMPT,	/* put on a sched-idle CPU without preempting it */
	LOEHLE_STAT_IDLE_WAKE_DEFERRED,	/* displaced idle work queued, no idle CPU woken yet */
	LOEHLE_STAT_IDLE_WAKE_LATE,	/* an idle CPU woken for displaced idle work that still waited */
	LOEHLE_STAT_IDLE_WAKE_RELEASED,	/* the same, at once: a higher class took a CPU of its LLC */
	LOEHLE_STAT_KICK_FROM_OFFLINE,	/* no idle CPU claimed or kicked: the caller had left cpu_online_mask */
	LOEHLE_STAT_IDLE_LOCAL_KICK,	/* a CPU went idle with a task in its local DSQ: kicked itself */
	LOEHLE_STAT_KTHREAD_PREEMPT,	/* a per-CPU kthread preempted idle work on its CPU */
	LOEHLE_STAT_IDLE_OVERDUE,	/* an idle task waiting LOEHLE_IDLE_OVERDUE_NS run ahead of all */
	LOEHLE_STAT_OFFLINE_REHOMED,	/* a dying CPU's queued tasks, handed to the kernel */
	LOEHLE_STAT_REMOTE_OVERDUE,	/* another LLC's task, unserved two slices, run here first */
	LOEHLE_STAT_EVENTS,
	LOEHLE_STAT_EVENT_DROPS,
	LOEHLE_NR_STATS,
};

/* Per CPU, per generation slot. `generation` says which one it holds. */
struct loehle_stats {
	__u64 generation;
	__u64 counters[LOEHLE_NR_STATS];
};

/*
 * Configuration written by the loader at any time. The BPF side reads
 * `configs[active_config & 1]`; the loader fills the inactive copy and then
 * flips active_config, so a pick never sees half of one generation and half
 * of the next.
 */
struct loehle_config {
	__u32 generation;
	__u32 policy;		/* enum loehle_policy */
	__u32 sched_idle;	/* enum loehle_sched_idle_mode */
	__u32 smt;		/* enum loehle_smt_mode */
	__u64 slice_ns;
	__u32 claim_retries;
	__u32 sample_every;	/* 0: no events; 1: every pick */
	__u32 sched_idle_scope;	/* enum loehle_si_scope */
	__u32 pad;
};

/* Topology of one CPU, filled by the loader from sysfs. */
struct loehle_cpu_topo {
	__u32 core;		/* lowest CPU id among its SMT siblings */
	__u32 llc;		/* dense LLC index */
	__u32 node;		/* dense NUMA node index */
	__u32 online;		/* when the loader read it: core, llc, node known */
	__u32 next_sibling;	/* next CPU of its core, in a ring; itself if none */
	__u32 pad;
};

/*
 * CPU lists the scans walk, filled by the loader: every possible CPU once,
 * grouped by LLC (and separately by node), ascending ids within a group.
 * Group g's CPUs are list[start[g]] .. list[start[g] + len[g] - 1];
 * llc_pos[cpu] is the CPU's index within its LLC's run.
 */
struct loehle_cpu_lists {
	__u32 llc_cpus[LOEHLE_MAX_CPUS];
	__u32 llc_start[LOEHLE_MAX_LLCS];
	__u32 llc_len[LOEHLE_MAX_LLCS];
	__u32 llc_pos[LOEHLE_MAX_CPUS];
	__u32 node_cpus[LOEHLE_MAX_CPUS];
	__u32 node_start[LOEHLE_MAX_NODES];
	__u32 node_len[LOEHLE_MAX_NODES];
};

/*
 * CPU hotplug as the scheduler followed it (ops.cpu_online/cpu_offline),
 * in .bss for the loader: online[] has bit cpu % 64 of word cpu / 64 set
 * for every CPU the scans may offer; events counts the changes followed
 * (a CPU unknown at load coming online reloads instead, uncounted).
 */
#define LOEHLE_ONLINE_WORDS	(LOEHLE_MAX_CPUS / 64)
struct loehle_hotplug {
	__u64 events;
	__u64 online[LOEHLE_ONLINE_WORDS];
};

/* Which kfunc variants the running kernel gave (scx/compat.bpf.h). */
#define LOEHLE_COMPAT_INSERT_V2		(1u << 0)	/* scx_bpf_dsq_insert___v2 */
#define LOEHLE_COMPAT_INSERT_VTIME_ARGS	(1u << 1)	/* __scx_bpf_dsq_insert_vtime */
#define LOEHLE_COMPAT_MOVE_TO_LOCAL_V2	(1u << 2)	/* scx_bpf_dsq_move_to_local___v2 */
#define LOEHLE_COMPAT_REENQUEUE_V2	(1u << 3)	/* scx_bpf_reenqueue_local___v2 */
#define LOEHLE_COMPAT_SET_VTIME		(1u << 4)	/* scx_bpf_task_set_dsq_vtime */

/* Longest SMT sibling ring the BPF side walks. */
#define LOEHLE_MAX_SMT		8

/* Size of the pick-event ring buffer (a power of two, page-aligned). */
#define LOEHLE_EVENTS_RING_BYTES	(1u << 20)

/* Pick event in the ring buffer. */
struct loehle_pick_event {
	__u64 ts_ns;
	__u64 latency_key;	/* LOEHLE_U64_MAX when unpublished or not idle */
	__u32 pid;
	__s32 cpu;
	__s32 prev_cpu;
	__u32 generation;
	__u32 candidates;	/* CPUs examined */
	__u32 ties;		/* size of the winning tie group */
	__u8 path;		/* enum loehle_path */
	__u8 reason;		/* enum loehle_reason */
	__u8 claim;		/* enum loehle_claim */
	__u8 wakee_sched_idle;
	__u32 pad;
};

/* Why and how the scheduler exited, mirrored from the kernel's exit info. */
#define LOEHLE_EXIT_MSG_LEN 256
/*
 * Room for the kernel's debug dump on an error exit (each CPU's state, the
 * stalled task and the DSQ it sits on): sched_ext_ops.exit_dump_len, and
 * the size of the BPF global the exit callback copies it into.
 */
#define LOEHLE_EXIT_DUMP_LEN 32768
struct loehle_exit_info {
	__s64 kind;
	__s64 exit_code;
	char reason[128];
	char msg[LOEHLE_EXIT_MSG_LEN];
};

#endif /* LOEHLE_INTF_H */
