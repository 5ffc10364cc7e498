/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which picks become ring-buffer events: every sample_every-th pick of a
 * CPU, counted afresh in each configuration generation, so that a live
 * change from a sparse rate to a dense one takes effect at the next pick
 * (a countdown carried over from --sample-every=1000000 would otherwise
 * silence a switch to 1 for a million picks).
 *
 * Pure, included by scx/loehle.bpf.c (one sampler per CPU) and by the host
 * tests (tests/unit/sample_test.cc).
 */
#ifndef LOEHLE_SAMPLE_H
#define LOEHLE_SAMPLE_H

#include "loehle/intf.h"

struct loehle_sampler {
	__u32 countdown;	/* picks left before the next event, this generation */
	__u32 generation;	/* the generation the countdown belongs to */
};

/* Count one pick; non-zero when it is to be sampled. 0 = no events. */
static inline int loehle_sample_due(struct loehle_sampler *s,
				    __u32 generation, __u32 sample_every)
{
	if (!sample_every)
		return 0;
	if (s->generation != generation || s->countdown > sample_every) {
		s->generation = generation;
		s->countdown = sample_every;
	}
	if (s->countdown > 1) {
		s->countdown--;
		return 0;
	}
	s->countdown = sample_every;
	return 1;
}

/*
 * Should this event wake the reader? Events are submitted without a wakeup
 * (one per event would cost more than the event), and the daemon drains the
 * ring on a timer (250 ms): at more than a ring's worth of events per tick
 * (LOEHLE_EVENTS_RING_BYTES / 56 bytes, about 18,700) it would drop. So
 * once the ring is half full, events wake the reader, which drains it at
 * once: the rate the ring sustains is then the reader's, not the timer's.
 */
static inline int loehle_events_wakeup_due(__u64 unread_bytes)
{
	return unread_bytes >= LOEHLE_EVENTS_RING_BYTES / 2;
}

#endif /* LOEHLE_SAMPLE_H */
