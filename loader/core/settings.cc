#include "loader/core/settings.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

// For error messages: never throws, even for strings that are not UTF-8.
std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Indexed by the enum value; the static_asserts keep them in step with
// intf.h.
constexpr std::array<std::string_view, LOEHLE_NR_POLICIES> kPolicyNames = {
    "builtin", "recency", "first", "reservoir"};
constexpr std::array<std::string_view, LOEHLE_NR_SI_MODES> kSchedIdleNames = {
    "mainline", "wakee-aware", "idle-first", "ignore"};
constexpr std::array<std::string_view, LOEHLE_NR_SMT_MODES> kSmtNames = {
    "off", "idle-core"};
constexpr std::array<std::string_view, LOEHLE_NR_SCOPES> kScopeNames = {
    "task", "cgroup", "hierarchy"};
constexpr std::array<std::string_view, LOEHLE_NR_PATHS> kPathNames = {
    "fork", "wakeup", "sync"};
constexpr std::array<std::string_view, LOEHLE_NR_REASONS> kReasonNames = {
    "prev_idle",    "idle_core",    "smt_sibling",  "idle_cpu",
    "shallowest",   "sched_idle",   "least_loaded", "prev_busy",
    "builtin_idle", "builtin_busy", "claim_gave_up"};

static_assert(LOEHLE_SMT_OFF == 0 && LOEHLE_SMT_IDLE_CORE == 1,
              "kSmtNames is indexed by enum loehle_smt_mode");
static_assert(LOEHLE_SCOPE_TASK == 0 && LOEHLE_SCOPE_CGROUP == 1 &&
                  LOEHLE_SCOPE_HIERARCHY == 2 && LOEHLE_NR_SCOPES == 3,
              "kScopeNames is indexed by enum loehle_si_scope");
static_assert(LOEHLE_NR_POLICIES == 4 && LOEHLE_NR_SI_MODES == 4 &&
                  LOEHLE_NR_PATHS == 3 && LOEHLE_NR_REASONS == 11,
              "a name table above is out of step with loehle/intf.h");

template <size_t N>
std::string_view NameOf(const std::array<std::string_view, N>& names,
                        uint32_t value) {
  return value < N ? names[value] : std::string_view("unknown");
}

// "a", "a or b", "a, b or c".
template <size_t N>
std::string ListAlternatives(const std::array<std::string_view, N>& names) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += (i + 1 == N) ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// `order` lists the table's indices in the order users should read them,
// so that messages show the natural order rather than enum order.
template <size_t N>
absl::StatusOr<uint32_t> ParseName(std::string_view what,
                                   const std::array<std::string_view, N>& names,
                                   const std::array<std::string_view, N>& order,
                                   std::string_view name) {
  for (uint32_t i = 0; i < N; ++i) {
    if (names[i] == name) return i;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown %s \"%s\" (expected %s)", what, name, ListAlternatives(order)));
}

absl::Status CheckRange(std::string_view field, uint64_t value, uint64_t min,
                        uint64_t max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s must be between %d and %d, got %d", field, min, max, value));
}

// Reads a non-negative integer no larger than `max` from a JSON value. The
// bound is checked before narrowing so that 2^32 + 1 is not taken for 1.
absl::StatusOr<uint64_t> JsonUnsigned(std::string_view key,
                                      const nlohmann::json& value,
                                      uint64_t max) {
  uint64_t number = 0;
  if (value.is_number_unsigned()) {
    number = value.get<uint64_t>();
  } else if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    number = static_cast<uint64_t>(value.get<int64_t>());
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("setting \"%s\" must be a non-negative integer, got %s",
                        key, Dump(value)));
  }
  if (number > max) {
    return absl::InvalidArgumentError(
        absl::StrFormat("setting \"%s\" is out of range (at most %d), got %d",
                        key, max, number));
  }
  return number;
}

absl::StatusOr<uint32_t> JsonName(
    std::string_view key, const nlohmann::json& value,
    absl::StatusOr<uint32_t> (*parse)(std::string_view)) {
  if (!value.is_string()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "setting \"%s\" must be a string, got %s", key, Dump(value)));
  }
  absl::StatusOr<uint32_t> parsed = parse(value.get_ref<const std::string&>());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("setting \"%s\": %s", key, parsed.status().message()));
  }
  return parsed;
}

}  // namespace

absl::StatusOr<uint32_t> ParsePolicy(std::string_view name) {
  return ParseName("policy", kPolicyNames, kPolicyNames, name);
}

absl::StatusOr<uint32_t> ParseSchedIdleMode(std::string_view name) {
  return ParseName("SCHED_IDLE mode", kSchedIdleNames, kSchedIdleNames, name);
}

absl::StatusOr<uint32_t> ParseSmtMode(std::string_view name) {
  // The default (idle-core) first, as users see it in --help.
  return ParseName("SMT mode", kSmtNames, {"idle-core", "off"}, name);
}

absl::StatusOr<uint32_t> ParseSchedIdleScope(std::string_view name) {
  // The default (hierarchy) first, as users see it in --help.
  return ParseName("SCHED_IDLE scope", kScopeNames,
                   {"hierarchy", "cgroup", "task"}, name);
}

