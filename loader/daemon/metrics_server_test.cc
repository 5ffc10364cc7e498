#include "loader/daemon/metrics_server.h"

#include <atomic>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/counters.h"
#include "loader/core/stats_snapshot.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

#if LOEHLE_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace loehle {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

StatsSnapshot FakeStats() {
  absl::StatusOr<StatsSnapshot> stats = ParseStatsSnapshot(nlohmann::json::parse(R"({
    "kernel":"6.18.0-test","state":"enabled","ops":"loehle","uptime_s":12.5,
    "generation":2,
    "settings":{"policy":"first","sched_idle":"wakee-aware","smt":"idle-core",
                "slice_us":5000,"claim_retries":1,"sample_every":64},
    "topology":{"cpus":[{"cpu":0,"core":0,"llc":0,"node":0,"online":true},
                        {"cpu":1,"core":0,"llc":0,"node":0,"online":true}],
                "nr_llcs":1,"nr_nodes":1,"smt_active":true,"latency_source":"none",
                "hotplug_events":0},
    "events":{"received":77,"newest_seq":77,"capacity":65536,"drops_total":0},
    "idle_state_tracking":false,
    "programs":[{"name":"select_cpu","run_count":1000,"run_time_ns":1500000123}],
    "generations":[
      {"generation":1,
       "settings":{"policy":"reservoir","sched_idle":"wakee-aware","smt":"idle-core",
                   "slice_us":5000,"claim_retries":1,"sample_every":64},
       "counters":{"select_fork":10,"select_wakeup":20,"pick_shallowest":10,
                   "tie_hist_2_3":4,"claim_failures":3},
       "fork_picks":[6,4]},
      {"generation":2,
       "settings":{"policy":"first","sched_idle":"wakee-aware","smt":"idle-core",
                   "slice_us":5000,"claim_retries":1,"sample_every":64},
       "counters":{"select_fork":5},"fork_picks":[5,0]}]})"));
  EXPECT_TRUE(stats.ok()) << stats.status();
  return stats.ok() ? *stats : StatsSnapshot{};
}

