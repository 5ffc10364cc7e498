/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kfuncs that changed between the kernels scx_loehle supports (6.18 and
 * 7.x), behind one wrapper each. Private to scx/loehle.bpf.c.
 *
 * 6.19 replaced four kfuncs: scx_bpf_dsq_insert() gained a bool result
 * (___v2), scx_bpf_dsq_insert_vtime() takes its scalars in a struct
 * (__scx_bpf_dsq_insert_vtime), scx_bpf_dsq_move_to_local() takes enqueue
 * flags (___v2), and scx_bpf_reenqueue_local() may be called from anywhere
 * (___v2); the old names stay for a few releases. It also added
 * scx_bpf_task_set_dsq_vtime(), the sanctioned way to write a task's vtime
 * (6.18 only has the direct write). Each wrapper calls the new
 * kfunc when the running kernel has it and the old one otherwise, so one
 * object loads on 6.18 (old names only), on 7.x (both) and on a kernel that
 * has dropped the old names. bpf_ksym_exists() and bpf_core_type_exists()
 * are resolved by libbpf at load time, and the verifier drops the dead
 * branch, so a kfunc the kernel lacks is never called.
 *
 * Naming: libbpf matches a kfunc by the name before its last "___" (the
 * "flavor" suffix), so the new kfunc scx_bpf_dsq_insert___v2 is declared
 * here as scx_bpf_dsq_insert___v2___loehle; vmlinux.h's own declaration of
 * ..___v2 would match the old scx_bpf_dsq_insert.
 *
 * loehle_compat_flags() tells the loader which variants the kernel gave
 * (LOEHLE_COMPAT_* in loehle/intf.h), so a test can check that 7.x really
 * runs the new ones.
 */
#ifndef LOEHLE_COMPAT_BPF_H
#define LOEHLE_COMPAT_BPF_H

bool scx_bpf_dsq_insert___v2___loehle(struct task_struct *p, u64 dsq_id,
				      u64 slice, u64 enq_flags) __ksym __weak;
bool scx_bpf_dsq_move_to_local___v2___loehle(u64 dsq_id, u64 enq_flags) __ksym __weak;
void scx_bpf_reenqueue_local___v2___loehle(void) __ksym __weak;

static __always_inline void loehle_dsq_insert(struct task_struct *p, u64 dsq_id,
					      u64 slice, u64 enq_flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert___v2___loehle))
		scx_bpf_dsq_insert___v2___loehle(p, dsq_id, slice, enq_flags);
	else
		scx_bpf_dsq_insert(p, dsq_id, slice, enq_flags);
}

static __always_inline void loehle_dsq_insert_vtime(struct task_struct *p,
						    u64 dsq_id, u64 slice,
						    u64 vtime, u64 enq_flags)
{
	if (bpf_core_type_exists(struct scx_bpf_dsq_insert_vtime_args) &&
	    bpf_ksym_exists(__scx_bpf_dsq_insert_vtime)) {
		struct scx_bpf_dsq_insert_vtime_args args = {
			.dsq_id = dsq_id,
			.slice = slice,
			.vtime = vtime,
			.enq_flags = enq_flags,
		};

		__scx_bpf_dsq_insert_vtime(p, &args);
	} else {
		scx_bpf_dsq_insert_vtime(p, dsq_id, slice, vtime, enq_flags);
	}
}

static __always_inline bool loehle_dsq_move_to_local(u64 dsq_id)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move_to_local___v2___loehle))
		return scx_bpf_dsq_move_to_local___v2___loehle(dsq_id, 0);
	return scx_bpf_dsq_move_to_local(dsq_id);
}

/* Only ever called from ops.cpu_release, where both variants may run. */
static __always_inline void loehle_reenqueue_local(void)
{
	if (bpf_ksym_exists(scx_bpf_reenqueue_local___v2___loehle))
		scx_bpf_reenqueue_local___v2___loehle();
	else
		scx_bpf_reenqueue_local();
}

static __always_inline void loehle_set_dsq_vtime(struct task_struct *p, u64 vtime)
{
	if (bpf_ksym_exists(scx_bpf_task_set_dsq_vtime))
		scx_bpf_task_set_dsq_vtime(p, vtime);
	else
		p->scx.dsq_vtime = vtime;
}

static __always_inline void loehle_set_slice(struct task_struct *p, u64 slice)
{
	if (bpf_ksym_exists(scx_bpf_task_set_slice))
		scx_bpf_task_set_slice(p, slice);
	else
		p->scx.slice = slice;
}

static __always_inline u32 loehle_compat_flags(void)
{
	u32 flags = 0;

	if (bpf_ksym_exists(scx_bpf_dsq_insert___v2___loehle))
		flags |= LOEHLE_COMPAT_INSERT_V2;
	if (bpf_core_type_exists(struct scx_bpf_dsq_insert_vtime_args) &&
	    bpf_ksym_exists(__scx_bpf_dsq_insert_vtime))
		flags |= LOEHLE_COMPAT_INSERT_VTIME_ARGS;
	if (bpf_ksym_exists(scx_bpf_dsq_move_to_local___v2___loehle))
		flags |= LOEHLE_COMPAT_MOVE_TO_LOCAL_V2;
	if (bpf_ksym_exists(scx_bpf_reenqueue_local___v2___loehle))
		flags |= LOEHLE_COMPAT_REENQUEUE_V2;
	if (bpf_ksym_exists(scx_bpf_task_set_dsq_vtime))
		flags |= LOEHLE_COMPAT_SET_VTIME;
	return flags;
}

#endif /* LOEHLE_COMPAT_BPF_H */
