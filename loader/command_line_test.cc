#include "loader/command_line.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/generation_history.h"
#include "loader/core/settings.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Command> Parse(std::vector<std::string> args) {
  return ParseCommandLine(args);
}

TEST(CliTest, NoArgumentsRunsWithTheDocumentedDefaults) {
  absl::StatusOr<Command> cmd = Parse({});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kRun);
  EXPECT_EQ(cmd->daemon.settings.policy, LOEHLE_POLICY_RESERVOIR);
  EXPECT_EQ(cmd->daemon.settings.sched_idle, LOEHLE_SI_WAKEE_AWARE);
  EXPECT_EQ(cmd->daemon.settings.smt, LOEHLE_SMT_IDLE_CORE);
  EXPECT_EQ(cmd->daemon.settings.claim_retries, 1u);
  EXPECT_EQ(cmd->daemon.socket_path, kDefaultSocketPath);
}

TEST(CliTest, RunFlagsAcceptEqualsAndSeparateValues) {
  absl::StatusOr<Command> cmd =
      Parse({"--policy=first", "--sched-idle", "idle-first", "--smt=off",
             "--slice-us=2000", "--claim-retries", "3", "--sample-every=1",
             "--stats=0.5", "--socket=/tmp/x.sock",
             "--idle-latency-file=/tmp/lat", "-v"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->daemon.settings.policy, LOEHLE_POLICY_FIRST);
  EXPECT_EQ(cmd->daemon.settings.sched_idle, LOEHLE_SI_IDLE_FIRST);
  EXPECT_EQ(cmd->daemon.settings.smt, LOEHLE_SMT_OFF);
  EXPECT_EQ(cmd->daemon.settings.slice_us, 2000u);
  EXPECT_EQ(cmd->daemon.settings.claim_retries, 3u);
  EXPECT_EQ(cmd->daemon.settings.sample_every, 1u);
  EXPECT_DOUBLE_EQ(cmd->daemon.stats_interval_s, 0.5);
  EXPECT_EQ(cmd->daemon.socket_path, "/tmp/x.sock");
  EXPECT_EQ(cmd->daemon.idle_latency_file, "/tmp/lat");
  EXPECT_TRUE(cmd->daemon.verbose);
}

TEST(CliTest, BadPolicyNamesTheExpectedValues) {
  absl::StatusOr<Command> cmd = Parse({"--policy=fastest"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("fastest"));
  EXPECT_THAT(cmd.status().message(), HasSubstr("reservoir"));
}

TEST(CliTest, UnknownFlagIsRejected) {
  absl::StatusOr<Command> cmd = Parse({"--turbo"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("unknown flag --turbo"));
}

// Found by fuzz_command_line: an argument with a newline made the error
// two lines.
TEST(CliTest, ErrorsStayOneLineWhateverTheArgument) {
  auto cmd = ParseCommandLine({"--bad\nflag", "x"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("unknown flag --bad\\x0aflag"));
  EXPECT_EQ(cmd.status().message().find('\n'), std::string_view::npos);
}

TEST(CliTest, MissingValueIsRejected) {
  absl::StatusOr<Command> cmd = Parse({"--policy"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("needs a value"));
}

TEST(CliTest, NonNumericAndOutOfRangeNumbersAreRejected) {
  EXPECT_FALSE(Parse({"--slice-us=abc"}).ok());
  EXPECT_FALSE(Parse({"--slice-us=-5"}).ok());
  EXPECT_FALSE(Parse({"--slice-us=1"}).ok());  // below the minimum
  EXPECT_FALSE(Parse({"--claim-retries=99"}).ok());
  EXPECT_FALSE(Parse({"--stats=-1"}).ok());
  EXPECT_FALSE(Parse({"--stats=soon"}).ok());
}

TEST(CliTest, StatsZeroTurnsSummaryLinesOff) {
  absl::StatusOr<Command> cmd = Parse({"--stats=0"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->daemon.stats_interval_s, 0);
}

TEST(CliTest, StrayArgumentIsRejected) {
  absl::StatusOr<Command> cmd = Parse({"reservoir"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("unexpected argument"));
}

TEST(CliTest, CtlSetRecordsOnlyTheGivenChanges) {
  absl::StatusOr<Command> cmd =
      Parse({"ctl", "set", "--policy=first", "--claim-retries=0"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kCtlSet);
  EXPECT_EQ(cmd->changes, (nlohmann::json{{"policy", "first"},
                                          {"claim_retries", 0}}));
}

TEST(CliTest, CtlSetWithoutChangesIsRejected) {
  EXPECT_FALSE(Parse({"ctl", "set"}).ok());
}

TEST(CliTest, CtlNeedsAKnownCommand) {
  EXPECT_FALSE(Parse({"ctl"}).ok());
  absl::StatusOr<Command> cmd = Parse({"ctl", "reboot"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("reboot"));
}

TEST(CliTest, CtlSendTakesOneRawLine) {
  absl::StatusOr<Command> cmd = Parse({"ctl", "send", "not json"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kCtlSend);
  EXPECT_EQ(cmd->raw_request, "not json");
  EXPECT_FALSE(Parse({"ctl", "send"}).ok());
  cmd = Parse({"ctl", "send", "--socket=/tmp/s", "{}"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->raw_request, "{}");
  EXPECT_EQ(cmd->socket_path, "/tmp/s");
  EXPECT_FALSE(Parse({"ctl", "send", "{}", "{}"}).ok());
}

TEST(CliTest, CtlGetDoesNotTakeRunFlags) {
  EXPECT_FALSE(Parse({"ctl", "get", "--stats=1"}).ok());
  EXPECT_TRUE(Parse({"ctl", "get", "--socket=/tmp/s"}).ok());
}

TEST(CliTest, CtlStatsJson) {
  absl::StatusOr<Command> cmd = Parse({"ctl", "stats", "--json"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kCtlStats);
  EXPECT_TRUE(cmd->json);
}

TEST(CliTest, StatsStreamNeedsJsonAndTakesAnInterval) {
  EXPECT_FALSE(Parse({"stats"}).ok());
  absl::StatusOr<Command> cmd =
      Parse({"stats", "--json", "--interval=2", "--count=3"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kStatsStream);
  EXPECT_DOUBLE_EQ(cmd->interval_s, 2);
  EXPECT_EQ(cmd->count, 3);
}

TEST(CliTest, BooleanFlagsTakeNoValue) {
  EXPECT_FALSE(Parse({"--verbose=yes"}).ok());
}

TEST(CliTest, HelpWinsAndUsageMentionsEveryRunFlag) {
  absl::StatusOr<Command> cmd = Parse({"--policy=first", "--help"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->kind, Command::Kind::kHelp);
  for (const char* flag :
       {"--policy", "--sched-idle", "--smt", "--slice-us", "--claim-retries",
        "--sample-every", "--stats", "--socket", "--idle-latency-file",
        "ctl get", "ctl set", "ctl stats", "stats --json"}) {
    EXPECT_THAT(UsageText(), HasSubstr(flag));
  }
}

}  // namespace
}  // namespace loehle

namespace loehle {
namespace {

TEST(CliObservabilityTest, TraceTopAndMetricsFlags) {
  absl::StatusOr<Command> cmd =
      ParseCommandLine({"trace", "--out=/tmp/t.jsonl", "--duration", "2.5"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kTrace);
  EXPECT_EQ(cmd->out_path, "/tmp/t.jsonl");
  EXPECT_DOUBLE_EQ(cmd->duration_s, 2.5);
  EXPECT_FALSE(ParseCommandLine({"trace"}).ok());
  EXPECT_FALSE(ParseCommandLine({"trace", "--out=x", "--once"}).ok());

  cmd = ParseCommandLine({"top", "--interval=0.5", "--once", "--socket=/tmp/s"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kTop);
  EXPECT_TRUE(cmd->once);
  EXPECT_DOUBLE_EQ(cmd->interval_s, 0.5);
  EXPECT_EQ(cmd->socket_path, "/tmp/s");
  EXPECT_FALSE(ParseCommandLine({"top", "--policy=first"}).ok());

  cmd = ParseCommandLine({"--metrics-addr=127.0.0.1:9464"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->daemon.metrics_addr, "127.0.0.1:9464");
  EXPECT_FALSE(cmd->daemon.metrics_allow_remote);
  cmd = ParseCommandLine({"--metrics-addr=0.0.0.0:1", "--metrics-allow-remote"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_TRUE(cmd->daemon.metrics_allow_remote);
  EXPECT_FALSE(ParseCommandLine({"--metrics-allow-remote"}).ok());
}

TEST(CliObservabilityTest, UsageNamesTheNewCommandsAndFlags) {
  const std::string usage = UsageText();
  for (const char* word : {"--metrics-addr", "--metrics-allow-remote",
                           "scx_loehle trace --out=FILE", "--duration",
                           "scx_loehle top", "--once"}) {
    EXPECT_NE(usage.find(word), std::string::npos) << word;
  }
}

TEST(CliTest, MonitorIsATextStatsClient) {
  absl::StatusOr<Command> cmd = Parse({"--monitor=2", "--socket=/tmp/s"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kStatsStream);
  EXPECT_FALSE(cmd->json);
  EXPECT_DOUBLE_EQ(cmd->interval_s, 2);
  EXPECT_EQ(cmd->socket_path, "/tmp/s");
  cmd = Parse({"--monitor", "0"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("--monitor takes a number of seconds"));
  for (const char* other : {"--policy=first", "--policy=reservoir", "-v",
                            "--scx-stats-socket=/x", "--stats=1"}) {
    cmd = Parse({"--monitor=1", other});
    ASSERT_FALSE(cmd.ok()) << other;
    EXPECT_THAT(cmd.status().message(), HasSubstr("takes no scheduler flags")) << other;
  }
  EXPECT_FALSE(Parse({"ctl", "get", "--monitor=1"}).ok());
}

TEST(CliTest, HelpStatsAndTheScxStatsSocket) {
  absl::StatusOr<Command> cmd = Parse({"--help-stats"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kHelpStats);
  EXPECT_FALSE(Parse({"--help-stats=1"}).ok());
  cmd = Parse({});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->daemon.scx_stats_socket_path, "/var/run/scx/root/stats");
  cmd = Parse({"--scx-stats-socket="});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->daemon.scx_stats_socket_path, "");
  cmd = Parse({"--scx-stats-socket", "/tmp/x"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->daemon.scx_stats_socket_path, "/tmp/x");
  EXPECT_THAT(UsageText(), HasSubstr("--monitor=SECONDS"));
  EXPECT_THAT(UsageText(), HasSubstr("--help-stats"));
  EXPECT_THAT(UsageText(), HasSubstr("--scx-stats-socket"));
}

// roff spells a dash in a flag name \-.
std::string ManSpelling(std::string_view name) {
  std::string out = "\\-\\-";
  for (char c : name) {
    if (c == '-') out += "\\";
    out += c;
  }
  return out;
}

TEST(FlagTableTest, TheManPageDocumentsEveryFlag) {
  std::ifstream in(std::string(LOEHLE_SOURCE_DIR) + "/Documentation/scx_loehle.8");
  ASSERT_TRUE(in) << "cannot read Documentation/scx_loehle.8";
  std::stringstream text;
  text << in.rdbuf();
  const std::string man = text.str();
  const size_t options = man.find("\n.SH OPTIONS");
  const size_t commands = man.find("\n.SH COMMANDS");
  ASSERT_NE(options, std::string::npos);
  ASSERT_NE(commands, std::string::npos);
  const std::string options_section = man.substr(options, commands - options);
  for (const FlagSpec& flag : Flags()) {
    const std::string spelled = ManSpelling(flag.name);
    if (flag.commands & kRunCommand) {
      // An entry of its own: ".TP" then ".B --name" or ".BR --name = VALUE".
      const bool entry =
          options_section.find("\n.B " + spelled + "\n") != std::string::npos ||
          options_section.find("\n.BR " + spelled + " ") != std::string::npos ||
          options_section.find(", \" " + spelled + "\n") != std::string::npos;
      EXPECT_TRUE(entry) << "no OPTIONS entry for --" << flag.name;
    } else {
      EXPECT_NE(man.find(spelled), std::string::npos) << "--" << flag.name;
    }
  }
}

// The completion offers every flag to its commands and every value of an
// enumerated flag ("a|b|c"); tests/install/completion_test.sh drives it in
// bash.
TEST(FlagTableTest, TheBashCompletionOffersEveryFlagAndValue) {
  const std::string script = BashCompletion();
  for (const FlagSpec& flag : Flags()) {
    const std::string word =
        absl::StrCat("--", std::string(flag.name), flag.value.empty() ? "" : "=");
    const bool offered = script.find(absl::StrCat(" ", word, " ")) != std::string::npos ||
                         script.find(absl::StrCat("\"", word, " ")) != std::string::npos ||
                         script.find(absl::StrCat(" ", word, "\"")) != std::string::npos;
    EXPECT_TRUE(offered) << word;
    const std::string value(flag.value);
    if (value.find('|') == std::string::npos) continue;
    std::string words = value;
    std::replace(words.begin(), words.end(), '|', ' ');
    EXPECT_THAT(script, HasSubstr(absl::StrCat("--", std::string(flag.name),
                                               ") words=\"", words, "\"")))
        << flag.name;
  }
  EXPECT_THAT(script, HasSubstr("complete -F _scx_loehle scx_loehle"));
}

TEST(FlagTableTest, EveryFlagIsInTheHelpWithItsValue) {
  const std::string usage = UsageText();
  for (const FlagSpec& flag : Flags()) {
    std::string shown = absl::StrCat("--", std::string(flag.name));
    if (!flag.value.empty()) absl::StrAppend(&shown, "=", std::string(flag.value));
    EXPECT_THAT(usage, HasSubstr(shown));
    EXPECT_FALSE(flag.help.empty()) << flag.name;
    EXPECT_NE(flag.commands, 0u) << flag.name;
  }
  for (absl::string_view line : absl::StrSplit(usage, '\n')) {
    EXPECT_LE(line.size(), 79u) << line;
  }
}

TEST(FlagTableTest, ASettingOutOfRangeIsRefusedAlikeForTheSchedulerAndCtlSet) {
  absl::StatusOr<Command> run = Parse({"--slice-us=10"});
  absl::StatusOr<Command> set = Parse({"ctl", "set", "--slice-us=10"});
  ASSERT_FALSE(run.ok());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(run.status(), set.status());
  EXPECT_THAT(run.status().message(), HasSubstr("slice_us must be between 50 and"));
  set = Parse({"ctl", "set", "--claim-retries=99"});
  EXPECT_EQ(set.status(), Parse({"--claim-retries=99"}).status());
}

TEST(FlagTableTest, AFlagOfAnotherCommandNamesTheCommand) {
  absl::StatusOr<Command> cmd = Parse({"ctl", "get", "--json"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_THAT(cmd.status().message(), HasSubstr("unknown flag --json for ctl get"));
}

// The help's defaults and ranges are text; they must say what Settings{}
// and the range constants say.
TEST(FlagTableTest, DefaultsAndRangesInTheHelpAreTheSettings) {
  const nlohmann::json defaults = SettingsToJson(Settings{});
  for (const FlagSpec& flag : Flags()) {
    if (flag.commands != (kRunCommand | kCtlSetCommand)) continue;  // a setting
    std::string key(flag.name);
    std::replace(key.begin(), key.end(), '-', '_');
    ASSERT_TRUE(defaults.contains(key)) << key;
    const nlohmann::json& value = defaults[key];
    EXPECT_EQ(std::string(flag.fallback),
              value.is_string() ? value.get<std::string>() : value.dump())
        << flag.name;
  }
  const auto spec = [](std::string_view name) {
    for (const FlagSpec& flag : Flags()) {
      if (flag.name == name) return flag;
    }
    ADD_FAILURE() << "no flag " << name;
    return FlagSpec{};
  };
  EXPECT_THAT(std::string(spec("slice-us").help),
              HasSubstr(absl::StrCat("(", kMinSliceUs, "..", kMaxSliceUs, ")")));
  EXPECT_THAT(std::string(spec("claim-retries").help),
              HasSubstr(absl::StrCat("(0..", kMaxClaimRetries, ")")));
  EXPECT_EQ(spec("socket").fallback, kDefaultSocketPath);
  EXPECT_EQ(spec("keep-generations").fallback, std::to_string(kDefaultKeptGenerations));
  EXPECT_THAT(std::string(spec("keep-generations").help),
              HasSubstr(absl::StrCat("(1..", kMaxKeptGenerations, ")")));
  EXPECT_EQ(spec("scx-stats-socket").fallback, kScxStatsSocketPath);
}

// Each setting's man-page entry states its default.
TEST(FlagTableTest, TheManPageStatesEachSettingsDefault) {
  std::ifstream in(std::string(LOEHLE_SOURCE_DIR) + "/Documentation/scx_loehle.8");
  std::stringstream text;
  text << in.rdbuf();
  const std::string man = text.str();
  for (const FlagSpec& flag : Flags()) {
    if (flag.commands != (kRunCommand | kCtlSetCommand)) continue;  // a setting
    const size_t entry = man.find("\n.BR " + ManSpelling(flag.name) + " ");
    ASSERT_NE(entry, std::string::npos) << flag.name;
    const std::string body = man.substr(entry, man.find("\n.TP", entry + 1) - entry);
    std::string fallback;
    for (char c : flag.fallback) {
      if (c == '-') fallback += "\\";
      fallback += c;
    }
    EXPECT_THAT(body, HasSubstr("Default")) << flag.name;
    EXPECT_THAT(body, HasSubstr(fallback)) << flag.name;
  }
}

TEST(CliTest, KeepGenerationsIsBounded) {
  absl::StatusOr<Command> cmd = Parse({"--keep-generations=8"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->daemon.keep_generations, 8u);
  EXPECT_EQ(Parse({})->daemon.keep_generations, kDefaultKeptGenerations);
  EXPECT_THAT(Parse({"--keep-generations=0"}).status().message(),
              HasSubstr("between 1 and 4096, got 0"));
  EXPECT_FALSE(Parse({"--keep-generations=5000"}).ok());
  EXPECT_FALSE(Parse({"ctl", "set", "--keep-generations=8"}).ok());
}

}  // namespace
}  // namespace loehle

namespace loehle {
namespace {

TEST(SimCommandLineTest, ParsesASweep) {
  absl::StatusOr<Command> cmd =
      ParseCommandLine({"sim", "--topology=xeon-64", "--workload=schedidle",
                        "--sched-idle-modes=mainline,wakee-aware", "--workers", "1,16,128",
                        "--reps=3", "--seed=9", "--sim-seconds=2.5", "--out=r.json",
                        "--markdown=r.md", "--claim-retries=2", "--quiet"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->kind, Command::Kind::kSim);
  EXPECT_EQ(cmd->sim.topology, "xeon-64");
  EXPECT_EQ(cmd->sim.workload, "schedidle");
  EXPECT_EQ(cmd->sim.sched_idle_modes,
            (std::vector<uint32_t>{LOEHLE_SI_MAINLINE, LOEHLE_SI_WAKEE_AWARE}));
  EXPECT_EQ(cmd->sim.sizes, (std::vector<uint32_t>{1, 16, 128}));
  EXPECT_EQ(cmd->sim.reps, 3u);
  EXPECT_EQ(cmd->sim.seed, 9u);
  EXPECT_DOUBLE_EQ(cmd->sim.sim_seconds, 2.5);
  EXPECT_EQ(cmd->sim.json_out, "r.json");
  EXPECT_EQ(cmd->sim.markdown_out, "r.md");
  EXPECT_EQ(cmd->sim.claim_retries, 2u);
  EXPECT_TRUE(cmd->sim.quiet);
}

TEST(SimCommandLineTest, DefaultsCompareTheSeed000Policies) {
  absl::StatusOr<Command> cmd = ParseCommandLine({"sim"});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->sim.policies, (std::vector<uint32_t>{LOEHLE_POLICY_RECENCY, LOEHLE_POLICY_FIRST,
                                                       LOEHLE_POLICY_RESERVOIR}));
  EXPECT_EQ(cmd->sim.topology, "altra-160");
}

TEST(SimCommandLineTest, BadValuesGetOneLine) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  } cases[] = {
      {{"sim", "--policies=builtin"}, "--policies: builtin is the kernel's own selection"},
      {{"sim", "--policies=reservoir,"}, "--policies takes a comma-separated list"},
      {{"sim", "--workload=hackbench"}, "unknown workload \"hackbench\""},
      {{"sim", "--forkers=1,x"}, "sizes are counts in 0..4096"},
      {{"sim", "--forkers=0"}, "needs at least 1 creator"},
      {{"sim", "--fork-max=0"}, "--fork-max must be between 1 and 64"},
      {{"sim", "--sim-seconds=0"}, "--sim-seconds takes simulated seconds"},
      {{"sim", "--claim-retries=99"}, "--claim-retries must be between 0 and 16"},
      {{"sim", "--slice-us=100"}, "unknown flag --slice-us for sim"},
      {{"--policies=first"}, "unknown flag --policies"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Command> cmd = ParseCommandLine(c.args);
    ASSERT_FALSE(cmd.ok()) << c.args.back();
    EXPECT_THAT(std::string(cmd.status().message()), ::testing::HasSubstr(c.message))
        << c.args.back();
  }
}

}  // namespace
}  // namespace loehle
