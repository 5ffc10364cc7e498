#include "loader/core/stats.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/counters.h"
#include "loader/core/settings.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

loehle_stats CpuStats(uint64_t generation) {
  loehle_stats stats{};
  stats.generation = generation;
  return stats;
}

TEST(StatsTest, GetIsBoundsChecked) {
  GenerationStats stats;
  stats.counters[LOEHLE_STAT_KICK] = 7;
  EXPECT_EQ(stats.Get(LOEHLE_STAT_KICK), 7u);
  EXPECT_EQ(stats.Get(LOEHLE_NR_STATS), 0u);
  EXPECT_EQ(stats.Get(UINT32_MAX), 0u);
}

TEST(StatsTest, SumCpusIgnoresOtherGenerations) {
  std::vector<loehle_stats> per_cpu = {CpuStats(3), CpuStats(2), CpuStats(3),
                                       CpuStats(4)};
  for (loehle_stats& cpu : per_cpu) {
    for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) cpu.counters[i] = i + 1;
  }
  per_cpu[2].counters[LOEHLE_STAT_EVENTS] = 1000;
  const GenerationStats sum = SumCpus(per_cpu, 3);
  EXPECT_EQ(sum.generation, 3u);
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    const uint64_t expected =
        i == LOEHLE_STAT_EVENTS ? (i + 1) + 1000 : 2 * (i + 1);
    EXPECT_EQ(sum.counters[i], expected) << StatName(i);
  }
  EXPECT_TRUE(sum.fork_picks.empty());

  const GenerationStats none = SumCpus(per_cpu, 9);
  EXPECT_EQ(none.generation, 9u);
  for (uint64_t value : none.counters) EXPECT_EQ(value, 0u);
  EXPECT_EQ(SumCpus({}, 0).Get(0), 0u);
}

TEST(StatsTest, DeltaSaturates) {
  GenerationStats before;
  before.generation = 5;
  before.counters[LOEHLE_STAT_ENQUEUE] = 100;
  before.counters[LOEHLE_STAT_KICK] = 50;
  before.fork_picks = {10, 20, 30};
  GenerationStats now = before;
  now.counters[LOEHLE_STAT_ENQUEUE] = 130;
  now.counters[LOEHLE_STAT_KICK] = 40;  // went backwards
  now.counters[LOEHLE_STAT_EVENTS] = 3;
  now.fork_picks = {15, 5, 30, 7};  // grew a CPU; CPU 1 went backwards
  const GenerationStats delta = Delta(now, before);
  EXPECT_EQ(delta.generation, 5u);
  EXPECT_EQ(delta.Get(LOEHLE_STAT_ENQUEUE), 30u);
  EXPECT_EQ(delta.Get(LOEHLE_STAT_KICK), 0u);
  EXPECT_EQ(delta.Get(LOEHLE_STAT_EVENTS), 3u);
  EXPECT_EQ(delta.Get(LOEHLE_STAT_CANDIDATES), 0u);
  EXPECT_THAT(delta.fork_picks, ElementsAre(5, 0, 0, 7));
}

TEST(StatsTest, DeltaAcrossGenerationsIsTheNewReading) {
  GenerationStats before;
  before.generation = 1;
  before.counters[LOEHLE_STAT_ENQUEUE] = 100;
  GenerationStats now;
  now.generation = 2;
  now.counters[LOEHLE_STAT_ENQUEUE] = 7;
  now.fork_picks = {1};
  const GenerationStats delta = Delta(now, before);
  EXPECT_EQ(delta.generation, 2u);
  EXPECT_EQ(delta.Get(LOEHLE_STAT_ENQUEUE), 7u);
  EXPECT_THAT(delta.fork_picks, ElementsAre(1));
}

