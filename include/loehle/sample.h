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

#endif /* LOEHLE_SAMPLE_H */
