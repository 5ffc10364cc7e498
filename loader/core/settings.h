// Names and validated settings of scx_loehle.
//
// One place maps the enums of loehle/intf.h to the words users type and read
// (command line, control socket, statistics), and says which tunable values
// are acceptable. Everything here is pure: no I/O, no global state.

#ifndef LOEHLE_LOADER_CORE_SETTINGS_H_
#define LOEHLE_LOADER_CORE_SETTINGS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {

// The tunables of one configuration generation. Defaults are the settings
// scx_loehle starts with when given no options.
struct Settings {
  uint32_t policy = LOEHLE_POLICY_RESERVOIR;    // enum loehle_policy
  uint32_t sched_idle = LOEHLE_SI_WAKEE_AWARE;  // enum loehle_sched_idle_mode
  uint32_t smt = LOEHLE_SMT_IDLE_CORE;          // enum loehle_smt_mode
  uint64_t slice_us = 5000;
  uint32_t claim_retries = 1;
  uint32_t sample_every = 64;  // 0: no events; 1: every pick
  uint32_t sched_idle_scope = LOEHLE_SCOPE_HIERARCHY;  // enum loehle_si_scope

  friend bool operator==(const Settings&, const Settings&) = default;
};

// Allowed ranges, inclusive; ValidateSettings enforces them.
inline constexpr uint64_t kMinSliceUs = 50;
inline constexpr uint64_t kMaxSliceUs = 1000000;
inline constexpr uint32_t kMaxClaimRetries = 16;
inline constexpr uint32_t kMaxSampleEvery = 1000000;

// Parse user-facing names; matching is exact (lower case). Unknown names give
// InvalidArgument such as
//   unknown policy "foo" (expected builtin, recency, first or reservoir)
absl::StatusOr<uint32_t> ParsePolicy(std::string_view name);
absl::StatusOr<uint32_t> ParseSchedIdleMode(std::string_view name);
absl::StatusOr<uint32_t> ParseSmtMode(std::string_view name);
absl::StatusOr<uint32_t> ParseSchedIdleScope(std::string_view name);

// The inverse mappings. Out-of-range values give "unknown"; the returned
// views point to static storage.
//   PolicyName:        builtin, recency, first, reservoir
//   SchedIdleModeName: mainline, wakee-aware, idle-first, ignore
//   SmtModeName:       off, idle-core
//   SchedIdleScopeName: task, cgroup, hierarchy
//   PathName:          fork, wakeup, sync
//   ReasonName:        prev_idle, idle_core, smt_sibling, idle_cpu,
//                      shallowest, sched_idle, least_loaded, prev_busy,
//                      builtin_idle, builtin_busy, claim_gave_up
std::string_view PolicyName(uint32_t policy);
std::string_view SchedIdleModeName(uint32_t mode);
std::string_view SmtModeName(uint32_t mode);
std::string_view SchedIdleScopeName(uint32_t scope);
std::string_view PathName(uint32_t path);
std::string_view ReasonName(uint32_t reason);

// OK when every enum field is in range and slice_us is in
// [kMinSliceUs, kMaxSliceUs], claim_retries in [0, kMaxClaimRetries] and
// sample_every in [0, kMaxSampleEvery]. Otherwise InvalidArgument naming the
// field and its allowed range, e.g. "slice_us must be between 50 and 1000000,
// got 10".
absl::Status ValidateSettings(const Settings& settings);

// {"policy":"reservoir","sched_idle":"wakee-aware","smt":"idle-core",
//  "slice_us":5000,"claim_retries":1,"sample_every":64,
//  "sched_idle_scope":"hierarchy"}
nlohmann::json SettingsToJson(const Settings& settings);

// Applies a JSON object of changes (the keys of SettingsToJson, any subset)
// on top of `base` and validates the result. Names are strings, numbers are
// non-negative integers. Non-objects, unknown keys, wrong types and bad
// values give InvalidArgument with a one-line message naming the key; `base`
// is never partially applied because it is taken by value.
absl::StatusOr<Settings> ApplySettingsJson(const Settings& base,
                                           const nlohmann::json& changes);

// "<policy>/<sched_idle>/<smt>/<scope>", e.g.
// "reservoir/wakee-aware/idle-core/hierarchy", for SummaryLine and logs.
std::string SettingsLabel(const Settings& settings);

// The BPF view of `settings` for configuration `generation`;
// slice_ns = slice_us * 1000.
loehle_config ToBpfConfig(const Settings& settings, uint32_t generation);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_SETTINGS_H_
