// Host tests for include/loehle/queue.h: idle work runs only when nothing
// else in reach wants the CPU, apart from a bounded allowance.

#include "loehle/queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t kSlice = 5'000'000;
constexpr uint64_t kMs = 1'000'000;

std::vector<int> Plan(bool idle_due, bool prev_may_keep, bool prev_idle) {
  const uint32_t plan = loehle_plan_dispatch(idle_due, prev_may_keep, prev_idle);
  std::vector<int> steps;
  for (uint32_t k = 0; k < LOEHLE_DISPATCH_STEPS; ++k) {
    const uint32_t step = loehle_plan_step(plan, k);
    if (step == LOEHLE_STEP_END) break;
    steps.push_back(static_cast<int>(step));
  }
  EXPECT_EQ(loehle_plan_step(plan, static_cast<uint32_t>(steps.size())),
            static_cast<uint32_t>(LOEHLE_STEP_END));
  return steps;
}

// Normal work anywhere comes before idle work; a normal prev keeps its CPU
// before any idle task gets it; an idle prev keeps it only when no other
// task, normal or idle, is queued.
TEST(QueueGoesLocal, PerCpuKthreadsOnly) {
  EXPECT_TRUE(loehle_goes_local(1, 1));
  EXPECT_FALSE(loehle_goes_local(1, 2));  // an unbound kworker
  EXPECT_FALSE(loehle_goes_local(0, 1));  // a user task pinned by taskset
}

// An idle task is overdue once it has waited LOEHLE_IDLE_OVERDUE_NS,
// runnable; a stamp of 0 means it is not waiting, and a stamp ahead of the
// reader's clock (another CPU's rq clock) is a wait that just began.
TEST(QueueIdleOverdue, AfterTheMaximumWaitOnly) {
  const uint64_t t = 100ULL * 1000 * 1000 * 1000;
  EXPECT_FALSE(loehle_idle_overdue(t, 0));
  EXPECT_FALSE(loehle_idle_overdue(t, t));
  EXPECT_FALSE(loehle_idle_overdue(t + LOEHLE_IDLE_OVERDUE_NS - 1, t));
  EXPECT_TRUE(loehle_idle_overdue(t + LOEHLE_IDLE_OVERDUE_NS, t));
  EXPECT_TRUE(loehle_idle_overdue(t + 10 * LOEHLE_IDLE_OVERDUE_NS, t));
  EXPECT_FALSE(loehle_idle_overdue(t, t + 1000));  // another CPU's clock ahead
  EXPECT_EQ(LOEHLE_IDLE_OVERDUE_NS, LOEHLE_IDLE_MAX_WAIT_NS);
}

// An overdue turn is short at any slice, and never longer than the slice.
TEST(QueueIdleOverdue, TurnsAreShortWhateverTheSlice) {
  EXPECT_EQ(loehle_idle_overdue_slice(1000ULL * 1000 * 1000), LOEHLE_IDLE_OVERDUE_SLICE_NS);
  EXPECT_EQ(loehle_idle_overdue_slice(5ULL * 1000 * 1000), LOEHLE_IDLE_OVERDUE_SLICE_NS);
  EXPECT_EQ(loehle_idle_overdue_slice(50ULL * 1000), 50ULL * 1000);
}

// The documented bound stays under the watchdog (30 s) at the longest
// slice --slice-us accepts and 1,000 overdue idle tasks on one CPU: the
// wait, one slice of the CPU's running task, one short turn per task ahead.
TEST(QueueIdleOverdue, TheBoundHoldsAtTheLongestSlice) {
  const uint64_t max_slice = 1000ULL * 1000 * 1000;  // kMaxSliceUs
  const uint64_t bound = LOEHLE_IDLE_OVERDUE_NS + max_slice +
                         1000 * loehle_idle_overdue_slice(max_slice);
  EXPECT_LT(bound, 30ULL * 1000 * 1000 * 1000);
}

// A wakee placed on a sched-idle CPU goes into its local DSQ only when it
// preempts the idle work there; a packed SCHED_IDLE wakee goes to its
// queue, behind the LLC's normal work (stall path 6 of issue 29).
TEST(QueueSchedIdlePick, LocalOnlyWhenItPreempts) {
  EXPECT_TRUE(loehle_sched_idle_pick_goes_local(1));
  EXPECT_FALSE(loehle_sched_idle_pick_goes_local(0));
}

// A per-CPU kthread preempts idle work on its CPU, never normal work.
TEST(QueueKthreadPreempts, IdleWorkOnly) {
  EXPECT_TRUE(loehle_kthread_preempts(1));
  EXPECT_FALSE(loehle_kthread_preempts(0));
}

