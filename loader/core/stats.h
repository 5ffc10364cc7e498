// Statistics arithmetic for scx_loehle: summing the BPF side's per-CPU
// counters, differences between two readings, derived figures, and their
// JSON and one-line renderings. Pure functions; reading the maps is the
// scheduler's business.

#ifndef LOEHLE_LOADER_CORE_STATS_H_
#define LOEHLE_LOADER_CORE_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {

// The counters of one configuration generation, summed over CPUs.
struct GenerationStats {
  uint32_t generation = 0;
  std::array<uint64_t, LOEHLE_NR_STATS> counters{};  // by enum loehle_stat
  // Fork placements per target CPU (index = cpu id). struct loehle_stats
  // does not carry them, so SumCpus leaves this empty and the caller fills
  // it from wherever the BPF side counts fork targets.
  std::vector<uint64_t> fork_picks;

  // counters[index], or 0 when index >= LOEHLE_NR_STATS.
  uint64_t Get(uint32_t index) const;

  friend bool operator==(const GenerationStats&, const GenerationStats&) = default;
};

// Sums the per-CPU slots that hold `generation`; slots holding another
// generation (a slot not yet reused, or already reused by a newer one) are
// ignored.
GenerationStats SumCpus(absl::Span<const loehle_stats> per_cpu,
                        uint32_t generation);

// Generations no longer kept one by one, summed (core/generation_history.h).
struct FoldedGenerations {
  uint32_t count = 0;  // how many
  uint32_t first = 0;  // the oldest and newest of them; 0 when count is 0
  uint32_t last = 0;
  GenerationStats sum;  // generation 0; fork_picks as long as the longest

  friend bool operator==(const FoldedGenerations&, const FoldedGenerations&) = default;
};

// Adds one generation's counters and fork picks to `folded`.
void FoldInto(FoldedGenerations* folded, const GenerationStats& stats);

struct Derived {
  uint64_t selects = 0;  // sum of select_<path>
  uint64_t picks = 0;    // sum of pick_<reason>
  uint64_t claim_attempts = 0;
  uint64_t claim_failures = 0;
  double claim_failure_rate = 0;  // failures / attempts; 0 without attempts
  // Over the CPUs in scope, each counted with fork_picks[cpu] (0 when
  // fork_picks is shorter), all 0 when the scope is empty or saw no forks:
  double fork_spread_cv = 0;   // population standard deviation / mean
  double fork_chi_square = 0;  // sum (observed - mean)^2 / mean, i.e.
                               // against uniform; n - 1 degrees of freedom
  uint64_t fork_max = 0;
  uint64_t fork_min = 0;
};

// `cpus_in_scope` are the CPUs forks could go to (normally the online
// CPUs); negative ids are skipped.
Derived Derive(const GenerationStats& stats,
               absl::Span<const int> cpus_in_scope);

// now - before, counter by counter, saturating at 0 (a counter that went
// backwards gives 0). When the generations differ, `before` belongs to an
// earlier configuration whose counters live in another slot, so `now` is
// returned unchanged.
GenerationStats Delta(const GenerationStats& now,
                      const GenerationStats& before);

// {"select_fork":..., ... every StatName(i) ...}
nlohmann::json CountersToJson(const GenerationStats& stats);

// {"generation":N,
//  "counters":{"select_fork":..., ... every StatName(i) ...},
//  "fork_picks":[...],
//  "derived":{"selects":..,"picks":..,"claim_attempts":..,
//             "claim_failures":..,"claim_failure_rate":..,
//             "fork_spread_cv":..,"fork_chi_square":..,"fork_max":..,
//             "fork_min":..}}
nlohmann::json GenerationToJson(const GenerationStats& stats,
                                const Derived& derived);

// One line for --stats N, e.g.
//   gen 3 reservoir/wakee-aware/idle-core | sel 1234/s (fork 12 wake 1200
//   sync 22) | claim fail 0.41% retry 3 | si-preempt 0 pack 0 | busy-sib 5 |
//   ev 20 drop 0
// (one line; wrapped here). `delta` holds the counts of the interval;
// `seconds` is its length (the rate is 0 when it is not positive); only the
// select total is per second, the other figures are counts.
// `settings_label` is normally SettingsLabel() of options.h.
std::string SummaryLine(const GenerationStats& delta, double seconds,
                        std::string_view settings_label);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_STATS_H_
