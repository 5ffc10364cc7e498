#include "loader/daemon/stats_collector.h"

#include "loader/core/build_info.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "loader/core/stats.h"
#include "loader/core/stats_snapshot.h"
#include "loader/core/topology.h"
#include "loehle/intf.h"

namespace loehle {

TopologyInfo DescribeTopologyForStats(const Topology& topology) {
  TopologyInfo info;
  for (const CpuTopology& cpu : topology.cpus) {
    info.cpus.push_back({cpu.cpu, cpu.core, cpu.llc, cpu.node, cpu.online});
  }
  info.nr_llcs = topology.nr_llcs;
  info.nr_nodes = topology.nr_nodes;
  info.smt_active = topology.smt_active;
  info.latency_source = topology.latency_source;
  return info;
}

StatsSnapshot CollectStats(const StatsSources& sources, StatsScope scope) {
  StatsSnapshot snapshot;
  snapshot.version = std::string(Version());
  snapshot.git_commit = std::string(GitCommit());
  snapshot.kernel = sources.kernel;
  snapshot.state = sources.state;
  snapshot.ops = sources.ops;
  snapshot.uptime_s = sources.uptime_s;
  snapshot.generation = sources.generation;
  snapshot.topology = DescribeTopologyForStats(*sources.topology);
  snapshot.topology.hotplug_events = sources.hotplug_events;
  snapshot.programs = sources.programs;
  snapshot.idle_state_tracking = sources.idle_state_tracking;
  snapshot.events.received = sources.events_newest_seq;
  snapshot.events.newest_seq = sources.events_newest_seq;
  snapshot.events.capacity = sources.events_capacity;

  if (sources.older != nullptr) snapshot.older = *sources.older;
  snapshot.events.drops_total = snapshot.older.sum.Get(LOEHLE_STAT_EVENT_DROPS);
  const std::vector<int> online = snapshot.topology.OnlineCpus();
  for (const auto& [generation, settings] : *sources.settings_by_generation) {
    if (generation == sources.generation) snapshot.settings = settings;
    absl::StatusOr<GenerationStats> stats = sources.read_generation(generation);
    if (!stats.ok()) continue;
    snapshot.events.drops_total += stats->Get(LOEHLE_STAT_EVENT_DROPS);
    if (scope == StatsScope::kCurrent && generation != sources.generation) {
      continue;
    }
    GenerationSnapshot entry;
    entry.settings = settings;
    entry.derived = Derive(*stats, online);
    entry.stats = *std::move(stats);
    snapshot.generations.push_back(std::move(entry));
  }
  return snapshot;
}

}  // namespace loehle
