#include "loader/core/stats_snapshot.h"

#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/counters.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using ::testing::HasSubstr;

StatsSnapshot Sample() {
  StatsSnapshot s;
  s.kernel = "7.3.4-test";
  s.state = "enabled";
  s.ops = "loehle";
  s.uptime_s = 12.5;
  s.generation = 3;
  s.settings.policy = LOEHLE_POLICY_FIRST;
  s.topology.cpus = {{0, 0, 0, 0, true}, {1, 0, 0, 0, true}, {2, 2, 1, 1, false}};
  s.topology.nr_llcs = 2;
  s.topology.nr_nodes = 2;
  s.topology.smt_active = true;
  s.topology.latency_source = "file:/etc/lat";
  s.topology.hotplug_events = 6;
  s.events = {77, 77, 5, 65536};
  s.programs = {{"select_cpu", 1000, 1500000123}};
  s.idle_state_tracking = true;
  s.older.count = 3;
  s.older.first = 1;
  s.older.last = 3;
  s.older.sum.counters[LOEHLE_STAT_EVENT_DROPS] = 4;
  s.older.sum.fork_picks = {1, 2, 3};
  for (uint32_t generation : {2u, 3u}) {
    GenerationSnapshot g;
    g.settings.policy = generation == 3 ? LOEHLE_POLICY_FIRST : LOEHLE_POLICY_RESERVOIR;
    g.stats.generation = generation;
    g.stats.counters[LOEHLE_STAT_CLAIM_ATTEMPTS] = 10 * generation;
    g.stats.counters[LOEHLE_STAT_CLAIM_FAILURES] = generation;
    g.stats.fork_picks = {4, 2, 9};
    g.derived = Derive(g.stats, s.topology.OnlineCpus());
    s.generations.push_back(g);
  }
  return s;
}

TEST(StatsSnapshotTest, RoundTripsThroughText) {
  const StatsSnapshot sample = Sample();
  absl::StatusOr<StatsSnapshot> parsed =
      ParseStatsSnapshot(nlohmann::json::parse(ToJson(sample).dump()));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(ToJson(*parsed), ToJson(sample));
  EXPECT_EQ(parsed->topology, sample.topology);
  EXPECT_EQ(parsed->events, sample.events);
  EXPECT_EQ(parsed->older, sample.older);
  ASSERT_NE(parsed->Current(), nullptr);
  EXPECT_EQ(parsed->Current()->stats.Get(LOEHLE_STAT_CLAIM_FAILURES), 3u);
  EXPECT_EQ(parsed->Find(2)->settings.policy, LOEHLE_POLICY_RESERVOIR);
  EXPECT_EQ(parsed->Find(4), nullptr);
  // Derived figures are recomputed over the online CPUs, not trusted.
  EXPECT_DOUBLE_EQ(parsed->Current()->derived.claim_failure_rate, 0.1);
  EXPECT_EQ(parsed->Current()->derived.fork_max, 4u);
}

TEST(StatsSnapshotTest, EveryCounterIsInTheReplyByName) {
  const nlohmann::json json = ToJson(Sample());
  const nlohmann::json& counters = json["generations"][0]["counters"];
  EXPECT_EQ(counters.size(), static_cast<size_t>(LOEHLE_NR_STATS));
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    EXPECT_TRUE(counters.contains(StatName(i))) << StatName(i);
  }
}

TEST(StatsSnapshotTest, AMissingOrMistypedFieldIsNamed) {
  nlohmann::json json = ToJson(Sample());
  json["topology"]["cpus"][1].erase("llc");
  absl::StatusOr<StatsSnapshot> parsed = ParseStatsSnapshot(json);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(parsed.status().message(), HasSubstr("topology.cpus[1].llc is missing"));

  json = ToJson(Sample());
  json["generations"][1]["counters"]["claim_failures"] = "many";
  parsed = ParseStatsSnapshot(json);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(),
              HasSubstr("generations[1].counters.claim_failures"));

  json = ToJson(Sample());
  json["uptime_s"] = "long";
  EXPECT_THAT(ParseStatsSnapshot(json).status().message(),
              HasSubstr("uptime_s is not a number"));
  EXPECT_FALSE(ParseStatsSnapshot(nlohmann::json::array()).ok());
  EXPECT_FALSE(ParseStatsSnapshot(nlohmann::json()).ok());
}

