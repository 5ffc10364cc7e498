// The machines `scx_loehle sim` models: CPUs with their SMT core, LLC and
// NUMA node, and one table of idle states (exit latency, target residency)
// that every CPU shares.
//
// A topology is written in a small text format, the same for the presets
// and for --topology=FILE:
//
//   # comment to the end of the line; blank lines are ignored
//   name altra-160
//   nodes 2               NUMA nodes
//   llcs-per-node 1
//   cores-per-llc 80
//   threads-per-core 1    1..LOEHLE_MAX_SMT
//   numbering core-major  core-major: a core's threads are adjacent CPU
//                         ids (0,1 | 2,3); thread-major: thread t of core c
//                         is CPU c + t * cores (0,32 | 1,33), as x86 does
//   state WFI 1 1         idle state: name, exit latency and target
//                         residency in microseconds, shallowest first
//
// Every key but `state` appears at most once; `nodes`, `llcs-per-node`,
// `cores-per-llc` are required; no `state` line means no idle-state table
// (every idle CPU stays unpublished, as without a cpuidle driver). Errors
// read "<origin>:<line>: <message>".
#ifndef LOEHLE_LOADER_SIM_SIM_TOPOLOGY_H_
#define LOEHLE_LOADER_SIM_SIM_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace loehle::sim {

struct IdleState {
  std::string name;
  uint64_t exit_latency_ns = 0;
  uint64_t target_residency_ns = 0;
};

struct SimCpu {
  int core = 0;  // dense core index
  int llc = 0;
  int node = 0;
};

struct SimTopology {
  std::string name;
  std::vector<SimCpu> cpus;  // index = CPU id
  int nr_cores = 0;
  int nr_llcs = 0;
  int nr_nodes = 0;
  int threads_per_core = 1;
  std::vector<IdleState> states;  // shallowest first
  std::string source;             // "preset", "host" or the file's path
};

// Parses the format above; `origin` names the text in errors.
absl::StatusOr<SimTopology> ParseSimTopology(std::string_view text,
                                             std::string_view origin);

// The presets, by name, and where their idle-state tables come from
// (Documentation/simulation.md repeats both).
std::vector<std::string> SimTopologyPresets();
std::string_view SimTopologyPresetText(std::string_view name);  // "" if none

// A preset name, "host" (this machine's sysfs: CPUs, cores, LLCs, nodes
// and cpu0's idle states; target residencies, which that reader does not
// take, are assumed to be three exit latencies), or a file in the format
// above.
absl::StatusOr<SimTopology> LoadSimTopology(std::string_view spec);

// "altra-160: 160 CPUs, 160 cores, 2 LLCs, 2 nodes, states WFI(1us) ..."
std::string DescribeSimTopology(const SimTopology& topo);

}  // namespace loehle::sim

#endif  // LOEHLE_LOADER_SIM_SIM_TOPOLOGY_H_