TEST(StatsTest, DeriveRatesAndTotals) {
  GenerationStats stats;
  stats.counters[SelectStat(LOEHLE_PATH_FORK)] = 1;
  stats.counters[SelectStat(LOEHLE_PATH_WAKEUP)] = 2;
  stats.counters[SelectStat(LOEHLE_PATH_SYNC)] = 3;
  stats.counters[PickStat(LOEHLE_REASON_PREV_IDLE)] = 4;
  stats.counters[PickStat(LOEHLE_REASON_CLAIM_GAVE_UP)] = 2;
  stats.counters[LOEHLE_STAT_CLAIM_ATTEMPTS] = 400;
  stats.counters[LOEHLE_STAT_CLAIM_FAILURES] = 3;
  const Derived derived = Derive(stats, {});
  EXPECT_EQ(derived.selects, 6u);
  EXPECT_EQ(derived.picks, 6u);
  EXPECT_EQ(derived.claim_attempts, 400u);
  EXPECT_EQ(derived.claim_failures, 3u);
  EXPECT_DOUBLE_EQ(derived.claim_failure_rate, 0.0075);
  EXPECT_EQ(derived.fork_spread_cv, 0.0);
  EXPECT_EQ(derived.fork_chi_square, 0.0);
  EXPECT_EQ(derived.fork_max, 0u);
  EXPECT_EQ(derived.fork_min, 0u);
}

TEST(StatsTest, DeriveWithoutAnythingDividesByNothing) {
  const std::vector<int> cpus = {0, 1, 2, 3};
  const Derived derived = Derive(GenerationStats{}, cpus);
  EXPECT_EQ(derived.claim_failure_rate, 0.0);
  EXPECT_EQ(derived.fork_spread_cv, 0.0);
  EXPECT_EQ(derived.fork_chi_square, 0.0);
  EXPECT_EQ(derived.fork_max, 0u);
  EXPECT_EQ(derived.fork_min, 0u);
  EXPECT_FALSE(std::isnan(derived.fork_spread_cv));
}

TEST(StatsTest, UniformForkSpreadScoresZero) {
  GenerationStats stats;
  stats.fork_picks = {25, 25, 25, 25};
  const std::vector<int> cpus = {0, 1, 2, 3};
  const Derived derived = Derive(stats, cpus);
  EXPECT_DOUBLE_EQ(derived.fork_spread_cv, 0.0);
  EXPECT_DOUBLE_EQ(derived.fork_chi_square, 0.0);
  EXPECT_EQ(derived.fork_max, 25u);
  EXPECT_EQ(derived.fork_min, 25u);
}

TEST(StatsTest, ConcentratedForkSpreadScoresHigh) {
  GenerationStats stats;
  stats.fork_picks = {100, 0, 0, 0};
  const std::vector<int> cpus = {0, 1, 2, 3};
  const Derived derived = Derive(stats, cpus);
  // mean 25; squares 75^2 + 3 * 25^2 = 7500; chi^2 = 7500 / 25 = 300;
  // sd = sqrt(7500 / 4) = 43.30; cv = sqrt(3).
  EXPECT_DOUBLE_EQ(derived.fork_chi_square, 300.0);
  EXPECT_THAT(derived.fork_spread_cv, DoubleNear(std::sqrt(3.0), 1e-12));
  EXPECT_EQ(derived.fork_max, 100u);
  EXPECT_EQ(derived.fork_min, 0u);

  // Same counts, mildly uneven: much smaller than the concentrated case.
  stats.fork_picks = {27, 24, 25, 24};
  const Derived mild = Derive(stats, cpus);
  EXPECT_DOUBLE_EQ(mild.fork_chi_square, (4.0 + 1 + 0 + 1) / 25);
  EXPECT_LT(mild.fork_chi_square, derived.fork_chi_square / 100);
}

TEST(StatsTest, ForkSpreadCountsOnlyTheScopeAndMissingCpusAsZero) {
  GenerationStats stats;
  stats.fork_picks = {10, 1000, 10};            // CPU 1 is out of scope
  const std::vector<int> cpus = {0, 2, 5, -1};  // 5: beyond fork_picks
  const Derived derived = Derive(stats, cpus);
  EXPECT_EQ(derived.fork_max, 10u);
  EXPECT_EQ(derived.fork_min, 0u);
  // Observed {10, 10, 0}: mean 20/3.
  const double mean = 20.0 / 3;
  const double squares = 2 * (10 - mean) * (10 - mean) + mean * mean;
  EXPECT_DOUBLE_EQ(derived.fork_chi_square, squares / mean);
  EXPECT_DOUBLE_EQ(derived.fork_spread_cv, std::sqrt(squares / 3) / mean);
}