TEST(StatsSnapshotTest, AReplyWithoutOlderGenerationsHasNone) {
  nlohmann::json json = ToJson(Sample());
  json.erase("older_generations");
  absl::StatusOr<StatsSnapshot> parsed = ParseStatsSnapshot(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->older, FoldedGenerations{});
}

TEST(StatsSnapshotTest, UnknownKeysAndCountersAreIgnoredMissingCountersAreZero) {
  nlohmann::json json = ToJson(Sample());
  json["from_the_future"] = 1;
  json["settings"]["a_newer_setting"] = "on";
  json["generations"][1]["settings"]["slice_us"] = 5000000;  // a wider range
  json["generations"][0]["counters"]["a_newer_counter"] = 5;
  json["generations"][0]["counters"].erase("claim_attempts");
  absl::StatusOr<StatsSnapshot> parsed = ParseStatsSnapshot(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->Find(2)->stats.Get(LOEHLE_STAT_CLAIM_ATTEMPTS), 0u);
}

TEST(SchedulerStatusTest, RoundTripsAndRefusesWhatIsNotAStatus) {
  SchedulerStatus status{"0.1.0", "abc123", 4, Settings{}, "enabled", "loehle", {"a", "b"}};
  status.settings.smt = LOEHLE_SMT_OFF;
  absl::StatusOr<SchedulerStatus> parsed = ParseSchedulerStatus(ToJson(status));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, status);

  nlohmann::json json = ToJson(status);
  json["settings"]["policy"] = "fastest";
  EXPECT_THAT(ParseSchedulerStatus(json).status().message(),
              HasSubstr("settings.policy unknown policy \"fastest\""));
  json = ToJson(status);
  json["settings"].erase("slice_us");
  EXPECT_THAT(ParseSchedulerStatus(json).status().message(),
              HasSubstr("settings.slice_us is missing"));
  json = ToJson(status);
  json.erase("generation");
  EXPECT_THAT(ParseSchedulerStatus(json).status().message(),
              HasSubstr("generation is missing"));
  EXPECT_FALSE(ParseSchedulerStatus(nlohmann::json("get")).ok());
}

// The reply's layout as Documentation/stats.md lists it (and as it was
// before the typed snapshot): renaming a key in both writer and reader
// would still round-trip, so the keys are spelled out here.
std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

TEST(StatsSnapshotTest, TheReplyHasTheDocumentedKeys) {
  const nlohmann::json json = ToJson(Sample());
  EXPECT_EQ(Keys(json), (std::set<std::string>{
                            "version", "git_commit",
                            "kernel", "state", "ops", "uptime_s", "generation",
                            "settings", "topology", "events", "programs",
                            "idle_state_tracking", "generations",
                            "older_generations"}));
  EXPECT_EQ(Keys(json["older_generations"]),
            (std::set<std::string>{"count", "first", "last", "counters",
                                   "fork_picks"}));
  EXPECT_EQ(Keys(json["settings"]),
            (std::set<std::string>{"policy", "sched_idle", "smt", "slice_us",
                                   "claim_retries", "sample_every",
                                   "sched_idle_scope"}));
  EXPECT_EQ(Keys(json["topology"]),
            (std::set<std::string>{"cpus", "nr_llcs", "nr_nodes", "smt_active",
                                   "latency_source", "hotplug_events"}));
  EXPECT_EQ(Keys(json["topology"]["cpus"][0]),
            (std::set<std::string>{"cpu", "core", "llc", "node", "online"}));
  EXPECT_EQ(Keys(json["events"]), (std::set<std::string>{
                                      "received", "newest_seq", "drops_total",
                                      "capacity"}));
  EXPECT_EQ(Keys(json["programs"][0]),
            (std::set<std::string>{"name", "run_count", "run_time_ns"}));
  EXPECT_EQ(Keys(json["generations"][0]),
            (std::set<std::string>{"generation", "settings", "counters",
                                   "fork_picks", "derived"}));
  EXPECT_EQ(Keys(json["generations"][0]["derived"]),
            (std::set<std::string>{"selects", "picks", "claim_attempts",
                                   "claim_failures", "claim_failure_rate",
                                   "fork_spread_cv", "fork_chi_square",
                                   "fork_max", "fork_min"}));
}

TEST(SchedulerStatusTest, TheGetReplyHasTheDocumentedKeys) {
  EXPECT_EQ(Keys(ToJson(SchedulerStatus{})),
            (std::set<std::string>{"version", "git_commit", "generation",
                                   "settings", "state", "ops", "kfuncs"}));
}

}  // namespace
}  // namespace loehle
