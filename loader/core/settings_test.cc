#include "loader/core/settings.h"

#include <set>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using ::testing::HasSubstr;

TEST(OptionsTest, ParsesEveryPolicyName) {
  EXPECT_EQ(*ParsePolicy("builtin"), LOEHLE_POLICY_BUILTIN);
  EXPECT_EQ(*ParsePolicy("recency"), LOEHLE_POLICY_RECENCY);
  EXPECT_EQ(*ParsePolicy("first"), LOEHLE_POLICY_FIRST);
  EXPECT_EQ(*ParsePolicy("reservoir"), LOEHLE_POLICY_RESERVOIR);
}

TEST(OptionsTest, UnknownPolicyListsAlternatives) {
  absl::StatusOr<uint32_t> policy = ParsePolicy("foo");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(policy.status().message(),
            "unknown policy \"foo\" (expected builtin, recency, first or "
            "reservoir)");
  EXPECT_FALSE(ParsePolicy("").ok());
  EXPECT_FALSE(ParsePolicy("Reservoir").ok());
}

TEST(OptionsTest, ParsesEverySchedIdleMode) {
  EXPECT_EQ(*ParseSchedIdleMode("mainline"), LOEHLE_SI_MAINLINE);
  EXPECT_EQ(*ParseSchedIdleMode("wakee-aware"), LOEHLE_SI_WAKEE_AWARE);
  EXPECT_EQ(*ParseSchedIdleMode("idle-first"), LOEHLE_SI_IDLE_FIRST);
  EXPECT_EQ(*ParseSchedIdleMode("ignore"), LOEHLE_SI_IGNORE);
  EXPECT_EQ(ParseSchedIdleMode("wakee_aware").status().message(),
            "unknown SCHED_IDLE mode \"wakee_aware\" (expected mainline, "
            "wakee-aware, idle-first or ignore)");
}

TEST(OptionsTest, ParsesEverySmtMode) {
  EXPECT_EQ(*ParseSmtMode("idle-core"), LOEHLE_SMT_IDLE_CORE);
  EXPECT_EQ(*ParseSmtMode("off"), LOEHLE_SMT_OFF);
  EXPECT_EQ(ParseSmtMode("on").status().message(),
            "unknown SMT mode \"on\" (expected idle-core or off)");
}

TEST(OptionsTest, NamesRoundTrip) {
  for (uint32_t p = 0; p < LOEHLE_NR_POLICIES; ++p) {
    EXPECT_EQ(*ParsePolicy(PolicyName(p)), p);
  }
  for (uint32_t m = 0; m < LOEHLE_NR_SI_MODES; ++m) {
    EXPECT_EQ(*ParseSchedIdleMode(SchedIdleModeName(m)), m);
  }
  for (uint32_t m = 0; m < LOEHLE_NR_SMT_MODES; ++m) {
    EXPECT_EQ(*ParseSmtMode(SmtModeName(m)), m);
  }
  EXPECT_EQ(PolicyName(LOEHLE_NR_POLICIES), "unknown");
  EXPECT_EQ(SchedIdleModeName(99), "unknown");
  EXPECT_EQ(SmtModeName(2), "unknown");
}

TEST(OptionsTest, PathAndReasonNames) {
  EXPECT_EQ(PathName(LOEHLE_PATH_FORK), "fork");
  EXPECT_EQ(PathName(LOEHLE_PATH_WAKEUP), "wakeup");
  EXPECT_EQ(PathName(LOEHLE_PATH_SYNC), "sync");
  EXPECT_EQ(PathName(LOEHLE_NR_PATHS), "unknown");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_PREV_IDLE), "prev_idle");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_IDLE_CORE), "idle_core");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_SMT_SIBLING), "smt_sibling");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_IDLE_CPU), "idle_cpu");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_SHALLOWEST), "shallowest");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_SCHED_IDLE), "sched_idle");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_LEAST_LOADED), "least_loaded");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_PREV_BUSY), "prev_busy");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_BUILTIN_IDLE), "builtin_idle");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_BUILTIN_BUSY), "builtin_busy");
  EXPECT_EQ(ReasonName(LOEHLE_REASON_CLAIM_GAVE_UP), "claim_gave_up");
  EXPECT_EQ(ReasonName(LOEHLE_NR_REASONS), "unknown");
}

TEST(OptionsTest, DefaultsAreValid) {
  EXPECT_TRUE(ValidateSettings(Settings{}).ok());
}

