// How the daemon answers `stats`: the facts it gathered from the scheduler
// and sysfs at the request, turned into the typed StatsSnapshot
// (core/stats_snapshot.h) that every reader parses. Pure, so that the reply
// is unit-tested without a kernel.

#ifndef LOEHLE_LOADER_DAEMON_STATS_COLLECTOR_H_
#define LOEHLE_LOADER_DAEMON_STATS_COLLECTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loader/core/settings.h"
#include "loader/core/stats.h"
#include "loader/core/stats_snapshot.h"
#include "loader/core/topology.h"
#include "loader/daemon/control_service.h"

namespace loehle {

struct StatsSources {
  std::string kernel;
  std::string state;
  std::string ops;
  double uptime_s = 0;
  uint32_t generation = 0;  // the current one
  const Topology* topology = nullptr;
  // Every generation this scheduler instance has run, with its settings.
  const std::map<uint32_t, Settings>* settings_by_generation = nullptr;
  // The generations no longer kept one by one, summed.
  const FoldedGenerations* older = nullptr;
  // The counters of one generation; an error leaves it out of the reply.
  std::function<absl::StatusOr<GenerationStats>(uint32_t)> read_generation;
  std::vector<ProgramStats> programs;
  bool idle_state_tracking = false;
  uint64_t hotplug_events = 0;  // Scheduler::Online().hotplug_events
  uint64_t events_newest_seq = 0;
  uint64_t events_capacity = 0;
};

// With kCurrent only the current generation is in `generations`; drops_total
// still sums event_drops over every generation, the folded ones too. Derived figures count the
// online CPUs of the topology.
StatsSnapshot CollectStats(const StatsSources& sources, StatsScope scope);

// The topology as the stats reply shows it.
TopologyInfo DescribeTopologyForStats(const Topology& topology);

}  // namespace loehle

#endif  // LOEHLE_LOADER_DAEMON_STATS_COLLECTOR_H_