// Seed 002's move never takes a task the kernel would not hand to
// ops.enqueue, nor one that may run on one CPU only.
TEST(QueueSmtMovable, NotExitingMigrationDisabledOrPinned) {
  EXPECT_TRUE(loehle_smt_movable(0, 0, 8));
  EXPECT_TRUE(loehle_smt_movable(0, 0, 2));
  EXPECT_FALSE(loehle_smt_movable(1, 0, 8));  // PF_EXITING
  EXPECT_FALSE(loehle_smt_movable(0, 1, 8));  // migrate_disable()
  EXPECT_FALSE(loehle_smt_movable(0, 0, 1));  // one allowed CPU
  EXPECT_FALSE(loehle_smt_movable(1, 1, 1));
}

// A CPU going idle with anything in its local DSQ reschedules itself.
TEST(QueueIdleKicksItself, WheneverItsLocalDsqIsNotEmpty) {
  EXPECT_FALSE(loehle_idle_kicks_itself(0));
  EXPECT_TRUE(loehle_idle_kicks_itself(1));
  EXPECT_TRUE(loehle_idle_kicks_itself(7));
  EXPECT_FALSE(loehle_idle_kicks_itself(-2));  // an error from the kfunc
}

// The dying CPU's tasks, and those only it may run, leave our queues for
// the global DSQ, which that CPU consumes before it goes.
TEST(QueueOfflineTakes, TheDyingCpusTasksAndThoseOnlyItMayRun) {
  EXPECT_TRUE(loehle_offline_takes(1, 4, 1));
  EXPECT_TRUE(loehle_offline_takes(1, 1, 1));
  EXPECT_TRUE(loehle_offline_takes(0, 1, 1));   // pinned there, queued elsewhere
  EXPECT_FALSE(loehle_offline_takes(0, 1, 0));  // pinned elsewhere
  EXPECT_FALSE(loehle_offline_takes(0, 4, 1));  // another CPU's, allowed elsewhere
}

// Another LLC's queue is looked at once its own CPUs have not served it for
// two slices (at least 50 ms), and a task there is taken once it waited as
// long: one bound for both stamps. A saturated LLC that keeps serving its
// long queue keeps its tasks.
TEST(QueueRemoteOverdue, TwoSlicesAtLeastFiftyMsForTheQueueAndTheTask) {
  constexpr uint64_t kMs = 1'000'000;
  constexpr uint64_t kNow = 1'000'000 * kMs;
  struct Case {
    uint64_t ago_ms, slice_ms;
    bool past;
  };
  for (const Case& c : {Case{10, 5, false}, Case{49, 5, false}, Case{50, 5, true},
                        Case{1999, 1000, false}, Case{2000, 1000, true}}) {
    const uint64_t stamp = kNow - c.ago_ms * kMs, slice = c.slice_ms * kMs;
    EXPECT_EQ(loehle_remote_overdue(kNow, stamp, slice), c.past) << c.ago_ms << " ms ago";
    EXPECT_EQ(loehle_remote_unserved(kNow, stamp, slice), c.past) << c.ago_ms << " ms ago";
  }
  // A stamp of another CPU's clock ahead of ours: just now, for both.
  EXPECT_FALSE(loehle_remote_overdue(kNow, kNow + kMs, 5 * kMs));
  EXPECT_FALSE(loehle_remote_unserved(kNow, kNow + kMs, 5 * kMs));
  // No stamp: a wait not known is not overdue; a queue never served is.
  EXPECT_FALSE(loehle_remote_overdue(kNow, 0, 5 * kMs));
  EXPECT_TRUE(loehle_remote_unserved(kNow, 0, 5 * kMs));
}

TEST(QueueDispatchPlan, NormalWorkBeforeIdleWork) {
  using V = std::vector<int>;
  EXPECT_EQ(Plan(false, false, false),
            (V{LOEHLE_STEP_NORMAL, LOEHLE_STEP_IDLE_LOCAL, LOEHLE_STEP_IDLE_REMOTE}));
  EXPECT_EQ(Plan(false, true, false), (V{LOEHLE_STEP_NORMAL, LOEHLE_STEP_KEEP_PREV}));
  EXPECT_EQ(Plan(false, true, true),
            (V{LOEHLE_STEP_NORMAL, LOEHLE_STEP_IDLE_LOCAL, LOEHLE_STEP_IDLE_REMOTE,
               LOEHLE_STEP_KEEP_PREV}));
  EXPECT_EQ(Plan(false, false, true),
            (V{LOEHLE_STEP_NORMAL, LOEHLE_STEP_IDLE_LOCAL, LOEHLE_STEP_IDLE_REMOTE}));
}

