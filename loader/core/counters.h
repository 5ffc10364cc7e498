// The BPF side's counters (enum loehle_stat, include/loehle/intf.h): their
// names, what each one counts and in which unit. This table is the schema
// every reader shares: the stats snapshot's JSON keys, the scx_stats
// protocol's stats_meta, /metrics' HELP lines and `--help-stats` all come
// from it, and a unit test checks that Documentation/stats.md documents
// exactly these names.

#ifndef LOEHLE_LOADER_CORE_COUNTERS_H_
#define LOEHLE_LOADER_CORE_COUNTERS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "loehle/intf.h"

namespace loehle {

// Monotonic counts (Prometheus "counter") or values that go up and down.
enum class StatKind { kCounter, kGauge };

struct CounterInfo {
  std::string name;         // JSON key, e.g. "claim_failures"
  std::string description;  // one line
  std::string unit;         // what one increment is: "calls", "cpus", ...
  StatKind kind = StatKind::kCounter;
  // Every enum loehle_stat counter is kept per configuration generation;
  // the daemon's own figures (events received, drops over all generations)
  // are not.
  bool per_generation = true;
};

// The name of every enum loehle_stat index, as used for JSON keys:
//   select_<path>, pick_<reason>, tie_hist_<lo>_<hi> (tie_hist_1 for the
//   first bucket, tie_hist_<lo>_up for the last), then the scalar counters
//   candidates, unpublished_seen, examined, ... event_drops.
// Indices >= LOEHLE_NR_STATS give "stat_<index>".
std::string StatName(uint32_t index);

// The size range of tie-histogram bucket `bucket`: "1", "2<sep>3", ...,
// "512<sep>up" (the last bucket is open-ended): the suffix of its
// counter's name with '_', a label of /metrics, a word of `top`.
std::string TieBucketLabel(uint32_t bucket, char separator);

// Metadata of enum loehle_stat index `index` (< LOEHLE_NR_STATS).
CounterInfo CounterInfoFor(uint32_t index);

// enum loehle_stat indices of the ranged counters. C++20 deprecates
// arithmetic between two enumeration types (LOEHLE_STAT_PICK +
// LOEHLE_REASON_...), so C++ code computes them here.
constexpr uint32_t SelectStat(uint32_t path) {
  return uint32_t{LOEHLE_STAT_SELECT} + path;
}
constexpr uint32_t PickStat(uint32_t reason) {
  return uint32_t{LOEHLE_STAT_PICK} + reason;
}
constexpr uint32_t TieHistStat(uint32_t bucket) {
  return uint32_t{LOEHLE_STAT_TIE_HIST} + bucket;
}

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_COUNTERS_H_
