#include "loader/core/stats_snapshot.h"

#include <cstdint>
#include <limits>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "loader/core/counters.h"
#include "loader/core/settings.h"
#include "loader/core/stats.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using nlohmann::json;

// JSON numbers that are whole and not negative; nlohmann keeps a C++ int
// as a signed number even when it is positive.
bool AsUnsigned(const json& value, uint64_t* out) {
  if (value.is_number_unsigned()) {
    *out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return false;
}

// Reads the fields of one JSON object, remembering the first problem with
// its path ("generations[2].counters"), so that a parser reads every field
// in a row and checks once.
class Fields {
 public:
  Fields(const json& object, std::string where) : where_(std::move(where)) {
    if (object.is_object()) {
      object_ = &object;
    } else {
      Fail(where_, "is not an object");
    }
  }

  bool ok() const { return status_.ok(); }
  bool Has(const char* key) const {
    return object_ != nullptr && object_->contains(key);
  }
  const absl::Status& status() const { return status_; }
  const std::string& where() const { return where_; }

  void Read(const char* key, std::string* out) {
    if (const json* v = Find(key); v != nullptr) {
      if (v->is_string()) {
        *out = v->get<std::string>();
      } else {
        Fail(Path(key), "is not a string");
      }
    }
  }
  void Read(const char* key, bool* out) {
    if (const json* v = Find(key); v != nullptr) {
      if (v->is_boolean()) {
        *out = v->get<bool>();
      } else {
        Fail(Path(key), "is not a boolean");
      }
    }
  }
  void Read(const char* key, double* out) {
    if (const json* v = Find(key); v != nullptr) {
      if (v->is_number()) {
        *out = v->get<double>();
      } else {
        Fail(Path(key), "is not a number");
      }
    }
  }
  void Read(const char* key, uint64_t* out) { ReadUnsigned(key, out); }
  void Read(const char* key, uint32_t* out) { ReadUnsigned(key, out); }
  void Read(const char* key, int* out) { ReadUnsigned(key, out); }

  // The member `key`, checked to be an object or an array; a null json on
  // a problem.
  const json& Object(const char* key) { return Typed(key, json::value_t::object); }
  const json& Array(const char* key) { return Typed(key, json::value_t::array); }

  std::string Path(const std::string& key) const {
    return where_.empty() ? key : absl::StrCat(where_, ".", key);
  }
  void Fail(const std::string& path, const std::string& problem) {
    if (status_.ok()) {
      status_ = absl::DataLossError(
          absl::StrCat("malformed reply: ", path, " ", problem));
    }
  }
  void Take(const absl::Status& status) {
    if (status_.ok() && !status.ok()) status_ = status;
  }

 private:
  template <typename T>
  void ReadUnsigned(const char* key, T* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    uint64_t value = 0;
    if (!AsUnsigned(*v, &value) ||
        value > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      Fail(Path(key), "is not a non-negative integer in range");
      return;
    }
    *out = static_cast<T>(value);
  }

  const json* Find(const char* key) {
    if (object_ == nullptr) return nullptr;
    const auto it = object_->find(key);
    if (it == object_->end()) {
      Fail(Path(key), "is missing");
      return nullptr;
    }
    return &*it;
  }

  const json& Typed(const char* key, json::value_t type) {
    static const json kNull;
    const json* v = Find(key);
    if (v == nullptr) return kNull;
    if (v->type() != type) {
      Fail(Path(key), type == json::value_t::object ? "is not an object"
                                                     : "is not an array");
      return kNull;
    }
    return *v;
  }

  const json* object_ = nullptr;
  std::string where_;
  absl::Status status_;
};

// A setting's name the reply gives, turned back into its enum value.
void ReadName(Fields& fields, const char* key,
              absl::StatusOr<uint32_t> (*parse)(std::string_view), uint32_t* out) {
  std::string name;
  fields.Read(key, &name);
  if (!fields.ok()) return;
  absl::StatusOr<uint32_t> value = parse(name);
  if (!value.ok()) {
    fields.Fail(fields.Path(key), std::string(value.status().message()));
    return;
  }
  *out = *value;
}

// The daemon's build; a daemon from before these keys has none.
void ReadBuild(Fields& fields, std::string* version, std::string* git_commit) {
  if (fields.Has("version")) fields.Read("version", version);
  if (fields.Has("git_commit")) fields.Read("git_commit", git_commit);
}

// Every key SettingsToJson writes must be there; others (a newer daemon's
// settings) are skipped, and ranges are the daemon's to enforce, not the
// reader's.
void ReadSettings(Fields& parent, Settings* out) {
  Fields fields(parent.Object("settings"), parent.Path("settings"));
  if (!parent.ok()) return;
  ReadName(fields, "policy", ParsePolicy, &out->policy);
  ReadName(fields, "sched_idle", ParseSchedIdleMode, &out->sched_idle);
  ReadName(fields, "smt", ParseSmtMode, &out->smt);
  // A daemon from before the scopes knew only the task policy.
  out->sched_idle_scope = LOEHLE_SCOPE_TASK;
  if (fields.Has("sched_idle_scope")) {
    ReadName(fields, "sched_idle_scope", ParseSchedIdleScope,
             &out->sched_idle_scope);
  }
  fields.Read("slice_us", &out->slice_us);
  fields.Read("claim_retries", &out->claim_retries);
  fields.Read("sample_every", &out->sample_every);
  parent.Take(fields.status());
}

json TopologyToJson(const TopologyInfo& topology) {
  json cpus = json::array();
  for (const CpuInfo& cpu : topology.cpus) {
    cpus.push_back({{"cpu", cpu.cpu}, {"core", cpu.core}, {"llc", cpu.llc},
                    {"node", cpu.node}, {"online", cpu.online}});
  }
  return {{"cpus", std::move(cpus)},
          {"nr_llcs", topology.nr_llcs},
          {"nr_nodes", topology.nr_nodes},
          {"smt_active", topology.smt_active},
          {"latency_source", topology.latency_source},
          {"hotplug_events", topology.hotplug_events}};
}

void ReadTopology(Fields& parent, TopologyInfo* out) {
  Fields fields(parent.Object("topology"), parent.Path("topology"));
  if (!parent.ok()) return;
  const json& cpus = fields.Array("cpus");
  fields.Read("nr_llcs", &out->nr_llcs);
  fields.Read("nr_nodes", &out->nr_nodes);
  fields.Read("smt_active", &out->smt_active);
  fields.Read("latency_source", &out->latency_source);
  // Absent from the replies of daemons older than hotplug support: 0.
  if (fields.Has("hotplug_events")) fields.Read("hotplug_events", &out->hotplug_events);
  for (size_t i = 0; fields.ok() && i < cpus.size(); ++i) {
    Fields cpu(cpus[i], absl::StrCat(fields.Path("cpus"), "[", i, "]"));
    CpuInfo info;
    cpu.Read("cpu", &info.cpu);
    cpu.Read("core", &info.core);
    cpu.Read("llc", &info.llc);
    cpu.Read("node", &info.node);
    cpu.Read("online", &info.online);
    fields.Take(cpu.status());
    out->cpus.push_back(info);
  }
  parent.Take(fields.status());
}

json EventsToJson(const EventsInfo& events) {
  return {{"received", events.received},
          {"newest_seq", events.newest_seq},
          {"drops_total", events.drops_total},
          {"capacity", events.capacity}};
}

void ReadEvents(Fields& parent, EventsInfo* out) {
  Fields fields(parent.Object("events"), parent.Path("events"));
  if (!parent.ok()) return;
  fields.Read("received", &out->received);
  fields.Read("newest_seq", &out->newest_seq);
  fields.Read("drops_total", &out->drops_total);
  fields.Read("capacity", &out->capacity);
  parent.Take(fields.status());
}

void ReadPrograms(Fields& parent, std::vector<ProgramStats>* out) {
  const json& programs = parent.Array("programs");
  for (size_t i = 0; parent.ok() && i < programs.size(); ++i) {
    Fields fields(programs[i], absl::StrCat(parent.Path("programs"), "[", i, "]"));
    ProgramStats program;
    fields.Read("name", &program.name);
    fields.Read("run_count", &program.run_count);
    fields.Read("run_time_ns", &program.run_time_ns);
    parent.Take(fields.status());
    out->push_back(std::move(program));
  }
}

json GenerationToJsonWithSettings(const GenerationSnapshot& generation) {
  json entry = GenerationToJson(generation.stats, generation.derived);
  entry["settings"] = SettingsToJson(generation.settings);
  return entry;
}

// Counters this client does not know are skipped; counters it knows but
// the reply lacks (an older daemon) stay 0.
void ReadCounters(Fields& fields, GenerationStats* stats) {
  const json& counters = fields.Object("counters");
  if (!fields.ok()) return;
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    const auto it = counters.find(StatName(i));
    if (it == counters.end()) continue;
    if (!AsUnsigned(*it, &stats->counters[i])) {
      fields.Fail(absl::StrCat(fields.Path("counters"), ".", StatName(i)),
                  "is not a non-negative integer");
      return;
    }
  }
  const json& fork_picks = fields.Array("fork_picks");
  for (const json& picks : fork_picks) {
    uint64_t count = 0;
    if (!AsUnsigned(picks, &count)) {
      fields.Fail(fields.Path("fork_picks"), "holds a value that is not a count");
      return;
    }
    stats->fork_picks.push_back(count);
  }
}