// The allowance: when due, this LLC's idle queue goes first, even before a
// normal prev; the idle queue is not tried twice.
TEST(QueueDispatchPlan, AllowanceDueServesIdleWorkFirst) {
  using V = std::vector<int>;
  EXPECT_EQ(Plan(true, true, false),
            (V{LOEHLE_STEP_IDLE_LOCAL, LOEHLE_STEP_NORMAL, LOEHLE_STEP_KEEP_PREV}));
  EXPECT_EQ(Plan(true, false, false),
            (V{LOEHLE_STEP_IDLE_LOCAL, LOEHLE_STEP_NORMAL, LOEHLE_STEP_IDLE_REMOTE}));
  EXPECT_EQ(Plan(true, true, true),
            (V{LOEHLE_STEP_IDLE_LOCAL, LOEHLE_STEP_NORMAL, LOEHLE_STEP_IDLE_REMOTE,
               LOEHLE_STEP_KEEP_PREV}));
}

TEST(QueueIdleTurn, DueAfterThePeriodOnlyWhenIdleWorkWaits) {
  const uint64_t period = LOEHLE_IDLE_TURN_SLICES * kSlice;
  EXPECT_EQ(loehle_idle_turn_period(kSlice, 1), period);
  const uint64_t t0 = 10'000 * kMs;
  EXPECT_FALSE(loehle_idle_turn_due(t0 + 10 * period, t0, kSlice, 0));
  EXPECT_TRUE(loehle_idle_turn_due(t0, 0, kSlice, 1));  // never ran
  EXPECT_FALSE(loehle_idle_turn_due(t0 + period - 1, t0, kSlice, 1));
  EXPECT_TRUE(loehle_idle_turn_due(t0 + period, t0, kSlice, 1));
  // A stamp a little ahead of our clock (another CPU's) is a turn that just
  // began; one more than a period ahead is garbage, and the turn is given.
  EXPECT_FALSE(loehle_idle_turn_due(t0 - 1, t0, kSlice, 1));
  EXPECT_FALSE(loehle_idle_turn_due(t0 - period, t0, kSlice, 1));
  EXPECT_TRUE(loehle_idle_turn_due(t0 - period - 1, t0, kSlice, 1));
}

// Many waiting idle tasks shorten the period: each of n tasks, served in
// turn, runs within LOEHLE_IDLE_MAX_WAIT_NS.
TEST(QueueIdleTurn, EveryWaitingTaskRunsWithinTheMaximumWait) {
  const uint64_t floor = LOEHLE_IDLE_TURN_MIN_SLICES * kSlice;
  const uint32_t covered = LOEHLE_IDLE_MAX_WAIT_NS / floor - 1;
  for (uint32_t n : {1u, 2u, 8u, 64u, 100u, covered}) {
    const uint64_t period = loehle_idle_turn_period(kSlice, n);
    EXPECT_LE(period * n, LOEHLE_IDLE_MAX_WAIT_NS) << n;
    EXPECT_LE(period, LOEHLE_IDLE_TURN_SLICES * kSlice) << n;
    EXPECT_GE(period, floor) << n;
  }
  EXPECT_EQ(loehle_idle_turn_period(kSlice, 100), LOEHLE_IDLE_MAX_WAIT_NS / 101);
}

// However many idle tasks wait, normal work keeps all but one slice in
// LOEHLE_IDLE_TURN_MIN_SLICES + 1: the period never drops below the floor
// (without it, 1000 waiting tasks would make every dispatch a turn).
TEST(QueueIdleTurn, PeriodNeverBelowTheFloor) {
  const uint64_t floor = LOEHLE_IDLE_TURN_MIN_SLICES * kSlice;
  for (uint32_t n : {250u, 1000u, 100000u, 0xffffffffu}) {
    EXPECT_EQ(loehle_idle_turn_period(kSlice, n), floor) << n;
  }
  // A thousand waiting tasks still each run within the 30 s watchdog.
  EXPECT_LT(loehle_idle_turn_period(kSlice, 1000) * 1000,
            30ULL * 1000 * 1000 * 1000);
}

