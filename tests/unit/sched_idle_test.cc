// Host tests for include/loehle/sched_idle.h, the per-CPU sched-idle state
// machine of scx/loehle.bpf.c (seeds 003 and 004 rest on it): one test per
// transition, then the claim protocol as the BPF side runs it.

#include "loehle/sched_idle.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

constexpr uint64_t kTtl = 5'000'000;  // one default slice
constexpr uint64_t kNow = 1'000'000'000;
constexpr uint32_t kIdlePid = 100, kNormalPid = 200, kWakeePid = 300;

bool SchedIdle(const loehle_si_cpu& s, uint64_t now = kNow, uint32_t queued = 0) {
  return loehle_si_is_sched_idle(&s, now, kTtl, queued);
}

loehle_si_cpu RunningIdleWork() {
  loehle_si_cpu s{};
  loehle_si_on_running(&s, 1, kIdlePid);
  return s;
}

// The claim protocol of select_cpu: read the word, check it, install ours
// (the BPF side uses a compare-and-swap from `seen`), re-check.
bool Claim(loehle_si_cpu* s, uint32_t pid, uint64_t now) {
  const uint64_t seen = s->claim;
  if (!loehle_si_claimable(s, seen, now, kTtl)) return false;
  const uint64_t mine = loehle_si_claim_word(pid, now);
  s->claim = mine;
  if (!loehle_si_claim_holds(s, mine)) {
    s->claim = 0;
    return false;
  }
  return true;
}

TEST(SchedIdleState, RunningSetsWhatRuns) {
  loehle_si_cpu s{};
  EXPECT_FALSE(SchedIdle(s));
  EXPECT_FALSE(loehle_si_busy(&s));
  loehle_si_on_running(&s, 1, kIdlePid);
  EXPECT_TRUE(SchedIdle(s));
  EXPECT_TRUE(loehle_si_runs_idle_work(&s));
  EXPECT_TRUE(loehle_si_busy(&s));
  loehle_si_on_running(&s, 0, kNormalPid);
  EXPECT_FALSE(SchedIdle(s));
  EXPECT_FALSE(loehle_si_runs_idle_work(&s));
  EXPECT_TRUE(loehle_si_busy(&s));
}

// A tick reads the running task's status again (a cpu.idle write, a scope
// switch); turning normal ends a claim, and a CPU running nothing of ours
// stays so.
TEST(SchedIdleState, TickUpdatesWhatRuns) {
  loehle_si_cpu s = RunningIdleWork();
  s.claim = loehle_si_claim_word(kWakeePid, kNow);
  loehle_si_on_tick(&s, 1);
  EXPECT_TRUE(loehle_si_runs_idle_work(&s));
  EXPECT_NE(s.claim, 0u);
  loehle_si_on_tick(&s, 0);
  EXPECT_FALSE(loehle_si_runs_idle_work(&s));
  EXPECT_TRUE(loehle_si_busy(&s));
  EXPECT_EQ(s.claim, 0u);
  loehle_si_on_tick(&s, 1);
  EXPECT_TRUE(SchedIdle(s));
  loehle_si_cpu idle{};
  loehle_si_on_tick(&idle, 1);
  EXPECT_FALSE(loehle_si_busy(&idle));
  loehle_si_cpu released = RunningIdleWork();
  loehle_si_on_release(&released);
  loehle_si_on_tick(&released, 1);
  EXPECT_FALSE(SchedIdle(released));
}

// A queued task behind the SCHED_IDLE one (the kernel's nr_running) means
// the CPU does not run only idle work.
TEST(SchedIdleState, QueuedLocalWorkDisqualifies) {
  loehle_si_cpu s = RunningIdleWork();
  EXPECT_FALSE(SchedIdle(s, kNow, 1));
  EXPECT_TRUE(SchedIdle(s, kNow, 0));
}

// The flag never outlives the task: stopping clears it, so a CPU whose
// SCHED_IDLE task was preempted by a FIFO thread is not sched-idle.
TEST(SchedIdleState, StoppingClearsIt) {
  loehle_si_cpu s = RunningIdleWork();
  loehle_si_on_stopping(&s);
  EXPECT_FALSE(SchedIdle(s));
  EXPECT_FALSE(loehle_si_busy(&s));
}