void ReadGenerations(Fields& parent, const std::vector<int>& online,
                     std::vector<GenerationSnapshot>* out) {
  const json& generations = parent.Array("generations");
  for (size_t i = 0; parent.ok() && i < generations.size(); ++i) {
    Fields fields(generations[i],
                  absl::StrCat(parent.Path("generations"), "[", i, "]"));
    GenerationSnapshot generation;
    fields.Read("generation", &generation.stats.generation);
    ReadSettings(fields, &generation.settings);
    ReadCounters(fields, &generation.stats);
    generation.derived = Derive(generation.stats, online);
    parent.Take(fields.status());
    out->push_back(std::move(generation));
  }
}

json OlderToJson(const FoldedGenerations& older) {
  return {{"count", older.count},
          {"first", older.first},
          {"last", older.last},
          {"counters", CountersToJson(older.sum)},
          {"fork_picks", older.sum.fork_picks}};
}

void ReadOlder(Fields& parent, FoldedGenerations* out) {
  if (!parent.Has("older_generations")) return;
  Fields fields(parent.Object("older_generations"), parent.Path("older_generations"));
  if (!parent.ok()) return;
  fields.Read("count", &out->count);
  fields.Read("first", &out->first);
  fields.Read("last", &out->last);
  ReadCounters(fields, &out->sum);
  parent.Take(fields.status());
}

}  // namespace

