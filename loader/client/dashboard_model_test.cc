#include "loader/client/dashboard_model.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/settings.h"
#include "loader/core/stats_snapshot.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A machine of `nodes` nodes x `llcs_per_node` LLCs x `cores` cores x `smt`
// threads, CPU ids in that order.
nlohmann::json TopologyJson(int nodes, int llcs_per_node, int cores, int smt) {
  nlohmann::json cpus = nlohmann::json::array();
  int id = 0;
  for (int n = 0; n < nodes; ++n) {
    for (int l = 0; l < llcs_per_node; ++l) {
      for (int c = 0; c < cores; ++c) {
        const int core = id;
        for (int t = 0; t < smt; ++t) {
          cpus.push_back({{"cpu", id++}, {"core", core},
                          {"llc", n * llcs_per_node + l}, {"node", n},
                          {"online", true}});
        }
      }
    }
  }
  return {{"cpus", cpus}, {"nr_llcs", nodes * llcs_per_node},
          {"nr_nodes", nodes}, {"smt_active", smt > 1}, {"latency_source", "none"}};  // no hotplug_events: an older daemon
}

// A reply as the daemon sends it, parsed as every client parses it.
StatsSnapshot Parsed(const nlohmann::json& reply) {
  absl::StatusOr<StatsSnapshot> stats = ParseStatsSnapshot(reply);
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? *stats : StatsSnapshot{};
}

TopologyInfo Topology(int nodes, int llcs_per_node, int cores, int smt) {
  nlohmann::json reply = ToJson(StatsSnapshot{});
  reply["topology"] = TopologyJson(nodes, llcs_per_node, cores, smt);
  return Parsed(reply).topology;
}

nlohmann::json StatsJson(double uptime, uint32_t generation, uint64_t forks,
                     uint64_t failures, uint64_t select_calls,
                     uint64_t select_ns, int nr_cpus = 8) {
  nlohmann::json fork_picks = nlohmann::json::array();
  for (int cpu = 0; cpu < nr_cpus; ++cpu) fork_picks.push_back(cpu == 0 ? forks : forks / 4);
  return {
      {"kernel", "6.18.0-test"}, {"state", "enabled"}, {"ops", "loehle"},
      {"uptime_s", uptime}, {"generation", generation},
      {"settings", {{"policy", "reservoir"}, {"sched_idle", "wakee-aware"},
                    {"smt", "idle-core"}, {"slice_us", 5000},
                    {"claim_retries", 1}, {"sample_every", 64}}},
      {"topology", TopologyJson(2, 1, 2, 2)},
      {"events", {{"received", forks}, {"newest_seq", forks},
                  {"drops_total", failures + 1000}, {"capacity", 65536}}},
      {"idle_state_tracking", false},
      {"programs", {{{"name", "select_cpu"}, {"run_count", select_calls},
                     {"run_time_ns", select_ns}}}},
      {"generations",
       {{{"generation", generation},
         {"counters", {{"select_fork", forks}, {"select_wakeup", 2 * forks},
                       {"pick_shallowest", forks}, {"pick_prev_idle", 2 * forks},
                       {"claim_attempts", forks}, {"claim_failures", failures},
                       {"tie_hist_1", forks / 2}, {"tie_hist_2_3", forks / 2},
                       {"candidates", forks}}},
         {"settings", {{"policy", "reservoir"}, {"sched_idle", "wakee-aware"},
                       {"smt", "idle-core"}, {"slice_us", 5000},
                       {"claim_retries", 1}, {"sample_every", 64}}},
         {"fork_picks", fork_picks}}}}};
}

StatsSnapshot Stats(double uptime, uint32_t generation, uint64_t forks,
                    uint64_t failures, uint64_t select_calls, uint64_t select_ns,
                    int nr_cpus = 8) {
  return Parsed(StatsJson(uptime, generation, forks, failures, select_calls,
                          select_ns, nr_cpus));
}

