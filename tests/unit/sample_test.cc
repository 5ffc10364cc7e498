// Host tests for include/loehle/sample.h: which picks become events.

#include "loehle/sample.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

int DueIn(loehle_sampler* s, uint32_t generation, uint32_t every, int picks) {
  int due = 0;
  for (int i = 0; i < picks; ++i) due += loehle_sample_due(s, generation, every);
  return due;
}

TEST(Sample, EveryNthPick) {
  loehle_sampler s{};
  EXPECT_EQ(DueIn(&s, 1, 4, 16), 4);
  EXPECT_EQ(DueIn(&s, 1, 1, 5), 5);
  EXPECT_EQ(DueIn(&s, 1, 0, 100), 0);
}

// A live switch from a sparse rate to a dense one takes effect at once.
TEST(Sample, NewGenerationRestartsTheCountdown) {
  loehle_sampler s{};
  EXPECT_EQ(DueIn(&s, 1, 1'000'000, 10), 0);
  EXPECT_EQ(loehle_sample_due(&s, 2, 1), 1);
  EXPECT_EQ(loehle_sample_due(&s, 2, 1), 1);
  // Generation 3 at every 3rd pick: picks 3 and 6.
  EXPECT_EQ(loehle_sample_due(&s, 3, 3), 0);
  EXPECT_EQ(loehle_sample_due(&s, 3, 3), 0);
  EXPECT_EQ(loehle_sample_due(&s, 3, 3), 1);
}

// Even without a generation change, a countdown above the rate is cut.
TEST(Sample, CountdownNeverExceedsTheRate) {
  loehle_sampler s{};
  EXPECT_EQ(DueIn(&s, 7, 1000, 5), 0);
  EXPECT_EQ(loehle_sample_due(&s, 7, 2), 0);
  EXPECT_EQ(loehle_sample_due(&s, 7, 2), 1);
}

// The reader is woken once half the ring is unread, not before.
TEST(Sample, WakeupOnceTheRingIsHalfFull) {
  EXPECT_FALSE(loehle_events_wakeup_due(0));
  EXPECT_FALSE(loehle_events_wakeup_due(LOEHLE_EVENTS_RING_BYTES / 2 - 1));
  EXPECT_TRUE(loehle_events_wakeup_due(LOEHLE_EVENTS_RING_BYTES / 2));
  EXPECT_TRUE(loehle_events_wakeup_due(LOEHLE_EVENTS_RING_BYTES));
}

}  // namespace