TEST(OptionsTest, ValidateAcceptsBoundsAndRejectsBeyond) {
  Settings s;
  s.slice_us = 50;
  s.claim_retries = 0;
  s.sample_every = 0;
  EXPECT_TRUE(ValidateSettings(s).ok());
  s.slice_us = 1000000;
  s.claim_retries = 16;
  s.sample_every = 1000000;
  EXPECT_TRUE(ValidateSettings(s).ok());

  Settings bad;
  bad.slice_us = 49;
  EXPECT_EQ(ValidateSettings(bad).message(),
            "slice_us must be between 50 and 1000000, got 49");
  bad.slice_us = 1000001;
  EXPECT_THAT(ValidateSettings(bad).message(), HasSubstr("slice_us"));

  bad = Settings{};
  bad.claim_retries = 17;
  EXPECT_EQ(ValidateSettings(bad).message(),
            "claim_retries must be between 0 and 16, got 17");

  bad = Settings{};
  bad.sample_every = 1000001;
  EXPECT_EQ(ValidateSettings(bad).message(),
            "sample_every must be between 0 and 1000000, got 1000001");
  EXPECT_EQ(ValidateSettings(bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST(OptionsTest, ValidateRejectsEnumsOutOfRange) {
  Settings bad;
  bad.policy = LOEHLE_NR_POLICIES;
  EXPECT_THAT(ValidateSettings(bad).message(), HasSubstr("policy"));
  bad = Settings{};
  bad.sched_idle = LOEHLE_NR_SI_MODES;
  EXPECT_THAT(ValidateSettings(bad).message(), HasSubstr("sched_idle"));
  bad = Settings{};
  bad.smt = LOEHLE_NR_SMT_MODES;
  EXPECT_THAT(ValidateSettings(bad).message(), HasSubstr("smt"));
}

TEST(OptionsTest, SettingsToJsonOfDefaults) {
  EXPECT_EQ(SettingsToJson(Settings{}),
            nlohmann::json::parse(
                R"({"policy":"reservoir","sched_idle":"wakee-aware",
                    "smt":"idle-core","slice_us":5000,"claim_retries":1,
                    "sample_every":64,"sched_idle_scope":"hierarchy"})"));
}

TEST(OptionsTest, ApplySettingsJsonRoundTripsAndAppliesSubsets) {
  Settings other;
  other.policy = LOEHLE_POLICY_FIRST;
  other.sched_idle = LOEHLE_SI_IGNORE;
  other.smt = LOEHLE_SMT_OFF;
  other.slice_us = 20000;
  other.claim_retries = 0;
  other.sample_every = 0;
  absl::StatusOr<Settings> applied =
      ApplySettingsJson(Settings{}, SettingsToJson(other));
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(*applied, other);

  applied = ApplySettingsJson(other, nlohmann::json{{"policy", "recency"}});
  ASSERT_TRUE(applied.ok()) << applied.status();
  Settings expected = other;
  expected.policy = LOEHLE_POLICY_RECENCY;
  EXPECT_EQ(*applied, expected);

  applied = ApplySettingsJson(other, nlohmann::json::object());
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(*applied, other);
}

TEST(OptionsTest, ApplySettingsJsonErrorsNameTheKey) {
  const Settings base;
  auto message = [&](const char* text) {
    absl::StatusOr<Settings> r =
        ApplySettingsJson(base, nlohmann::json::parse(text));
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(std::string(r.status().message()).find('\n'), std::string::npos);
    return std::string(r.status().message());
  };
  EXPECT_EQ(message(R"([1])"), "settings must be a JSON object, got [1]");
  EXPECT_EQ(message(R"({"bogus":1})"),
            "unknown setting \"bogus\" (expected policy, sched_idle, smt, "
            "slice_us, claim_retries, sample_every or sched_idle_scope)");
  EXPECT_EQ(message(R"({"policy":3})"),
            "setting \"policy\" must be a string, got 3");
  EXPECT_EQ(message(R"({"policy":"foo"})"),
            "setting \"policy\": unknown policy \"foo\" (expected builtin, "
            "recency, first or reservoir)");
  EXPECT_THAT(message(R"({"sched_idle":"x"})"), HasSubstr("\"sched_idle\""));
  EXPECT_THAT(message(R"({"smt":true})"), HasSubstr("\"smt\""));
  EXPECT_EQ(
      message(R"({"slice_us":"5000"})"),
      "setting \"slice_us\" must be a non-negative integer, got \"5000\"");
  EXPECT_THAT(message(R"({"slice_us":-1})"), HasSubstr("\"slice_us\""));
  EXPECT_THAT(message(R"({"slice_us":5000.5})"), HasSubstr("\"slice_us\""));
  EXPECT_EQ(message(R"({"slice_us":10})"),
            "slice_us must be between 50 and 1000000, got 10");
  EXPECT_THAT(message(R"({"claim_retries":4294967297})"),
              HasSubstr("\"claim_retries\" is out of range"));
  EXPECT_THAT(message(R"({"claim_retries":17})"), HasSubstr("claim_retries"));
  EXPECT_THAT(message(R"({"sample_every":null})"), HasSubstr("sample_every"));
}

TEST(OptionsTest, SettingsLabel) {
  EXPECT_EQ(SettingsLabel(Settings{}), "reservoir/wakee-aware/idle-core/hierarchy");
  Settings s;
  s.policy = LOEHLE_POLICY_FIRST;
  s.sched_idle = LOEHLE_SI_MAINLINE;
  s.smt = LOEHLE_SMT_OFF;
  EXPECT_EQ(SettingsLabel(s), "first/mainline/off/hierarchy");
}

TEST(OptionsTest, ToBpfConfig) {
  Settings s;
  s.policy = LOEHLE_POLICY_BUILTIN;
  s.sched_idle = LOEHLE_SI_IDLE_FIRST;
  s.smt = LOEHLE_SMT_OFF;
  s.slice_us = 1000000;
  s.claim_retries = 16;
  s.sample_every = 7;
  const loehle_config c = ToBpfConfig(s, 42);
  EXPECT_EQ(c.generation, 42u);
  EXPECT_EQ(c.policy, static_cast<uint32_t>(LOEHLE_POLICY_BUILTIN));
  EXPECT_EQ(c.sched_idle, static_cast<uint32_t>(LOEHLE_SI_IDLE_FIRST));
  EXPECT_EQ(c.smt, static_cast<uint32_t>(LOEHLE_SMT_OFF));
  EXPECT_EQ(c.slice_ns, 1000000000ull);
  EXPECT_EQ(c.claim_retries, 16u);
  EXPECT_EQ(c.sample_every, 7u);
}

}  // namespace
}  // namespace loehle