TEST(RatesTest, DifferencesOfTheSameGenerationPerSecond) {
  const StatsSnapshot before = Stats(10, 3, 100, 1, 1000, 1000000);
  Rates r = ComputeRates(&before, Stats(12, 3, 300, 5, 3000, 3000000));
  EXPECT_DOUBLE_EQ(r.seconds, 2);
  EXPECT_EQ(r.generation, 3u);
  EXPECT_FALSE(r.generation_changed);
  EXPECT_DOUBLE_EQ(r.Rate("select_fork"), 100);
  EXPECT_DOUBLE_EQ(r.Rate("select_wakeup"), 200);
  EXPECT_DOUBLE_EQ(r.Rate("claim_failures"), 2);
  EXPECT_DOUBLE_EQ(r.Rate("no_such_counter"), 0);
  EXPECT_DOUBLE_EQ(r.events_received_per_s, 100);
  ASSERT_EQ(r.programs.size(), 1u);
  EXPECT_EQ(r.programs[0].name, "select_cpu");
  EXPECT_DOUBLE_EQ(r.programs[0].calls_per_s, 1000);
  EXPECT_DOUBLE_EQ(r.programs[0].ns_per_call, 1000);
}

TEST(RatesTest, NewGenerationCountsFromZero) {
  const StatsSnapshot before = Stats(10, 3, 100, 1, 10, 10);
  Rates r = ComputeRates(&before, Stats(11, 4, 50, 0, 10, 10));
  EXPECT_TRUE(r.generation_changed);
  EXPECT_DOUBLE_EQ(r.Rate("select_fork"), 50);
  ASSERT_EQ(r.programs.size(), 1u);
  EXPECT_LT(r.programs[0].ns_per_call, 0);  // no calls in between
}

TEST(RatesTest, NoRatesFromOneReplyOrABackwardClock) {
  EXPECT_DOUBLE_EQ(ComputeRates(nullptr, Stats(1, 1, 5, 0, 0, 0)).seconds, 0);
  const StatsSnapshot before = Stats(5, 1, 5, 0, 0, 0);
  Rates r = ComputeRates(&before, Stats(5, 1, 9, 0, 0, 0));
  EXPECT_DOUBLE_EQ(r.seconds, 0);
  EXPECT_TRUE(r.per_s.empty());
}

TEST(RatesTest, CountersThatWentBackwardsGiveZero) {
  const StatsSnapshot before = Stats(1, 1, 500, 9, 0, 0);
  Rates r = ComputeRates(&before, Stats(2, 1, 100, 1, 0, 0));
  EXPECT_DOUBLE_EQ(r.Rate("select_fork"), 0);
}

TEST(ProcStatTest, ParsesPerCpuLinesOnly) {
  ProcStat s = ParseProcStat(
      "cpu  100 0 100 800 0 0 0 0 0 0\n"
      "cpu0 10 1 10 100 5 1 1 1 0 0\n"
      "cpu2 0 0 0 50 0 0 0 0 0 0\n"
      "intr 12345\n");
  ASSERT_EQ(s.busy.size(), 3u);
  EXPECT_EQ(s.busy[0], 24u);
  EXPECT_EQ(s.total[0], 129u);
  EXPECT_EQ(s.busy[1], 0u);
  EXPECT_EQ(s.total[2], 50u);
}

TEST(ProcStatTest, BusyFractionsBetweenReadings) {
  ProcStat a = ParseProcStat("cpu0 10 0 0 90 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\n");
  ProcStat b = ParseProcStat("cpu0 60 0 0 140 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\n");
  EXPECT_THAT(BusyFractions(a, b), ElementsAre(0.5, 0.0));
  EXPECT_TRUE(BusyFractions(ProcStat{}, b).empty());
}

