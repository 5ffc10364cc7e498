#include "loader/core/scx_stats_schema.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loader/core/counters.h"
#include "loader/core/daemon_options.h"
#include "loader/core/settings.h"
#include "loader/core/stats_snapshot.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

struct Field {
  std::string name;
  std::string datum;  // "u64", "float", "string"
  std::string description;
  std::string unit;   // "" for strings
  StatKind kind = StatKind::kGauge;
  bool per_generation = true;  // else the daemon's, over every generation
};

// The fields of "Stats", in the order --help-stats lists them: the daemon's
// own first, then every counter of core/counters.h.
std::vector<Field> Fields() {
  using enum StatKind;
  std::vector<Field> fields = {
      {"generation", "u64", "the current configuration generation", "generation",
       kGauge, false},
      {"policy", "string", "the current idle-selection policy", "", kGauge, true},
      {"sched_idle", "string", "the current SCHED_IDLE mode", "", kGauge, true},
      {"smt", "string", "the current SMT mode", "", kGauge, true},
      {"sched_idle_scope", "string",
       "what counts as idle work: task, cgroup or hierarchy", "", kGauge, true},
      {"uptime_s", "float", "seconds since the daemon started", "seconds", kGauge,
       false},
      {"events_received", "u64",
       "pick events the daemon drained from the BPF ring buffer", "events",
       kCounter, false},
      {"event_drops_total", "u64", "pick events the BPF ring buffer dropped",
       "events", kCounter, false},
      {"claim_failure_rate", "float", "claim_failures / claim_attempts", "ratio",
       kGauge, true},
      {"fork_spread_cv", "float",
       "coefficient of variation of fork picks over the online CPUs", "ratio",
       kGauge, true},
  };
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    const CounterInfo info = CounterInfoFor(i);
    fields.push_back({info.name, "u64", info.description, info.unit, info.kind,
                      info.per_generation});
  }
  return fields;
}

const char* KindName(StatKind kind) {
  return kind == StatKind::kCounter ? "counter" : "gauge";
}

// Per-generation fields describe the current generation; the others the
// daemon since it started.
const char* Scope(const Field& field) {
  return field.per_generation ? "current generation" : "daemon";
}

}  // namespace

nlohmann::json ScxStatsTop(const StatsSnapshot& snapshot) {
  const GenerationSnapshot* current = snapshot.Current();
  const GenerationStats empty;
  const GenerationStats& stats = current != nullptr ? current->stats : empty;
  nlohmann::json top = {
      {"generation", snapshot.generation},
      {"policy", std::string(PolicyName(snapshot.settings.policy))},
      {"sched_idle", std::string(SchedIdleModeName(snapshot.settings.sched_idle))},
      {"smt", std::string(SmtModeName(snapshot.settings.smt))},
      {"sched_idle_scope",
       std::string(SchedIdleScopeName(snapshot.settings.sched_idle_scope))},
      {"uptime_s", snapshot.uptime_s},
      {"events_received", snapshot.events.received},
      {"event_drops_total", snapshot.events.drops_total},
      {"claim_failure_rate",
       current != nullptr ? current->derived.claim_failure_rate : 0.0},
      {"fork_spread_cv", current != nullptr ? current->derived.fork_spread_cv : 0.0},
  };
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) top[StatName(i)] = stats.Get(i);
  return top;
}

nlohmann::json ScxStatsMeta() {
  nlohmann::json fields = nlohmann::json::object();
  for (const Field& field : Fields()) {
    // scx_stats' free-form "user" attributes carry what its own
    // attributes do not: kind, unit and scope.
    nlohmann::json user = {{"kind", KindName(field.kind)},
                           {"scope", Scope(field)}};
    if (!field.unit.empty()) user["unit"] = field.unit;
    fields[field.name] = {
        {"datum", field.datum}, {"desc", field.description}, {"user", user}};
  }
  return {{kScxStatsStruct,
           {{"name", kScxStatsStruct},
            {"top", "true"},
            {"desc", "scx_loehle: the current generation and the daemon"},
            {"fields", std::move(fields)}}}};
}

std::string DescribeScxStats() {
  std::string out = absl::StrCat(
      "[", kScxStatsStruct,
      "] scx_loehle: the current generation and the daemon\n"
      "(the \"top\" target of the scx_stats socket, default ",
      kScxStatsSocketPath, ")\n");
  size_t width = 0;
  for (const Field& field : Fields()) width = std::max(width, field.name.size());
  for (const Field& field : Fields()) {
    absl::StrAppendFormat(&out, "  %-*s (%s) : %s [%s%s%s, %s]\n",
                          static_cast<int>(width), field.name, field.datum,
                          field.description, KindName(field.kind),
                          field.unit.empty() ? "" : ", ", field.unit, Scope(field));
  }
  return out;
}

}  // namespace loehle