std::string_view PolicyName(uint32_t policy) {
  return NameOf(kPolicyNames, policy);
}
std::string_view SchedIdleModeName(uint32_t mode) {
  return NameOf(kSchedIdleNames, mode);
}
std::string_view SmtModeName(uint32_t mode) { return NameOf(kSmtNames, mode); }
std::string_view SchedIdleScopeName(uint32_t scope) {
  return NameOf(kScopeNames, scope);
}
std::string_view PathName(uint32_t path) { return NameOf(kPathNames, path); }
std::string_view ReasonName(uint32_t reason) {
  return NameOf(kReasonNames, reason);
}

absl::Status ValidateSettings(const Settings& settings) {
  if (settings.policy >= LOEHLE_NR_POLICIES) {
    return absl::InvalidArgumentError(
        absl::StrFormat("policy must be one of %s, got %d",
                        ListAlternatives(kPolicyNames), settings.policy));
  }
  if (settings.sched_idle >= LOEHLE_NR_SI_MODES) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sched_idle must be one of %s, got %d",
        ListAlternatives(kSchedIdleNames), settings.sched_idle));
  }
  if (settings.smt >= LOEHLE_NR_SMT_MODES) {
    return absl::InvalidArgumentError(
        absl::StrFormat("smt must be one of %s, got %d",
                        ListAlternatives(kSmtNames), settings.smt));
  }
  if (settings.sched_idle_scope >= LOEHLE_NR_SCOPES) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "sched_idle_scope must be one of %s, got %d",
        ListAlternatives(kScopeNames), settings.sched_idle_scope));
  }
  if (absl::Status s =
          CheckRange("slice_us", settings.slice_us, kMinSliceUs, kMaxSliceUs);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRange("claim_retries", settings.claim_retries, 0,
                                  kMaxClaimRetries);
      !s.ok()) {
    return s;
  }
  return CheckRange("sample_every", settings.sample_every, 0, kMaxSampleEvery);
}

nlohmann::json SettingsToJson(const Settings& settings) {
  return nlohmann::json{
      {"policy", std::string(PolicyName(settings.policy))},
      {"sched_idle", std::string(SchedIdleModeName(settings.sched_idle))},
      {"smt", std::string(SmtModeName(settings.smt))},
      {"slice_us", settings.slice_us},
      {"claim_retries", settings.claim_retries},
      {"sample_every", settings.sample_every},
      {"sched_idle_scope",
       std::string(SchedIdleScopeName(settings.sched_idle_scope))},
  };
}

absl::StatusOr<Settings> ApplySettingsJson(const Settings& base,
                                           const nlohmann::json& changes) {
  if (!changes.is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "settings must be a JSON object, got %s", Dump(changes)));
  }
  Settings result = base;
  for (const auto& [key, value] : changes.items()) {
    if (key == "policy") {
      absl::StatusOr<uint32_t> v = JsonName(key, value, ParsePolicy);
      if (!v.ok()) return v.status();
      result.policy = *v;
    } else if (key == "sched_idle") {
      absl::StatusOr<uint32_t> v = JsonName(key, value, ParseSchedIdleMode);
      if (!v.ok()) return v.status();
      result.sched_idle = *v;
    } else if (key == "smt") {
      absl::StatusOr<uint32_t> v = JsonName(key, value, ParseSmtMode);
      if (!v.ok()) return v.status();
      result.smt = *v;
    } else if (key == "sched_idle_scope") {
      absl::StatusOr<uint32_t> v = JsonName(key, value, ParseSchedIdleScope);
      if (!v.ok()) return v.status();
      result.sched_idle_scope = *v;
    } else if (key == "slice_us") {
      absl::StatusOr<uint64_t> v = JsonUnsigned(key, value, UINT64_MAX);
      if (!v.ok()) return v.status();
      result.slice_us = *v;
    } else if (key == "claim_retries") {
      absl::StatusOr<uint64_t> v = JsonUnsigned(key, value, UINT32_MAX);
      if (!v.ok()) return v.status();
      result.claim_retries = static_cast<uint32_t>(*v);
    } else if (key == "sample_every") {
      absl::StatusOr<uint64_t> v = JsonUnsigned(key, value, UINT32_MAX);
      if (!v.ok()) return v.status();
      result.sample_every = static_cast<uint32_t>(*v);
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unknown setting \"%s\" (expected policy, sched_idle, smt, "
          "slice_us, claim_retries, sample_every or sched_idle_scope)",
          key));
    }
  }
  if (absl::Status s = ValidateSettings(result); !s.ok()) return s;
  return result;
}

std::string SettingsLabel(const Settings& settings) {
  return absl::StrFormat("%s/%s/%s/%s", PolicyName(settings.policy),
                         SchedIdleModeName(settings.sched_idle),
                         SmtModeName(settings.smt),
                         SchedIdleScopeName(settings.sched_idle_scope));
}

loehle_config ToBpfConfig(const Settings& settings, uint32_t generation) {
  loehle_config config{};
  config.generation = generation;
  config.policy = settings.policy;
  config.sched_idle = settings.sched_idle;
  config.smt = settings.smt;
  config.slice_ns = settings.slice_us * 1000;
  config.claim_retries = settings.claim_retries;
  config.sample_every = settings.sample_every;
  config.sched_idle_scope = settings.sched_idle_scope;
  return config;
}

}  // namespace loehle