TEST(GroupCpusTest, OneRowPerLlcWithCoresInOrder) {
  std::vector<CpuGroup> groups = GroupCpus(Topology(2, 1, 2, 2), 10);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].label, "n0 L0");
  EXPECT_EQ(groups[1].label, "n1 L1");
  EXPECT_THAT(groups[1].cores, ElementsAre(ElementsAre(4, 5), ElementsAre(6, 7)));
  EXPECT_EQ(groups[0].cpu_count(), 4u);
}

TEST(GroupCpusTest, MergesLlcsPerNodeThenNodesWhenRowsRunOut) {
  // 512 CPUs: 16 nodes x 4 LLCs x 4 cores x 2 threads.
  const TopologyInfo topo = Topology(16, 4, 4, 2);
  EXPECT_EQ(GroupCpus(topo, 64).size(), 64u);
  std::vector<CpuGroup> nodes = GroupCpus(topo, 16);
  ASSERT_EQ(nodes.size(), 16u);
  EXPECT_EQ(nodes[3].label, "n3");
  EXPECT_EQ(nodes[3].cpu_count(), 32u);
  std::vector<CpuGroup> ranges = GroupCpus(topo, 5);
  ASSERT_EQ(ranges.size(), 4u);  // 4 nodes per row
  EXPECT_EQ(ranges[0].label, "n0-3");
  EXPECT_EQ(ranges[0].cpu_count(), 128u);
}

TEST(GroupCpusTest, OfflineCpusAreLeftOut) {
  TopologyInfo topo = Topology(1, 1, 2, 2);
  topo.cpus[1].online = false;
  std::vector<CpuGroup> groups = GroupCpus(topo, 4);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].cpu_count(), 3u);
}

TEST(LayoutCellsTest, CoreSeparatorsWhenTheyFitElseAggregates) {
  CpuGroup g{"n0", {{0, 1}, {2, 3}, {4, 5}}};
  RowCells wide = LayoutCells(g, 8);
  EXPECT_EQ(wide.cells.size(), 6u);
  EXPECT_EQ(wide.width(), 8u);
  EXPECT_EQ(HeatRow(wide, {1, 2, 3, 4, 5, 6}, 6), ":=|+*|%@");
  RowCells tight = LayoutCells(g, 6);
  EXPECT_EQ(tight.width(), 6u);
  RowCells packed = LayoutCells(g, 4);
  EXPECT_EQ(packed.cells.size(), 3u);
  EXPECT_THAT(packed.cells[0], ElementsAre(0, 1));
  EXPECT_LE(packed.width(), 4u);
}

TEST(LayoutCellsTest, NoSeparatorsWithoutSmt) {
  CpuGroup g{"n0", {{0}, {1}, {2}}};
  RowCells row = LayoutCells(g, 80);
  EXPECT_EQ(row.width(), 3u);
}

TEST(HeatTest, RampFromNothingToTheMaximum) {
  EXPECT_EQ(HeatChar(0, 10), ' ');
  EXPECT_EQ(HeatChar(0.01, 10), '.');
  EXPECT_EQ(HeatChar(10, 10), '@');
  EXPECT_EQ(HeatChar(5, 0), ' ');
  EXPECT_DOUBLE_EQ(CellValue({0, 2, 9}, {1, 2, 3}, false), 4);
  EXPECT_DOUBLE_EQ(CellValue({0, 2}, {1, 2, 3}, true), 2);
}

TEST(SparklineTest, ShowsTheLastValuesScaledToTheirMaximum) {
  EXPECT_EQ(Sparkline({0, 1, 2, 4}, 10), "_-+@");
  EXPECT_EQ(Sparkline({100, 0, 4}, 2), "_@");
  EXPECT_EQ(Sparkline({}, 5), "");
}

TEST(FormatTest, CountsAndDurations) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(2.5), "2.5");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1234), "1.2k");
  EXPECT_EQ(FormatCount(34000), "34k");
  EXPECT_EQ(FormatCount(1.25e6), "1.2M");
  EXPECT_EQ(FormatDuration(9.5), "9.5s");
  EXPECT_EQ(FormatDuration(245), "4m05s");
  EXPECT_EQ(FormatDuration(3723), "1h02m03s");
}