TEST(SchedIdleState, ReleaseToAHigherClassUntilAcquireOrRunning) {
  loehle_si_cpu s = RunningIdleWork();
  loehle_si_on_release(&s);
  EXPECT_FALSE(SchedIdle(s));
  EXPECT_TRUE(loehle_si_busy(&s));  // RT work runs there
  EXPECT_FALSE(loehle_si_runs_idle_work(&s));
  loehle_si_on_acquire(&s);
  EXPECT_FALSE(loehle_si_busy(&s));
  EXPECT_FALSE(SchedIdle(s));  // nothing of ours runs yet
  loehle_si_on_running(&s, 1, kIdlePid);
  EXPECT_TRUE(SchedIdle(s));
  // A missed acquire: our next running() proves the CPU is ours again.
  loehle_si_on_release(&s);
  loehle_si_on_running(&s, 1, kIdlePid);
  EXPECT_TRUE(SchedIdle(s));
  EXPECT_EQ(s.released, 0u);
}

// Even a release that arrives while our task still runs keeps the CPU
// from counting as sched-idle.
TEST(SchedIdleState, ReleaseWhileRunningIdleWork) {
  loehle_si_cpu s = RunningIdleWork();
  s.released = 1;
  EXPECT_FALSE(SchedIdle(s));
  EXPECT_FALSE(Claim(&s, kWakeePid, kNow));
}

// A busy CPU held by RT, DL or stop work is never the least-loaded choice:
// its weight of ours is 0, but nothing of ours runs there until it lets go.
// Released (ops.cpu_release) or not: a task of ours that made itself
// SCHED_FIFO leaves only stopping() behind.
TEST(SchedIdleState, BusyCpuRunningNothingOfOursIsHeavilyLoaded) {
  loehle_si_cpu s = RunningIdleWork();
  EXPECT_EQ(loehle_si_load(&s, 1, 0), 1u);
  EXPECT_EQ(loehle_si_load(&s, 100, 2), 100u + 2 * 1024);
  const loehle_si_cpu ours = RunningIdleWork();
  loehle_si_on_release(&s);
  EXPECT_GE(loehle_si_load(&s, 0, 0), LOEHLE_LOAD_NOT_OURS);
  EXPECT_GT(loehle_si_load(&s, 0, 0), loehle_si_load(&ours, 10000, 100));
  loehle_si_on_running(&s, 0, kNormalPid);
  EXPECT_EQ(loehle_si_load(&s, 100, 0), 100u);
  loehle_si_on_stopping(&s);  // and no cpu_release: switched to FIFO
  EXPECT_GT(loehle_si_load(&s, 0, 0), loehle_si_load(&ours, 10000, 100));
}

TEST(SchedIdleState, IdleResetsEverything) {
  loehle_si_cpu s = RunningIdleWork();
  ASSERT_TRUE(Claim(&s, kWakeePid, kNow));
  s.released = 1;
  loehle_si_on_idle(&s);
  EXPECT_EQ(s.claim, 0u);
  EXPECT_EQ(s.released, 0u);
  EXPECT_EQ(s.running, static_cast<uint32_t>(LOEHLE_RUN_NONE));
}

TEST(SchedIdleClaim, OneWakeeAtATime) {
  loehle_si_cpu s = RunningIdleWork();
  EXPECT_TRUE(Claim(&s, kWakeePid, kNow));
  EXPECT_FALSE(SchedIdle(s, kNow + 1000));
  EXPECT_FALSE(Claim(&s, kWakeePid + 1, kNow + 1000));
  EXPECT_EQ(loehle_si_claim_pid(s.claim), kWakeePid);
}

// The claimant arriving ends the claim, whatever it is.
TEST(SchedIdleClaim, EndsWhenTheClaimantRuns) {
  loehle_si_cpu s = RunningIdleWork();
  ASSERT_TRUE(Claim(&s, kWakeePid, kNow));
  loehle_si_on_running(&s, 1, kIdlePid);  // the old idle task again
  EXPECT_NE(s.claim, 0u);
  loehle_si_on_running(&s, 1, kWakeePid);  // a SCHED_IDLE claimant
  EXPECT_EQ(s.claim, 0u);
  EXPECT_TRUE(SchedIdle(s));
}

TEST(SchedIdleClaim, EndsWhenANormalTaskRuns) {
  loehle_si_cpu s = RunningIdleWork();
  ASSERT_TRUE(Claim(&s, kWakeePid, kNow));
  loehle_si_on_running(&s, 0, kNormalPid);
  EXPECT_EQ(s.claim, 0u);
}

// A claimant that never arrives (moved elsewhere) lets go after the TTL.
TEST(SchedIdleClaim, ExpiresAfterTtl) {
  loehle_si_cpu s = RunningIdleWork();
  ASSERT_TRUE(Claim(&s, kWakeePid, kNow));
  EXPECT_FALSE(SchedIdle(s, kNow + kTtl / 2));
  EXPECT_TRUE(SchedIdle(s, kNow + kTtl + 2048));
  EXPECT_TRUE(Claim(&s, kWakeePid + 1, kNow + kTtl + 2048));
  EXPECT_EQ(loehle_si_claim_pid(s.claim), kWakeePid + 1);
}

