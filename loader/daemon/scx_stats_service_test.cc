// The scx_stats protocol over a real socket, beside the control protocol on
// the same server, as the daemon serves them.
#include "loader/daemon/scx_stats_service.h"

#include <sys/stat.h>

#include <cerrno>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/counters.h"
#include "loader/core/scx_stats_schema.h"
#include "loader/core/stats_snapshot.h"
#include "loader/daemon/control_service.h"
#include "loader/net/json_lines.h"
#include "loader/net/json_lines_testing.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using ::loehle::test_support::ServerThread;
using ::loehle::test_support::TempDir;
using ::nlohmann::json;
using ::testing::HasSubstr;

class NoControl : public ControlHandler {
 public:
  json HandleGet() override { return json{{"control", true}}; }
  absl::StatusOr<json> HandleSet(const json&) override { return json::object(); }
  json HandleStats(StatsScope) override { return json::object(); }
};

StatsSnapshot Snapshot() {
  StatsSnapshot s;
  s.generation = 2;
  s.uptime_s = 4.5;
  s.settings.policy = LOEHLE_POLICY_FIRST;
  s.events.received = 9;
  s.events.drops_total = 1;
  GenerationSnapshot g;
  g.settings = s.settings;
  g.stats.generation = 2;
  g.stats.counters[LOEHLE_STAT_CLAIM_ATTEMPTS] = 8;
  g.stats.counters[LOEHLE_STAT_CLAIM_FAILURES] = 2;
  g.derived = Derive(g.stats, {});
  s.generations.push_back(g);
  return s;
}

class ScxStatsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    control_path_ = dir_.path() + "/control.sock";
    stats_path_ = dir_.path() + "/scx/root/stats";
    absl::StatusOr<std::unique_ptr<JsonLineServer>> server =
        ListenForControl(control_path_, &control_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_TRUE(PrepareSocketDirectory(stats_path_).ok());
    ASSERT_TRUE(server_
                    ->AddListener(stats_path_, std::make_unique<ScxStatsService>(
                                                   [this] {
                                                     ++snapshots_;
                                                     return Snapshot();
                                                   }))
                    .ok());
  }

  json Ask(const std::string& line) {
    ServerThread thread(server_.get());
    absl::StatusOr<json> reply = JsonLineRequest(stats_path_, line);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *reply : json();
  }

  TempDir dir_;
  std::string control_path_;
  std::string stats_path_;
  NoControl control_;
  int snapshots_ = 0;
  std::unique_ptr<JsonLineServer> server_;
};

TEST_F(ScxStatsServiceTest, TopTargetIsTheCurrentGenerationFlat) {
  for (const char* line : {R"({"req":"stats","args":{"target":"top"}})",
                           R"({"req":"stats"})", R"({"req":"stats","args":{}})"}) {
    const json reply = Ask(line);
    EXPECT_EQ(reply["errno"], 0) << line;
    const json& resp = reply["args"]["resp"];
    EXPECT_EQ(resp["generation"], 2);
    EXPECT_EQ(resp["policy"], "first");
    EXPECT_EQ(resp["claim_failures"], 2);
    EXPECT_DOUBLE_EQ(resp["claim_failure_rate"].get<double>(), 0.25);
    EXPECT_EQ(resp["events_received"], 9);
    EXPECT_EQ(resp["event_drops_total"], 1);
  }
  EXPECT_EQ(snapshots_, 3);
}

TEST_F(ScxStatsServiceTest, MetaDescribesEveryFieldOfTop) {
  const json meta = Ask(R"({"req":"stats_meta"})");
  EXPECT_EQ(meta["errno"], 0);
  const json& stats = meta["args"]["resp"][kScxStatsStruct];
  EXPECT_EQ(stats["name"], kScxStatsStruct);
  EXPECT_EQ(stats["top"], "true");
  const json top = Ask(R"({"req":"stats"})")["args"]["resp"];
  ASSERT_EQ(stats["fields"].size(), top.size());
  for (const auto& [name, value] : top.items()) {
    ASSERT_TRUE(stats["fields"].contains(name)) << name;
    const json& field = stats["fields"][name];
    EXPECT_FALSE(field["desc"].get<std::string>().empty()) << name;
    EXPECT_TRUE(field["user"]["kind"] == "counter" || field["user"]["kind"] == "gauge")
        << name;
    EXPECT_TRUE(field["user"].contains("scope")) << name;
    const std::string datum = field["datum"];
    EXPECT_EQ(datum, value.is_string() ? "string"
                     : value.is_number_float() ? "float"
                                               : "u64")
        << name;
  }
  const json& failures = stats["fields"]["claim_failures"];
  EXPECT_EQ(failures["desc"], CounterInfoFor(LOEHLE_STAT_CLAIM_FAILURES).description);
  EXPECT_EQ(failures["user"]["kind"], "counter");
  EXPECT_EQ(failures["user"]["unit"], "claims");
  EXPECT_EQ(failures["user"]["scope"], "current generation");
  EXPECT_EQ(stats["fields"]["event_drops_total"]["user"]["scope"], "daemon");
}

TEST_F(ScxStatsServiceTest, BadRequestsGetEinvalAndTheConnectionCarriesOn) {
  for (const char* line : {R"({"req":"restart"})", R"({"req":"stats","args":{"target":"dom"}})",
                           R"({"cmd":"get"})", "[1]", "not json"}) {
    const json reply = Ask(line);
    EXPECT_EQ(reply["errno"], EINVAL) << line;
    EXPECT_TRUE(reply["args"]["resp"].is_string()) << line;
  }
  EXPECT_THAT(Ask(R"({"req":"restart"})")["args"]["resp"].get<std::string>(),
              HasSubstr("unknown command"));
}

TEST_F(ScxStatsServiceTest, BothSocketsAre0600AndSpeakTheirOwnProtocol) {
  for (const std::string& path : {control_path_, stats_path_}) {
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0) << path;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << path;
  }
  ServerThread thread(server_.get());
  absl::StatusOr<json> control = JsonRequest(control_path_, json{{"cmd", "get"}});
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ((*control)["result"]["control"], true);
  absl::StatusOr<json> stats = JsonRequest(stats_path_, json{{"cmd", "get"}});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ((*stats)["errno"], EINVAL);
}

TEST(ScxStatsSchemaTest, HelpTextListsEveryField) {
  const std::string help = DescribeScxStats();
  // Named: a range-for over a part of a temporary outlives the temporary.
  const nlohmann::json meta = ScxStatsMeta();
  for (const auto& [name, field] : meta[kScxStatsStruct]["fields"].items()) {
    EXPECT_THAT(help, HasSubstr(name + " ")) << name;
  }
  EXPECT_THAT(help, HasSubstr("/var/run/scx/root/stats"));
}

}  // namespace
}  // namespace loehle
