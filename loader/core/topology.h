// The machine's CPU topology and idle-state exit latencies, as scx_loehle's
// BPF program needs them (struct loehle_cpu_topo and the exit-latency table
// of loehle/intf.h).
//
// Everything is read from a sysfs tree whose root is a parameter, so that
// tests can build fake trees in a temporary directory.

#ifndef LOEHLE_LOADER_CORE_TOPOLOGY_H_
#define LOEHLE_LOADER_CORE_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loehle/intf.h"

namespace loehle {

struct CpuTopology {
  int cpu = 0;
  int core = 0;  // lowest CPU id among its SMT siblings
  int llc = 0;   // dense LLC index
  int node = 0;  // dense NUMA node index
  bool online = false;
};

struct Topology {
  std::vector<CpuTopology> cpus;  // index = cpu id, size = possible CPUs
  int nr_llcs = 0;
  int nr_nodes = 0;
  bool smt_active = false;  // some core has more than one online thread
  // [cpu][idle state index] in nanoseconds; may be empty for any CPU.
  std::vector<std::vector<uint64_t>> exit_latency_ns;
  std::string latency_source;  // "sysfs", "file:<path>" or "none"
  // The kernel's CPU hotplug sequence number when the topology was read
  // (/sys/kernel/sched_ext/hotplug_seq; 0 when absent). Given to the
  // scheduler, it makes the kernel refuse or restart a scheduler whose
  // topology went stale before it attached.
  uint64_t hotplug_seq = 0;
};

// Parses a kernel cpulist such as "0-7" or "0,2-5" (whitespace around it,
// such as sysfs's trailing newline, is ignored; "" is the empty list).
// Returns the CPU ids sorted and without duplicates. The kernel's stride
// syntax ("0-7:2/4") is not accepted; sysfs never prints it. Ids are limited
// to 0..65535 so that a typo cannot expand into a huge list.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// Reads the topology under `sysfs_root` (normally "/sys"):
// - hotplug_seq from kernel/sched_ext/hotplug_seq, first, so that a hotplug
//   while the rest is read shows as a newer sequence number.
// - Possible CPUs from devices/system/cpu/possible (required; more than
//   LOEHLE_MAX_CPUS is an error); online CPUs from devices/system/cpu/online
//   (when absent, every possible CPU counts as online).
// - core: the lowest id in cpuN/topology/thread_siblings_list, else
//   core_cpus_list, else the CPU itself.
// - llc: dense index, in order of the lowest CPU, of the distinct
//   cpuN/cache/indexK/shared_cpu_list of the highest `level` among the
//   Unified or Data caches. Online CPUs without cache information share one
//   LLC per node; offline CPUs without it get LLC 0.
// - node: dense index, in node-number order, of the
//   devices/system/node/nodeN directories whose cpulist is not empty
//   (memory-only nodes take no index); CPUs in no node, or no node
//   directory at all, give node 0.
// - exit_latency_ns[cpu][K] from cpuN/cpuidle/stateK/latency (microseconds)
//   for K = 0, 1, ... while the directory exists, at most
//   LOEHLE_MAX_IDLE_STATES; latency_source is "sysfs" when any CPU has one,
//   else "none".
// nr_llcs and nr_nodes are checked against LOEHLE_MAX_LLCS and
// LOEHLE_MAX_NODES. Errors name the offending file.
absl::StatusOr<Topology> ReadTopology(const std::string& sysfs_root = "/sys");

// Replaces topo->exit_latency_ns with the contents of an idle-latency file
// and sets latency_source to "file:<path>". On error *topo is unchanged.
//
// File format: text lines; "#" starts a comment that runs to the end of the
// line; blank lines are ignored. Every other line is
//   <cpus> <state>=<latency_us> [<state>=<latency_us> ...]
// where <cpus> is "*" (every possible CPU) or a cpulist ("0-3,6"), <state>
// is an idle-state index below LOEHLE_MAX_IDLE_STATES and <latency_us> the
// state's exit latency in microseconds (a non-negative integer). Fields are
// separated by spaces or tabs. Later lines override earlier ones for the
// same CPU and state. For each CPU, the states given must be 0..n-1 without
// gaps; CPUs the file does not mention have no latencies. Example, where
// CPU 2's state 1 is shallower than everyone else's:
//   * 0=0 1=100
//   2 1=10
// Errors read "<path>:<line>: <message>" (bad cpulist, cpu beyond the
// possible CPUs, state >= LOEHLE_MAX_IDLE_STATES, bad number, missing
// assignment), or "<path>: cpu N has state K but not state J" for gaps.
absl::Status ApplyIdleLatencyFile(const std::string& path, Topology* topo);

// The CPU lists the BPF scans walk (struct loehle_cpu_lists): every CPU of
// `topo` exactly once in llc_cpus, grouped by LLC in LLC order, and once in
// node_cpus, grouped by node, ascending ids within each group; start and
// len give each group's run and llc_pos each CPU's index in its LLC's run.
// Groups with no CPU have len 0. Entries past the CPUs are zero.
loehle_cpu_lists BuildCpuLists(const Topology& topo);

// Whether any CPU has an exit-latency table (from sysfs or a file).
bool HasExitLatencies(const Topology& topo);

// A CPU whose online state changed, as FollowOnlineCpus reports it.
struct OnlineChange {
  int cpu = 0;
  bool online = false;  // its new state
};

// Sets the online flag of each CPU of `topology` from `online` (indexed by
// CPU id; CPUs past its end count as offline) and returns the CPUs whose
// flag changed, in id order. Everything else of the topology, smt_active
// included, stays as it was read: it describes what the scheduler loaded.
std::vector<OnlineChange> FollowOnlineCpus(const std::vector<bool>& online,
                                           Topology* topology);

// One line for the startup log, e.g.
//   "8 CPUs, 4 cores (SMT on), 2 LLCs, 2 nodes, exit latencies from sysfs"
// Counts are of online CPUs; offline CPUs add "(N offline)" after the CPU
// count. The latency part is "exit latencies from sysfs",
// "exit latencies from <path>" or "no exit latencies".
std::string DescribeTopology(const Topology& topo);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_TOPOLOGY_H_
