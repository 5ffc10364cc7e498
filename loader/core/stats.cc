#include "loader/core/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "loader/core/counters.h"
#include "loader/core/settings.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

uint64_t SumRange(const GenerationStats& stats, uint32_t first,
                  uint32_t count) {
  uint64_t sum = 0;
  for (uint32_t i = first; i < first + count; ++i) sum += stats.Get(i);
  return sum;
}

}  // namespace

uint64_t GenerationStats::Get(uint32_t index) const {
  return index < counters.size() ? counters[index] : 0;
}

GenerationStats SumCpus(absl::Span<const loehle_stats> per_cpu,
                        uint32_t generation) {
  GenerationStats sum;
  sum.generation = generation;
  for (const loehle_stats& cpu : per_cpu) {
    if (cpu.generation != generation) continue;
    for (size_t i = 0; i < sum.counters.size(); ++i) {
      sum.counters[i] += cpu.counters[i];
    }
  }
  return sum;
}

void FoldInto(FoldedGenerations* folded, const GenerationStats& stats) {
  if (folded->count == 0 || stats.generation < folded->first) {
    folded->first = stats.generation;
  }
  if (stats.generation > folded->last) folded->last = stats.generation;
  ++folded->count;
  folded->sum.generation = 0;
  for (size_t i = 0; i < folded->sum.counters.size(); ++i) {
    folded->sum.counters[i] += stats.counters[i];
  }
  if (folded->sum.fork_picks.size() < stats.fork_picks.size()) {
    folded->sum.fork_picks.resize(stats.fork_picks.size(), 0);
  }
  for (size_t cpu = 0; cpu < stats.fork_picks.size(); ++cpu) {
    folded->sum.fork_picks[cpu] += stats.fork_picks[cpu];
  }
}

Derived Derive(const GenerationStats& stats,
               absl::Span<const int> cpus_in_scope) {
  Derived derived;
  derived.selects = SumRange(stats, SelectStat(0), LOEHLE_NR_PATHS);
  derived.picks = SumRange(stats, PickStat(0), LOEHLE_NR_REASONS);
  derived.claim_attempts = stats.Get(LOEHLE_STAT_CLAIM_ATTEMPTS);
  derived.claim_failures = stats.Get(LOEHLE_STAT_CLAIM_FAILURES);
  if (derived.claim_attempts > 0) {
    derived.claim_failure_rate = static_cast<double>(derived.claim_failures) /
                                 static_cast<double>(derived.claim_attempts);
  }

  std::vector<double> observed;
  observed.reserve(cpus_in_scope.size());
  for (int cpu : cpus_in_scope) {
    if (cpu < 0) continue;
    const size_t index = static_cast<size_t>(cpu);
    const uint64_t picks =
        index < stats.fork_picks.size() ? stats.fork_picks[index] : 0;
    if (observed.empty()) {
      derived.fork_max = derived.fork_min = picks;
    } else {
      derived.fork_max = std::max(derived.fork_max, picks);
      derived.fork_min = std::min(derived.fork_min, picks);
    }
    observed.push_back(static_cast<double>(picks));
  }
  if (observed.empty()) return derived;
  double total = 0;
  for (double x : observed) total += x;
  const double mean = total / static_cast<double>(observed.size());
  if (mean <= 0) return derived;
  double squares = 0;
  for (double x : observed) squares += (x - mean) * (x - mean);
  derived.fork_spread_cv =
      std::sqrt(squares / static_cast<double>(observed.size())) / mean;
  derived.fork_chi_square = squares / mean;
  return derived;
}

GenerationStats Delta(const GenerationStats& now,
                      const GenerationStats& before) {
  if (now.generation != before.generation) return now;
  GenerationStats delta = now;
  for (size_t i = 0; i < delta.counters.size(); ++i) {
    const uint64_t old = before.counters[i];
    delta.counters[i] = delta.counters[i] >= old ? delta.counters[i] - old : 0;
  }
  for (size_t cpu = 0; cpu < delta.fork_picks.size(); ++cpu) {
    const uint64_t old =
        cpu < before.fork_picks.size() ? before.fork_picks[cpu] : 0;
    uint64_t& value = delta.fork_picks[cpu];
    value = value >= old ? value - old : 0;
  }
  return delta;
}

nlohmann::json CountersToJson(const GenerationStats& stats) {
  nlohmann::json counters = nlohmann::json::object();
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    counters[StatName(i)] = stats.Get(i);
  }
  return counters;
}

nlohmann::json GenerationToJson(const GenerationStats& stats,
                                const Derived& derived) {
  return nlohmann::json{
      {"generation", stats.generation},
      {"counters", CountersToJson(stats)},
      {"fork_picks", stats.fork_picks},
      {"derived",
       {
           {"selects", derived.selects},
           {"picks", derived.picks},
           {"claim_attempts", derived.claim_attempts},
           {"claim_failures", derived.claim_failures},
           {"claim_failure_rate", derived.claim_failure_rate},
           {"fork_spread_cv", derived.fork_spread_cv},
           {"fork_chi_square", derived.fork_chi_square},
           {"fork_max", derived.fork_max},
           {"fork_min", derived.fork_min},
       }},
  };
}

std::string SummaryLine(const GenerationStats& delta, double seconds,
                        std::string_view settings_label) {
  const uint64_t selects = SumRange(delta, SelectStat(0), LOEHLE_NR_PATHS);
  const double rate =
      seconds > 0 ? static_cast<double>(selects) / seconds : 0.0;
  const uint64_t attempts = delta.Get(LOEHLE_STAT_CLAIM_ATTEMPTS);
  const double fail_percent =
      attempts > 0
          ? 100.0 * static_cast<double>(delta.Get(LOEHLE_STAT_CLAIM_FAILURES)) /
                static_cast<double>(attempts)
          : 0.0;
  return absl::StrFormat(
      "gen %d %s | sel %.0f/s (fork %d wake %d sync %d) | claim fail %.2f%% "
      "retry %d | si-preempt %d pack %d | busy-sib %d | ev %d drop %d",
      delta.generation, settings_label, rate,
      delta.Get(SelectStat(LOEHLE_PATH_FORK)),
      delta.Get(SelectStat(LOEHLE_PATH_WAKEUP)),
      delta.Get(SelectStat(LOEHLE_PATH_SYNC)), fail_percent,
      delta.Get(LOEHLE_STAT_CLAIM_RETRIES),
      delta.Get(LOEHLE_STAT_SCHED_IDLE_PREEMPT), delta.Get(LOEHLE_STAT_PACKING),
      delta.Get(LOEHLE_STAT_BUSY_SIBLING_PICK), delta.Get(LOEHLE_STAT_EVENTS),
      delta.Get(LOEHLE_STAT_EVENT_DROPS));
}

}  // namespace loehle