TEST(StatsTest, JsonHasEveryCounterAndDerivedKey) {
  GenerationStats stats;
  stats.generation = 4;
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) stats.counters[i] = 100 + i;
  stats.fork_picks = {1, 2, 3};
  const std::vector<int> cpus = {0, 1, 2};
  const Derived derived = Derive(stats, cpus);
  const nlohmann::json json = GenerationToJson(stats, derived);
  EXPECT_EQ(json["generation"], 4);
  ASSERT_TRUE(json["counters"].is_object());
  EXPECT_EQ(json["counters"].size(), static_cast<size_t>(LOEHLE_NR_STATS));
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    EXPECT_EQ(json["counters"][StatName(i)], 100 + i) << StatName(i);
  }
  EXPECT_EQ(json["fork_picks"], nlohmann::json::parse("[1,2,3]"));
  const nlohmann::json& d = json["derived"];
  EXPECT_EQ(d.size(), 9u);
  EXPECT_EQ(d["selects"], derived.selects);
  EXPECT_EQ(d["picks"], derived.picks);
  EXPECT_EQ(d["claim_attempts"], derived.claim_attempts);
  EXPECT_EQ(d["claim_failures"], derived.claim_failures);
  EXPECT_EQ(d["claim_failure_rate"], derived.claim_failure_rate);
  EXPECT_EQ(d["fork_spread_cv"], derived.fork_spread_cv);
  EXPECT_EQ(d["fork_chi_square"], derived.fork_chi_square);
  EXPECT_EQ(d["fork_max"], 3);
  EXPECT_EQ(d["fork_min"], 1);
  EXPECT_EQ(json.size(), 4u);
}

TEST(StatsTest, SummaryLine) {
  GenerationStats delta;
  delta.generation = 3;
  delta.counters[SelectStat(LOEHLE_PATH_FORK)] = 24;
  delta.counters[SelectStat(LOEHLE_PATH_WAKEUP)] = 2400;
  delta.counters[SelectStat(LOEHLE_PATH_SYNC)] = 44;
  delta.counters[LOEHLE_STAT_CLAIM_ATTEMPTS] = 2439;
  delta.counters[LOEHLE_STAT_CLAIM_FAILURES] = 10;
  delta.counters[LOEHLE_STAT_CLAIM_RETRIES] = 3;
  delta.counters[LOEHLE_STAT_SCHED_IDLE_PREEMPT] = 1;
  delta.counters[LOEHLE_STAT_PACKING] = 2;
  delta.counters[LOEHLE_STAT_BUSY_SIBLING_PICK] = 5;
  delta.counters[LOEHLE_STAT_EVENTS] = 20;
  delta.counters[LOEHLE_STAT_EVENT_DROPS] = 4;
  EXPECT_EQ(SummaryLine(delta, 2.0, SettingsLabel(Settings{})),
            "gen 3 reservoir/wakee-aware/idle-core/hierarchy | sel 1234/s (fork 24 wake "
            "2400 sync 44) | claim fail 0.41% retry 3 | si-preempt 1 pack 2 | "
            "busy-sib 5 | ev 20 drop 4");
}

TEST(StatsTest, SummaryLineOfAQuietInterval) {
  GenerationStats delta;
  EXPECT_EQ(SummaryLine(delta, 0.0, "first/ignore/off"),
            "gen 0 first/ignore/off | sel 0/s (fork 0 wake 0 sync 0) | claim "
            "fail 0.00% retry 0 | si-preempt 0 pack 0 | busy-sib 0 | ev 0 "
            "drop 0");
  delta.counters[SelectStat(LOEHLE_PATH_WAKEUP)] = 10;
  EXPECT_EQ(SummaryLine(delta, -1.0, "x").find("sel 0/s"), 10u);
}

}  // namespace
}  // namespace loehle