// Claim times are 32-bit, 1024-ns units: the age is right across the wrap.
TEST(SchedIdleClaim, AgeAcrossTheTimeWrap) {
  const uint64_t wrap = uint64_t{1} << (32 + LOEHLE_SI_TIME_SHIFT);
  const uint64_t before = wrap - 4096;
  const uint64_t word = loehle_si_claim_word(kWakeePid, before);
  EXPECT_NE(word, 0u);
  EXPECT_TRUE(loehle_si_claim_live(word, wrap + 4096, kTtl));
  EXPECT_FALSE(loehle_si_claim_live(word, wrap + kTtl, kTtl));
  EXPECT_FALSE(loehle_si_claim_live(0, before, kTtl));
  // A claim word is never 0, even for pid 0 at time 0.
  EXPECT_NE(loehle_si_claim_word(0, 0), 0u);
  // A TTL below one time unit still lasts one unit.
  EXPECT_TRUE(loehle_si_claim_live(loehle_si_claim_word(1, kNow), kNow, 1));
}

// A claim another CPU made after this scan read its clock carries a later
// time: it is live, not "expired", or two wakees would take one CPU.
TEST(SchedIdleClaim, ClaimFromTheNearFutureIsLive) {
  const uint64_t word = loehle_si_claim_word(kWakeePid, kNow + 50000);
  EXPECT_TRUE(loehle_si_claim_live(word, kNow, kTtl));
  EXPECT_TRUE(loehle_si_claim_live(word, kNow + 50000 - kTtl + 4096, kTtl));
  loehle_si_cpu s = RunningIdleWork();
  s.claim = word;
  EXPECT_FALSE(loehle_si_is_sched_idle(&s, kNow, kTtl, 0));
  // Beyond a TTL into the future it is no claim of this epoch: expired.
  EXPECT_FALSE(loehle_si_claim_live(word, kNow + 50000 - 2 * kTtl, kTtl));
}

// Re-validation: a normal task started after the scan saw the CPU
// sched-idle; the claim must not stand, or the wakee would preempt it.
TEST(SchedIdleClaim, LostWhenANormalTaskStartedAfterTheScan) {
  loehle_si_cpu s = RunningIdleWork();
  ASSERT_TRUE(SchedIdle(s));                // the scan
  loehle_si_on_running(&s, 0, kNormalPid);  // meanwhile
  EXPECT_FALSE(Claim(&s, kWakeePid, kNow));
  EXPECT_EQ(s.claim, 0u);
  // The interleaving the re-check exists for: the claim word is read and
  // found free, then a normal task starts (which leaves the word 0), then
  // the compare-and-swap from 0 succeeds.
  s = RunningIdleWork();
  const uint64_t seen = s.claim;
  ASSERT_TRUE(loehle_si_claimable(&s, seen, kNow, kTtl));
  loehle_si_on_running(&s, 0, kNormalPid);
  ASSERT_EQ(s.claim, seen);  // the compare-and-swap would succeed
  const uint64_t mine = loehle_si_claim_word(kWakeePid, kNow);
  s.claim = mine;
  EXPECT_FALSE(loehle_si_claim_holds(&s, mine));
  // Likewise a higher class taking the CPU in that window.
  s = RunningIdleWork();
  ASSERT_TRUE(loehle_si_claimable(&s, s.claim, kNow, kTtl));
  loehle_si_on_release(&s);
  s.claim = mine;
  EXPECT_FALSE(loehle_si_claim_holds(&s, mine));
}

// The sticky-claim regression: SCHED_IDLE wakees packed one after another
// (mainline, idle-first) never use up the sched-idle CPUs.
TEST(SchedIdleClaim, RepeatedPackingDoesNotExhaustTheCpu) {
  loehle_si_cpu s = RunningIdleWork();
  uint64_t now = kNow;
  for (uint32_t wakee = 1; wakee <= 50; ++wakee) {
    ASSERT_TRUE(Claim(&s, wakee, now)) << "packing " << wakee;
    // The packed wakee waits in the local DSQ, then runs in its turn.
    EXPECT_FALSE(SchedIdle(s, now, 1));
    now += 100'000;
    loehle_si_on_stopping(&s);
    loehle_si_on_running(&s, 1, wakee);
    EXPECT_TRUE(SchedIdle(s, now)) << "after packing " << wakee;
  }
}

}  // namespace
