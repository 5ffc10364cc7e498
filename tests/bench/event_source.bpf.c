/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic source of pick events for tests/bench/event_bench.cc: a
 * syscall program that writes `count` events into a ring buffer of the
 * scheduler's size, with the scheduler's wakeup rule
 * (loehle_events_wakeup_due()), counting what it could not reserve as
 * drops, as emit_event() in scx/loehle.bpf.c does. Run with
 * BPF_PROG_TEST_RUN; needs no sched_ext.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "loehle/intf.h"
#include "loehle/sample.h"

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LOEHLE_EVENTS_RING_BYTES);
} events SEC(".maps");

__u64 produced;
__u64 drops;

struct emit_args {
	__u32 count;
};

SEC("syscall")
int emit(struct emit_args *args)
{
	struct loehle_pick_event *ev;
	__u32 i, count = args->count;

	bpf_for(i, 0, count) {
		ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
		if (!ev) {
			__sync_fetch_and_add(&drops, 1);
			continue;
		}
		__builtin_memset(ev, 0, sizeof(*ev));
		ev->ts_ns = bpf_ktime_get_ns();
		ev->cpu = bpf_get_smp_processor_id();
		ev->pid = i;
		bpf_ringbuf_submit(ev, loehle_events_wakeup_due(
			bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA)) ?
			BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
		__sync_fetch_and_add(&produced, 1);
	}
	return 0;
}
