// The BPF scheduler's read-only tables (its `const volatile` globals in
// scx/loehle.bpf.c), computed from a topology before load. Pure, so that
// what the BPF side will see is unit-tested without a kernel; the skeleton
// owner (bpf/scheduler.h) copies them into the skeleton's rodata.

#ifndef LOEHLE_LOADER_BPF_RODATA_TABLES_H_
#define LOEHLE_LOADER_BPF_RODATA_TABLES_H_

#include <array>
#include <cstdint>

#include "loader/core/topology.h"
#include "loehle/intf.h"

namespace loehle {

struct RodataTables {
  uint32_t nr_cpus = 0;
  uint32_t nr_llcs = 1;   // at least 1, as the BPF side divides by neither
  uint32_t nr_nodes = 1;  // but sizes its loops by them
  bool smt_active = false;
  std::array<loehle_cpu_topo, LOEHLE_MAX_CPUS> topo{};
  loehle_cpu_lists cpu_lists{};
  // Per CPU and idle state. States past the end of a CPU's table count as
  // its deepest known one; a CPU without a table has all zeros (it never
  // publishes a state then: the cpu_idle tracepoint is not attached).
  std::array<std::array<uint64_t, LOEHLE_MAX_IDLE_STATES>, LOEHLE_MAX_CPUS>
      exit_latency_ns{};
};

// `topology` has 1 to LOEHLE_MAX_CPUS CPUs (Scheduler::Start checks).
// topo[cpu].next_sibling is the next CPU of the same core in id order,
// wrapping, itself when alone: the ring the BPF side walks to see whether a
// core has a busy thread.
RodataTables BuildRodataTables(const Topology& topology);

}  // namespace loehle

#endif  // LOEHLE_LOADER_BPF_RODATA_TABLES_H_
