// The daemon's stats reply (Daemon::HandleStats is ToJson(CollectStats())).
#include "loader/daemon/stats_collector.h"

#include <map>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/stats_snapshot.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

class CollectStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int cpu = 0; cpu < 4; ++cpu) {
      CpuTopology c;
      c.cpu = cpu;
      c.core = cpu & ~1;
      c.llc = cpu / 2;
      c.online = cpu != 3;
      topology_.cpus.push_back(c);
    }
    topology_.nr_llcs = 2;
    topology_.nr_nodes = 1;
    topology_.smt_active = true;
    topology_.latency_source = "none";
    settings_[1].policy = LOEHLE_POLICY_RESERVOIR;
    settings_[2].policy = LOEHLE_POLICY_FIRST;
    settings_[3].policy = LOEHLE_POLICY_BUILTIN;

    sources_.kernel = "7.3.4";
    sources_.state = "enabled";
    sources_.ops = "loehle";
    sources_.uptime_s = 3;
    sources_.generation = 3;
    sources_.topology = &topology_;
    sources_.settings_by_generation = &settings_;
    sources_.read_generation = [](uint32_t generation) -> absl::StatusOr<GenerationStats> {
      if (generation == 2) return absl::NotFoundError("slot recycled");
      GenerationStats stats;
      stats.generation = generation;
      stats.counters[LOEHLE_STAT_EVENT_DROPS] = 10 * generation;
      stats.fork_picks = {1, 1, 1, 100};
      return stats;
    };
    sources_.programs = {{"select_cpu", 5, 500}};
    older_.count = 5;
    older_.first = 1;
    older_.last = 5;
    older_.sum.counters[LOEHLE_STAT_EVENT_DROPS] = 7;
    sources_.older = &older_;
    sources_.events_newest_seq = 42;
    sources_.events_capacity = 64;
  }

  Topology topology_;
  std::map<uint32_t, Settings> settings_;
  FoldedGenerations older_;
  StatsSources sources_;
};

TEST_F(CollectStatsTest, EveryReadableGenerationOldestFirst) {
  const StatsSnapshot s = CollectStats(sources_, StatsScope::kAll);
  ASSERT_EQ(s.generations.size(), 2u);  // 2 could not be read
  EXPECT_EQ(s.generations[0].generation(), 1u);
  EXPECT_EQ(s.generations[1].generation(), 3u);
  EXPECT_EQ(s.generations[0].settings.policy, LOEHLE_POLICY_RESERVOIR);
  EXPECT_EQ(s.settings.policy, LOEHLE_POLICY_BUILTIN);  // the current one
  EXPECT_EQ(s.generation, 3u);
  EXPECT_EQ(s.events.drops_total, 47u);  // 10 + 30 kept, 7 folded
  EXPECT_EQ(s.older, older_);
  EXPECT_EQ(s.events.received, 42u);
  EXPECT_EQ(s.events.newest_seq, 42u);
  EXPECT_EQ(s.events.capacity, 64u);
  EXPECT_EQ(s.programs, sources_.programs);
  EXPECT_EQ(s.kernel, "7.3.4");
}

TEST_F(CollectStatsTest, CurrentScopeKeepsTheDropsOfEveryGeneration) {
  const StatsSnapshot s = CollectStats(sources_, StatsScope::kCurrent);
  ASSERT_EQ(s.generations.size(), 1u);
  EXPECT_EQ(s.generations[0].generation(), 3u);
  EXPECT_EQ(s.events.drops_total, 47u);
  EXPECT_EQ(s.older.count, 5u);
}

TEST_F(CollectStatsTest, DerivedFiguresCountOnlineCpus) {
  const StatsSnapshot s = CollectStats(sources_, StatsScope::kCurrent);
  // CPU 3 is offline: its 100 fork picks are outside the spread.
  EXPECT_EQ(s.generations[0].derived.fork_max, 1u);
  EXPECT_DOUBLE_EQ(s.generations[0].derived.fork_spread_cv, 0);
  ASSERT_EQ(s.topology.cpus.size(), 4u);
  EXPECT_FALSE(s.topology.cpus[3].online);
  EXPECT_EQ(s.topology.cpus[2].core, 2);
  EXPECT_EQ(s.topology.cpus[2].llc, 1);
  EXPECT_TRUE(s.topology.smt_active);
}

TEST_F(CollectStatsTest, TheReplyParsesBack) {
  const StatsSnapshot s = CollectStats(sources_, StatsScope::kAll);
  absl::StatusOr<StatsSnapshot> parsed = ParseStatsSnapshot(ToJson(s));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(ToJson(*parsed), ToJson(s));
}

}  // namespace
}  // namespace loehle
