// Host tests for include/loehle/vtime.h, the queue-ordering rules shared
// with scx/loehle.bpf.c.

#include "loehle/vtime.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

constexpr uint64_t kSlice = 5'000'000;

// Queueing: the vtime window. Regression for the 34 s SCHED_IDLE stall: a
// task whose vtime was measured against another LLC's clock (seconds
// ahead) must queue at most LOEHLE_MAX_LEAD_SLICES slices ahead here.
TEST(QueueVtimeBound, WindowAroundTheClock) {
  constexpr uint64_t kSlice = 5'000'000;
  constexpr uint64_t kClock = 1'000 * kSlice;
  constexpr uint64_t kLead = LOEHLE_MAX_LEAD_SLICES * kSlice;
  // Inside the window: unchanged, edges included.
  EXPECT_EQ(loehle_vtime_bound(kClock, kClock, kSlice), kClock);
  EXPECT_EQ(loehle_vtime_bound(kClock - kSlice, kClock, kSlice), kClock - kSlice);
  EXPECT_EQ(loehle_vtime_bound(kClock + kLead, kClock, kSlice), kClock + kLead);
  // A long sleeper keeps one slice of credit.
  EXPECT_EQ(loehle_vtime_bound(0, kClock, kSlice), kClock - kSlice);
  EXPECT_EQ(loehle_vtime_bound(kClock - kSlice - 1, kClock, kSlice), kClock - kSlice);
  // Weight 1 pays 100 slices per slice run; another LLC's clock may be far
  // ahead: both end at the lead bound.
  EXPECT_EQ(loehle_vtime_bound(kClock + 100 * kSlice, kClock, kSlice), kClock + kLead);
  EXPECT_EQ(loehle_vtime_bound(kClock + 7'000'000'000ull, kClock, kSlice), kClock + kLead);
  // A young clock (below one slice) never underflows.
  EXPECT_EQ(loehle_vtime_bound(0, kSlice / 2, kSlice), 0u);
  EXPECT_EQ(loehle_vtime_bound(9 * kSlice, 0, kSlice), kLead);
}

// The lead stops growing at the default slice: at --slice-us=1000000 a
// lead of 4 slices let a weight-1 task wait about 4 s per CPU-bound task
// of its CPU (19.5 s in the soak, past the RCU stall timeout). The credit
// below the clock still follows the slice.
TEST(QueueVtimeBound, LeadCappedAtLongSlices) {
  constexpr uint64_t kLong = 1'000'000'000;
  constexpr uint64_t kClock = 1'000 * kLong;
  constexpr uint64_t kCap = LOEHLE_MAX_LEAD_SLICES * LOEHLE_LEAD_SLICE_CAP_NS;
  EXPECT_EQ(kCap, 20'000'000u);
  EXPECT_EQ(loehle_vtime_lead(kLong), kCap);
  EXPECT_EQ(loehle_vtime_lead(LOEHLE_LEAD_SLICE_CAP_NS), kCap);
  EXPECT_EQ(loehle_vtime_lead(1'000'000), 4'000'000u);  // shorter slices: 4 of them
  EXPECT_EQ(loehle_vtime_bound(kClock + 100 * kLong, kClock, kLong), kClock + kCap);
  EXPECT_EQ(loehle_vtime_bound(kClock + kCap, kClock, kLong), kClock + kCap);
  EXPECT_EQ(loehle_vtime_bound(0, kClock, kLong), kClock - kLong);
}

// Charge the time run, measured by timestamps: a task preempted after
// 0.3 ms pays 0.3 ms, not the configured slice (the kernel zeroes a
// preempted task's slice, so "slice - remaining" billed it 5 ms, and 500 ms
// at weight 1).
TEST(VtimeCharge, TimeRunScaledByWeight) {
  EXPECT_EQ(loehle_ran_ns(1'300'000, 1'000'000), 300'000u);
  EXPECT_EQ(loehle_vtime_charge(300'000, LOEHLE_WEIGHT_NICE0), 300'000u);
  EXPECT_EQ(loehle_vtime_charge(300'000, 1), 30'000'000u);
  EXPECT_EQ(loehle_vtime_charge(300'000, 10000), 3'000u);
  // Weight 0 (never given by the kernel) counts as 1, not a division by 0.
  EXPECT_EQ(loehle_vtime_charge(300'000, 0), 30'000'000u);
  // No start stamp, or a clock that did not move: nothing is charged.
  EXPECT_EQ(loehle_ran_ns(5'000, 0), 0u);
  EXPECT_EQ(loehle_ran_ns(5'000, 5'000), 0u);
  EXPECT_EQ(loehle_ran_ns(4'000, 5'000), 0u);
  // Independent of any slice setting: the same 2 ms run is charged 2 ms
  // whether the slice is 5 ms or 50 us.
  EXPECT_EQ(loehle_vtime_charge(loehle_ran_ns(3'000'000, 1'000'000), 100),
            2'000'000u);
}

// The clock only moves forward; a bounded vtime moves it by at most the lead.
TEST(VtimeClock, AdvancesForwardOnly) {
  constexpr uint64_t kClock = 1'000 * kSlice;
  EXPECT_EQ(loehle_clock_advance(kClock, kClock + 7), kClock + 7);
  EXPECT_EQ(loehle_clock_advance(kClock, kClock - 7), kClock);
  EXPECT_EQ(loehle_clock_advance(kClock, kClock), kClock);
  // A vtime brought from a far-ahead clock, bounded first, advances this
  // clock by the lead at most.
  const uint64_t far = kClock + 7'000'000'000ull;
  EXPECT_EQ(loehle_clock_advance(kClock, loehle_vtime_bound(far, kClock, kSlice)),
            kClock + LOEHLE_MAX_LEAD_SLICES * kSlice);
}

}  // namespace