// A CPU saturated with normal work, simulated slice by slice: idle work
// gets exactly its allowance, no more (bounded above) and no less (bounded
// below), over ten seconds.
TEST(QueueIdleTurn, AllowanceBoundedBothWaysUnderSaturation) {
  for (uint32_t waiting : {1u, 4u, 200u, 5000u}) {
    uint64_t now = 1'000 * kMs, last_idle_run = now;
    int idle_turns = 0, slices = 0;
    const uint64_t end = now + 10'000 * kMs;
    while (now < end) {
      const int due = loehle_idle_turn_due(now, last_idle_run, kSlice, waiting);
      const uint32_t first =
          loehle_plan_step(loehle_plan_dispatch(due, /*prev_may_keep=*/1, /*prev_idle=*/0), 0);
      if (first == LOEHLE_STEP_IDLE_LOCAL) {
        ++idle_turns;
        last_idle_run = now;
      } else {
        ASSERT_EQ(first, static_cast<uint32_t>(LOEHLE_STEP_NORMAL));
      }
      ++slices;
      now += kSlice;
    }
    const uint64_t period = loehle_idle_turn_period(kSlice, waiting);
    const uint64_t period_slices = (period + kSlice - 1) / kSlice;
    const int expected = static_cast<int>(slices / period_slices);
    EXPECT_GE(idle_turns, expected - 1) << waiting;
    EXPECT_LE(idle_turns, expected + 1) << waiting;
  }
}

TEST(QueuePreempt, NormalTaskTakesIdleWorkOwnCpuFirst) {
  EXPECT_EQ(loehle_preempt_for(0, 3, 1, 5), 3);
  EXPECT_EQ(loehle_preempt_for(0, 3, 0, 5), 5);
  EXPECT_EQ(loehle_preempt_for(0, 3, 0, -1), -1);
  // Idle work never preempts.
  EXPECT_EQ(loehle_preempt_for(1, 3, 1, 5), -1);
}

}  // namespace

// Displaced idle work waits for its own CPU: only idle work that lost its
// CPU (slice gone, not a wakeup) to a task that CPU runs next.
TEST(QueueDeferIdleWake, OnlyIdleWorkDisplacedFromItsOwnBusyCpu) {
  EXPECT_TRUE(loehle_defer_idle_wake(1, 0, 0, 1, 1));
  EXPECT_FALSE(loehle_defer_idle_wake(0, 0, 0, 1, 1));  // normal work
  EXPECT_FALSE(loehle_defer_idle_wake(1, 1, 0, 1, 1));  // a wakeup
  EXPECT_FALSE(loehle_defer_idle_wake(1, 0, kSlice, 1, 1));  // new, or sent back
  EXPECT_FALSE(loehle_defer_idle_wake(1, 0, 0, 0, 1));  // queued from elsewhere
  // Its CPU has nothing next: it may be about to go idle, with no tick to
  // wake anybody for the queued task.
  EXPECT_FALSE(loehle_defer_idle_wake(1, 0, 0, 1, 0));
}

TEST(QueueIdleWakeDue, AfterTheDelayOnlyWhenPending) {
  const uint64_t t = 1'000 * kMs;
  EXPECT_FALSE(loehle_idle_wake_due(t, 0));
  EXPECT_FALSE(loehle_idle_wake_due(t, t));
  EXPECT_FALSE(loehle_idle_wake_due(t + LOEHLE_IDLE_WAKE_DELAY_NS - 1, t));
  EXPECT_TRUE(loehle_idle_wake_due(t + LOEHLE_IDLE_WAKE_DELAY_NS, t));
  EXPECT_TRUE(loehle_idle_wake_due(t + 10 * kSlice, t));
}

// A stamp from a CPU whose clock runs ahead is a deferral just begun; one
// absurdly far ahead must not hold the wake back for ever.
TEST(QueueIdleWakeDue, FutureStampsWaitUnlessGarbage) {
  const uint64_t t = 1'000 * kMs;
  EXPECT_FALSE(loehle_idle_wake_due(t, t + kMs));
  EXPECT_FALSE(loehle_idle_wake_due(t, t + 1'000 * kMs));
  EXPECT_TRUE(loehle_idle_wake_due(t, t + 1'000 * kMs + 1));
}

// One stamp stands for all of an LLC's deferrals: after a wake, it is armed
// again while another idle task waits, never for an empty or single queue.
TEST(QueueIdleWakeAgain, WhileAnotherIdleTaskWaits) {
  EXPECT_FALSE(loehle_idle_wake_again(-1));  // the kfunc's error
  EXPECT_FALSE(loehle_idle_wake_again(0));
  EXPECT_FALSE(loehle_idle_wake_again(1));   // the one just woken for
  EXPECT_TRUE(loehle_idle_wake_again(2));
}
