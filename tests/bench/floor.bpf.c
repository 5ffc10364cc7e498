/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loehle_floor: the least a sched_ext scheduler can do, as the floor that
 * scx_loehle's hot-path cost is measured against (scripts/bench, the
 * `floor` configuration; Documentation/benchmarks.md). A test fixture, not
 * a scheduler for anyone's machine.
 *
 * Placement is the kernel's default idle selection; a task that found an
 * idle CPU goes straight to that CPU's local DSQ, every other task to one
 * shared DSQ that every CPU takes from (ops.dispatch), as scx_simple does.
 * Not SCX_DSQ_GLOBAL: since 6.13 that is one queue per NUMA node, consumed
 * only by its own node's CPUs, which would leave the floor idling CPUs on
 * one node while the other queues work. No statistics, no maps besides the
 * exit record: whatever scx_loehle costs beyond this, its own callbacks
 * cost.
 *
 * The slice is scx_loehle's default (5 ms), so that the two differ only in
 * what their callbacks do.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "loehle/intf.h"
#include "compat.bpf.h"	/* the 6.18/7.x kfunc wrappers scx_loehle uses */

char _license[] SEC("license") = "GPL";

#define FLOOR_SLICE_NS	5000000ULL
#define FLOOR_DSQ	0
#define FLOOR_MSG_LEN	256

/* Read by the loader once the kernel has disabled the scheduler. */
long long exit_kind;
char exit_reason[128];
char exit_msg[FLOOR_MSG_LEN];

SEC("struct_ops/floor_select_cpu")
s32 BPF_PROG(floor_select_cpu, struct task_struct *p, s32 prev_cpu,
	     u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);

	if (is_idle)
		loehle_dsq_insert(p, SCX_DSQ_LOCAL, FLOOR_SLICE_NS, 0);
	return cpu;
}

SEC("struct_ops/floor_enqueue")
void BPF_PROG(floor_enqueue, struct task_struct *p, u64 enq_flags)
{
	loehle_dsq_insert(p, FLOOR_DSQ, FLOOR_SLICE_NS, enq_flags);
}

SEC("struct_ops/floor_dispatch")
void BPF_PROG(floor_dispatch, s32 cpu, struct task_struct *prev)
{
	loehle_dsq_move_to_local(FLOOR_DSQ);
}

SEC("struct_ops.s/floor_init")
s32 BPF_PROG(floor_init)
{
	return scx_bpf_create_dsq(FLOOR_DSQ, -1);
}

SEC("struct_ops/floor_exit")
void BPF_PROG(floor_exit, struct scx_exit_info *ei)
{
	bpf_probe_read_kernel_str(exit_reason, sizeof(exit_reason), ei->reason);
	bpf_probe_read_kernel_str(exit_msg, sizeof(exit_msg), ei->msg);
	/* kind last: the loader polls it to learn that the rest is there. */
	exit_kind = ei->kind;
}

SEC(".struct_ops.link")
struct sched_ext_ops floor_ops = {
	.select_cpu	= (void *)floor_select_cpu,
	.enqueue	= (void *)floor_enqueue,
	.dispatch	= (void *)floor_dispatch,
	.init		= (void *)floor_init,
	.exit		= (void *)floor_exit,
	.name		= "loehle_floor",
};