TEST(KeysTest, CycleSettings) {
  Settings s;
  s.policy = LOEHLE_POLICY_RESERVOIR;
  s.sched_idle = LOEHLE_SI_IGNORE;
  s.smt = LOEHLE_SMT_OFF;
  EXPECT_EQ(*SettingChangeForKey(s, 'p'), nlohmann::json({{"policy", "builtin"}}));
  s.policy = LOEHLE_POLICY_FIRST;
  EXPECT_EQ(*SettingChangeForKey(s, 'p'), nlohmann::json({{"policy", "reservoir"}}));
  EXPECT_EQ(*SettingChangeForKey(s, 's'), nlohmann::json({{"sched_idle", "mainline"}}));
  EXPECT_EQ(*SettingChangeForKey(s, 'm'), nlohmann::json({{"smt", "idle-core"}}));
  EXPECT_FALSE(SettingChangeForKey(s, 'x').has_value());
}

TEST(DashboardModelTest, FrameFits80x24AndShowsEverySection) {
  DashboardModel model;
  model.Update(Stats(10, 3, 100, 1, 1000, 1000000), ProcStat{});
  model.Update(Stats(11, 3, 300, 5, 3000, 3000000), ProcStat{});
  std::vector<std::string> lines = model.Render(80, 24);
  ASSERT_LE(lines.size(), 24u);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 80u) << line;
  const std::string all = [&] {
    std::string s;
    for (const std::string& l : lines) s += l + "\n";
    return s;
  }();
  EXPECT_THAT(all, HasSubstr("kernel 6.18.0-test"));
  EXPECT_THAT(all, HasSubstr("sched_ext enabled (loehle)"));
  EXPECT_THAT(all, HasSubstr("gen 3  policy reservoir"));
  EXPECT_THAT(all, HasSubstr("select/s 600 = fork 200  wakeup 400"));
  EXPECT_THAT(all, HasSubstr("shallowest 200"));
  EXPECT_THAT(all, HasSubstr("fail/s 4 (2.00%)"));
  // Drops of every generation come from the reply's events.drops_total.
  EXPECT_THAT(all, HasSubstr("drops/s 0 (1.0k)"));
  EXPECT_THAT(all, HasSubstr("1:150"));
  EXPECT_THAT(all, HasSubstr("n0 L0   fork @-|--   525"));
  EXPECT_THAT(all, HasSubstr("n1 L1   fork --|--   300"));
  EXPECT_THAT(all, HasSubstr("select_cpu 1.0us"));
  EXPECT_EQ(lines.back().substr(0, 6), "q quit");
}

TEST(DashboardModelTest, BusyRowAndResetBaseline) {
  DashboardModel model;
  model.Update(Stats(10, 3, 100, 1, 0, 0),
               ParseProcStat("cpu0 0 0 0 100 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\n"));
  model.Update(Stats(11, 3, 100, 1, 0, 0),
               ParseProcStat("cpu0 100 0 0 100 0 0 0 0\ncpu1 0 0 0 200 0 0 0 0\n"));
  model.Reset();
  std::vector<std::string> lines = model.Render(100, 40);
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("since reset"));
  EXPECT_THAT(all, HasSubstr("busy @ |     25%"));
  EXPECT_THAT(all, HasSubstr("view reset"));
  EXPECT_TRUE(model.claim_fail_history().empty());
}

TEST(DashboardModelTest, ManyCpusAggregateIntoTheScreen) {
  StatsSnapshot stats = Stats(10, 1, 100, 0, 0, 0, 512);
  stats.topology = Topology(16, 4, 4, 2);
  DashboardModel model;
  model.Update(stats, ProcStat{});
  std::vector<std::string> lines = model.Render(80, 24);
  ASSERT_LE(lines.size(), 24u);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 80u);
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("n0-1"));
}

}  // namespace
}  // namespace loehle