TEST(MetricsFormatTest, CountersCarryGenerationAndKindLabels) {
  const std::string text = FormatMetrics(FakeStats());
  EXPECT_THAT(text, HasSubstr("# TYPE scx_loehle_selects_total counter\n"));
  EXPECT_THAT(text, HasSubstr(
      "scx_loehle_selects_total{generation=\"1\",policy=\"reservoir\","
      "sched_idle=\"wakee-aware\",smt=\"idle-core\",sched_idle_scope=\"task\",path=\"wakeup\"} 20\n"));
  EXPECT_THAT(text, HasSubstr(
      "scx_loehle_picks_total{generation=\"1\",policy=\"reservoir\","
      "sched_idle=\"wakee-aware\",smt=\"idle-core\",sched_idle_scope=\"task\",reason=\"shallowest\"} 10\n"));
  EXPECT_THAT(text, HasSubstr("size=\"2_3\"} 4\n"));
  EXPECT_THAT(text, HasSubstr(
      "scx_loehle_claim_failures_total{generation=\"1\",policy=\"reservoir\","
      "sched_idle=\"wakee-aware\",smt=\"idle-core\",sched_idle_scope=\"task\"} 3\n"));
  EXPECT_THAT(text, HasSubstr(
      "scx_loehle_fork_picks_total{generation=\"2\",policy=\"first\","
      "sched_idle=\"wakee-aware\",smt=\"idle-core\",sched_idle_scope=\"task\",cpu=\"1\",node=\"0\","
      "llc=\"0\",core=\"0\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("scx_loehle_generation 2\n"));
  EXPECT_THAT(text, HasSubstr("scx_loehle_uptime_seconds 12.500\n"));
  EXPECT_THAT(text, HasSubstr("scx_loehle_events_received_total 77\n"));
  EXPECT_THAT(text, HasSubstr(
      "scx_loehle_callback_runs_total{callback=\"select_cpu\"} 1000\n"));
  EXPECT_THAT(text, HasSubstr(
      "scx_loehle_callback_run_time_seconds_total{callback=\"select_cpu\"} "
      "1.500000123\n"));
  EXPECT_THAT(text, HasSubstr(
      "scx_loehle_info{kernel=\"6.18.0-test\",state=\"enabled\",ops=\"loehle\"} 1\n"));
}

TEST(MetricsFormatTest, EachFamilyHasOneHeaderBeforeItsSamples) {
  const std::string text = FormatMetrics(FakeStats());
  size_t headers = 0, pos = 0;
  while ((pos = text.find("# TYPE scx_loehle_selects_total ", pos)) != std::string::npos) {
    ++headers;
    ++pos;
  }
  EXPECT_EQ(headers, 1u);
  // Every sample of a family follows its header without another family in
  // between.
  const size_t header = text.find("# TYPE scx_loehle_selects_total");
  const size_t last_sample = text.rfind("\nscx_loehle_selects_total{");
  const size_t next_header = text.find("# HELP", header + 1);
  EXPECT_LT(last_sample, next_header);
}

TEST(MetricsFormatTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  StatsSnapshot stats = FakeStats();
  stats.kernel = "x\"y";
  EXPECT_THAT(FormatMetrics(stats), HasSubstr("kernel=\"x\\\"y\""));
}

TEST(MetricsFormatTest, ASnapshotWithoutGenerationsHasOnlyTheDaemonFamilies) {
  const std::string text = FormatMetrics(StatsSnapshot{});
  EXPECT_THAT(text, HasSubstr("scx_loehle_info"));
  EXPECT_THAT(text, Not(HasSubstr("selects")));
}

TEST(MetricsFormatTest, ScalarCountersAreDescribedByTheirMetadata) {
  const std::string text = FormatMetrics(FakeStats());
  EXPECT_THAT(text, HasSubstr("# HELP scx_loehle_claim_failures_total " +
                              CounterInfoFor(LOEHLE_STAT_CLAIM_FAILURES).description));
}

TEST(MetricsAddressTest, ParsesHostAndPort) {
  absl::StatusOr<MetricsAddress> a = ParseMetricsAddress("127.0.0.1:9464", false);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9464);
  a = ParseMetricsAddress("[::1]:80", false);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "::1");
  EXPECT_TRUE(ParseMetricsAddress("localhost:0", false).ok());
  EXPECT_TRUE(ParseMetricsAddress("127.1.2.3:1", false).ok());
}

TEST(MetricsAddressTest, RefusesRemoteUnlessAllowed) {
  absl::StatusOr<MetricsAddress> a = ParseMetricsAddress("0.0.0.0:9464", false);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("--metrics-allow-remote"));
  EXPECT_TRUE(ParseMetricsAddress("0.0.0.0:9464", true).ok());
}

TEST(MetricsAddressTest, RejectsMalformedAddresses) {
  for (const char* bad : {"9464", ":9464", "host:", "host:70000", "host:x",
                          "::1:80", "[::1]80"}) {
    EXPECT_FALSE(ParseMetricsAddress(bad, true).ok()) << bad;
  }
}

#if LOEHLE_HAVE_HTTPLIB
TEST(MetricsServerTest, ServesTheSnapshotTheMainLoopPublishes) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      MetricsServer::Start({"127.0.0.1", 0});
  ASSERT_TRUE(server.ok()) << server.status();
  MetricsServer* metrics = server->get();
  std::atomic<bool> done{false};
  // Stands in for the daemon's loop.
  std::thread loop([&] {
    while (!done) {
      if (metrics->SnapshotWanted()) metrics->Publish(FakeStats());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  httplib::Client client("127.0.0.1", metrics->port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("version=0.0.4"));
  EXPECT_THAT(res->body, HasSubstr("scx_loehle_selects_total"));
  auto other = client.Get("/");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  done = true;
  loop.join();
}
#endif

}  // namespace
}  // namespace loehle
