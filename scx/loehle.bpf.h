/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private helpers of scx/loehle.bpf.c: includes, the struct_ops program
 * macro and the few sched_ext constants vmlinux.h cannot carry.
 *
 * vmlinux.h comes from a pinned Debian 7.3 kernel (scripts/gen-vmlinux-h);
 * with bpftool 7.5 it declares every kfunc as `extern ... __weak __ksym`,
 * so nothing is declared here by hand. Only kfuncs that exist on both
 * supported series (6.18 and 7.x) may be called unguarded; the others go
 * through compat.bpf.h.
 */
#ifndef LOEHLE_BPF_H
#define LOEHLE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "loehle/intf.h"
#include "loehle/cgroup_idle.h"
#include "loehle/policy.h"
#include "loehle/queue.h"
#include "loehle/sample.h"
#include "loehle/sched_idle.h"
#include "loehle/select.h"
#include "loehle/vtime.h"

#include "compat.bpf.h"

#define LOEHLE_STRUCT_OPS(name, args...) \
	SEC("struct_ops/" #name) BPF_PROG(name, ##args)
#define LOEHLE_STRUCT_OPS_SLEEPABLE(name, args...) \
	SEC("struct_ops.s/" #name) BPF_PROG(name, ##args)

/* errno values init may return (vmlinux.h carries no macros). */
#ifndef ENOENT
#define ENOENT	2
#endif
#ifndef ENOMEM
#define ENOMEM	12
#endif

/* The iterator of libbpf's bpf_for_each(), for scx_bpf_dsq_move(). */
#define LOEHLE_DSQ_ITER		(&___it)

/* task_struct.flags (include/linux/sched.h). */
#define PF_EXITING	0x00000004
#define PF_KTHREAD	0x00200000

/* power:cpu_idle reports this state when a CPU leaves idle. */
#define LOEHLE_PWR_EVENT_EXIT	((u32)-1)

#endif /* LOEHLE_BPF_H */