nlohmann::json ToJson(const SchedulerStatus& status) {
  return {{"version", status.version},
          {"git_commit", status.git_commit},
          {"generation", status.generation},
          {"settings", SettingsToJson(status.settings)},
          {"state", status.state},
          {"ops", status.ops},
          {"kfuncs", status.kfuncs}};
}

absl::StatusOr<SchedulerStatus> ParseSchedulerStatus(const nlohmann::json& json) {
  Fields fields(json, "");
  SchedulerStatus status;
  ReadBuild(fields, &status.version, &status.git_commit);
  fields.Read("generation", &status.generation);
  ReadSettings(fields, &status.settings);
  fields.Read("state", &status.state);
  fields.Read("ops", &status.ops);
  const nlohmann::json& kfuncs = fields.Array("kfuncs");
  for (const nlohmann::json& name : kfuncs) {
    if (!name.is_string()) {
      fields.Fail("kfuncs", "holds a value that is not a string");
      break;
    }
    status.kfuncs.push_back(name.get<std::string>());
  }
  if (!fields.ok()) return fields.status();
  return status;
}

std::vector<int> TopologyInfo::OnlineCpus() const {
  std::vector<int> online;
  for (const CpuInfo& cpu : cpus) {
    if (cpu.online) online.push_back(cpu.cpu);
  }
  return online;
}

const GenerationSnapshot* StatsSnapshot::Find(uint32_t wanted) const {
  for (const GenerationSnapshot& entry : generations) {
    if (entry.generation() == wanted) return &entry;
  }
  return nullptr;
}

nlohmann::json ToJson(const StatsSnapshot& snapshot) {
  nlohmann::json programs = nlohmann::json::array();
  for (const ProgramStats& program : snapshot.programs) {
    programs.push_back({{"name", program.name},
                        {"run_count", program.run_count},
                        {"run_time_ns", program.run_time_ns}});
  }
  nlohmann::json generations = nlohmann::json::array();
  for (const GenerationSnapshot& generation : snapshot.generations) {
    generations.push_back(GenerationToJsonWithSettings(generation));
  }
  return {{"version", snapshot.version},
          {"git_commit", snapshot.git_commit},
          {"kernel", snapshot.kernel},
          {"state", snapshot.state},
          {"ops", snapshot.ops},
          {"uptime_s", snapshot.uptime_s},
          {"generation", snapshot.generation},
          {"settings", SettingsToJson(snapshot.settings)},
          {"topology", TopologyToJson(snapshot.topology)},
          {"events", EventsToJson(snapshot.events)},
          {"programs", std::move(programs)},
          {"idle_state_tracking", snapshot.idle_state_tracking},
          {"generations", std::move(generations)},
          {"older_generations", OlderToJson(snapshot.older)}};
}

absl::StatusOr<StatsSnapshot> ParseStatsSnapshot(const nlohmann::json& json) {
  Fields fields(json, "");
  StatsSnapshot snapshot;
  ReadBuild(fields, &snapshot.version, &snapshot.git_commit);
  fields.Read("kernel", &snapshot.kernel);
  fields.Read("state", &snapshot.state);
  fields.Read("ops", &snapshot.ops);
  fields.Read("uptime_s", &snapshot.uptime_s);
  fields.Read("generation", &snapshot.generation);
  ReadSettings(fields, &snapshot.settings);
  ReadTopology(fields, &snapshot.topology);
  ReadEvents(fields, &snapshot.events);
  ReadPrograms(fields, &snapshot.programs);
  fields.Read("idle_state_tracking", &snapshot.idle_state_tracking);
  ReadGenerations(fields, snapshot.topology.OnlineCpus(), &snapshot.generations);
  ReadOlder(fields, &snapshot.older);
  if (!fields.ok()) return fields.status();
  return snapshot;
}

}  // namespace loehle
