#include "loader/bpf/rodata_tables.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "loader/core/topology.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

uint32_t NextSibling(const Topology& topology, const CpuTopology& cpu) {
  const size_t n = topology.cpus.size();
  for (size_t step = 1; step < n; ++step) {
    const CpuTopology& other = topology.cpus[(cpu.cpu + step) % n];
    if (other.core == cpu.core) return static_cast<uint32_t>(other.cpu);
  }
  return static_cast<uint32_t>(cpu.cpu);
}

}  // namespace

RodataTables BuildRodataTables(const Topology& topology) {
  RodataTables tables;
  tables.cpu_lists = BuildCpuLists(topology);
  tables.nr_cpus = static_cast<uint32_t>(topology.cpus.size());
  tables.nr_llcs = static_cast<uint32_t>(std::max(1, topology.nr_llcs));
  tables.nr_nodes = static_cast<uint32_t>(std::max(1, topology.nr_nodes));
  tables.smt_active = topology.smt_active;
  for (const CpuTopology& cpu : topology.cpus) {
    loehle_cpu_topo& topo = tables.topo[cpu.cpu];
    topo.core = static_cast<uint32_t>(cpu.core);
    topo.llc = static_cast<uint32_t>(cpu.llc);
    topo.node = static_cast<uint32_t>(cpu.node);
    topo.online = cpu.online;
    topo.next_sibling = NextSibling(topology, cpu);

    // States past a CPU's table are its deepest known one. A CPU with no
    // table at all (missing from a partial --idle-latency-file, or without
    // cpuidle in sysfs) is the deepest there is, in every state: seed 000
    // counts an idle CPU whose exit latency is unknown as the deepest
    // (U64_MAX, the key of an unpublished state), a fallback only; a 0
    // here made such CPUs win every pick once they published a state.
    const std::vector<uint64_t>* table =
        static_cast<size_t>(cpu.cpu) < topology.exit_latency_ns.size()
            ? &topology.exit_latency_ns[cpu.cpu]
            : nullptr;
    uint64_t deepest = LOEHLE_U64_MAX;
    for (int state = 0; state < LOEHLE_MAX_IDLE_STATES; ++state) {
      if (table != nullptr && static_cast<size_t>(state) < table->size()) {
        deepest = (*table)[state];
      }
      tables.exit_latency_ns[cpu.cpu][state] = deepest;
    }
  }
  return tables;
}

}  // namespace loehle
