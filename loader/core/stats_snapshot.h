// The typed form of what the daemon reports: the `stats` reply
// (StatsSnapshot) and the `get`/`set` reply (SchedulerStatus).
//
// The daemon fills these structs and serializes them once; every reader
// (`ctl stats`, `stats --json`, `top`, `trace`, /metrics, the scx_stats
// socket, the --stats summary line) works on the parsed struct, never on
// JSON keys. The JSON layout is documented field by field in
// Documentation/stats.md; ToJson() and the Parse functions are its only
// writer and reader.
//
// Parsing is strict about what it needs and tolerant about what it does
// not know: a missing or mistyped field is DataLoss naming the field (a
// reply from another version of scx_loehle, or not from scx_loehle at
// all); keys it does not know are ignored, and a counter name it does not
// know is skipped, so an older client reads a newer daemon's counters that
// it knows.

#ifndef LOEHLE_LOADER_CORE_STATS_SNAPSHOT_H_
#define LOEHLE_LOADER_CORE_STATS_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loader/core/settings.h"
#include "loader/core/stats.h"
#include "nlohmann/json.hpp"

namespace loehle {

// The `get` reply (and the `set` reply, which is the state after the
// change).
struct SchedulerStatus {
  // The daemon's build (core/build_info.h); empty from a daemon that
  // predates them.
  std::string version;
  std::string git_commit;
  uint32_t generation = 0;
  Settings settings;
  std::string state;  // /sys/kernel/sched_ext/state
  std::string ops;    // /sys/kernel/sched_ext/root/ops
  // The kfunc variants in use (KfuncVariantNames of bpf/scheduler.h).
  std::vector<std::string> kfuncs;

  friend bool operator==(const SchedulerStatus&, const SchedulerStatus&) = default;
};

nlohmann::json ToJson(const SchedulerStatus& status);
absl::StatusOr<SchedulerStatus> ParseSchedulerStatus(const nlohmann::json& json);

struct CpuInfo {
  int cpu = 0;
  int core = 0;  // lowest CPU id of its SMT siblings
  int llc = 0;   // dense index
  int node = 0;  // dense index
  bool online = false;

  friend bool operator==(const CpuInfo&, const CpuInfo&) = default;
};

struct TopologyInfo {
  std::vector<CpuInfo> cpus;  // one per possible CPU, in id order
  int nr_llcs = 0;
  int nr_nodes = 0;
  bool smt_active = false;
  std::string latency_source;  // "sysfs", "file:<path>", "none"
  // CPUs that went offline or came online since the scheduler attached,
  // followed without a reload (cpus[].online shows the result). Absent
  // from an older daemon's reply: 0.
  uint64_t hotplug_events = 0;

  std::vector<int> OnlineCpus() const;

  friend bool operator==(const TopologyInfo&, const TopologyInfo&) = default;
};

// The daemon's pick-event ring; not per generation.
struct EventsInfo {
  uint64_t received = 0;    // drained from the BPF ring buffer since start
  uint64_t newest_seq = 0;  // = received; the first event is 1
  uint64_t drops_total = 0; // event_drops over every generation
  uint64_t capacity = 0;

  friend bool operator==(const EventsInfo&, const EventsInfo&) = default;
};

// One BPF program's cost from the kernel's run-time statistics.
struct ProgramStats {
  std::string name;  // callback without the loehle_ prefix
  uint64_t run_count = 0;
  uint64_t run_time_ns = 0;

  friend bool operator==(const ProgramStats&, const ProgramStats&) = default;
};

struct GenerationSnapshot {
  Settings settings;
  GenerationStats stats;  // generation number, counters, fork picks
  Derived derived;        // Derive(stats, online CPUs)

  uint32_t generation() const { return stats.generation; }
};

struct StatsSnapshot {
  std::string version;     // the daemon's build, as in SchedulerStatus
  std::string git_commit;
  std::string kernel;  // uname -r
  std::string state;
  std::string ops;
  double uptime_s = 0;  // since the daemon started
  uint32_t generation = 0;
  Settings settings;    // the current generation's
  TopologyInfo topology;
  EventsInfo events;
  std::vector<ProgramStats> programs;
  bool idle_state_tracking = false;
  // Oldest first; with StatsScope::kCurrent only the current one.
  std::vector<GenerationSnapshot> generations;
  // The generations no longer kept one by one (--keep-generations), summed;
  // in both scopes. Absent from a reply (an older daemon): count 0.
  FoldedGenerations older;

  // The entry of `generation`, or nullptr.
  const GenerationSnapshot* Find(uint32_t generation) const;
  const GenerationSnapshot* Current() const { return Find(generation); }
};

nlohmann::json ToJson(const StatsSnapshot& snapshot);
absl::StatusOr<StatsSnapshot> ParseStatsSnapshot(const nlohmann::json& json);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_STATS_SNAPSHOT_H_
