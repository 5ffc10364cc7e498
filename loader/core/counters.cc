#include "loader/core/counters.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "loader/core/settings.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

struct ScalarCounter {
  std::string_view name;
  std::string_view unit;
  std::string_view description;
};

// The single counters after the tie histogram, in enum order. The
// descriptions are the one-line form of Documentation/stats.md's table.
constexpr std::array<ScalarCounter, LOEHLE_NR_STATS - LOEHLE_STAT_CANDIDATES>
    kScalarCounters = {{
        {"candidates", "cpus", "sum of the sizes of the counted tie groups"},
        {"unpublished_seen", "cpus",
         "idle candidates of a slow scan whose idle state was not published"},
        {"examined", "cpus", "CPUs whose facts the final scan considered"},
        {"smt_pruned", "cpus",
         "SMT siblings skipped once a sibling was seen busy (seed 002)"},
        {"claim_attempts", "claims", "claims of a chosen idle or sched-idle CPU"},
        {"claim_failures", "claims",
         "claims lost to another CPU between scan and claim (seed 000)"},
        {"claim_retries", "scans", "lost claims followed by a rescan"},
        {"direct_dispatch", "tasks",
         "tasks inserted straight into the chosen CPU's local queue"},
        {"sched_idle_preempt", "tasks",
         "tasks placed or queued to preempt idle work"},
        {"packing", "tasks",
         "SCHED_IDLE wakees put on a sched-idle CPU though an idle CPU was allowed"},
        {"busy_sibling_pick", "picks",
         "won claims of a CPU whose SMT core was not wholly idle"},
        {"enqueue", "calls", "ops.enqueue calls"},
        {"dispatch_local_llc", "tasks", "tasks dispatched from the CPU's own LLC queue"},
        {"dispatch_remote_llc", "tasks", "tasks dispatched from another LLC's queue"},
        {"kick", "kicks", "idle CPUs kicked for a queued task"},
        {"smt_move", "tasks",
         "tasks moved to a whole idle core when their slice ended beside a busy sibling"},
        {"si_claim_lost", "claims",
         "sched-idle claims dropped because normal work started there"},
        {"scan_skipped", "scans",
         "wakeup scans skipped: nothing idle in the LLC"},
        {"cpu_release", "events", "CPUs taken by a higher scheduling class"},
        {"dispatch_idle", "tasks",
         "idle work dispatched because no normal work was in reach"},
        {"idle_turn", "tasks", "idle work dispatched by its allowance"},
        {"sched_idle_refused", "cpus",
         "sched-idle CPUs a wakee-aware scan treated as busy: the wakee may "
         "not preempt what runs there (hierarchy scope)"},
        {"sched_idle_no_preempt", "tasks",
         "wakees put on a sched-idle CPU without preempting its idle work"},
        {"idle_wake_deferred", "tasks",
         "idle work displaced by normal work, queued to wait for its own CPU"},
        {"idle_wake_late", "kicks",
         "idle CPUs woken for displaced idle work that still waited after the delay"},
        {"idle_wake_released", "kicks",
         "idle CPUs woken at once for displaced idle work: a higher class took a CPU of its LLC"},
        {"kick_from_offline", "calls",
         "enqueues and deferred wakes on a CPU already offline: no idle CPU claimed or kicked"},
        {"idle_local_kick", "kicks",
         "CPUs that went idle with a task in their local DSQ and kicked "
         "themselves to run it"},
        {"kthread_preempt", "tasks",
         "per-CPU kthreads that preempted idle work on their CPU"},
        {"idle_overdue", "tasks",
         "idle tasks that had waited 5 s, run by a CPU of their mask ahead "
         "of all other work for a short turn"},
        {"offline_rehomed", "tasks",
         "queued tasks of a CPU going offline (or that only it may run), "
         "handed to the kernel to move on"},
        {"remote_overdue", "tasks",
         "another LLC's normal tasks that waited two slices unserved, run "
         "by this LLC's CPUs ahead of their own work"},
        {"events", "events", "pick events submitted to the ring buffer"},
        {"event_drops", "events", "pick events lost: the ring buffer was full"},
    }};
static_assert(LOEHLE_STAT_EVENT_DROPS - LOEHLE_STAT_CANDIDATES ==
                  kScalarCounters.size() - 1,
              "kScalarCounters is out of step with enum loehle_stat");

// Bucket b counts tie groups of size [2^b, 2^(b+1) - 1]; the last bucket is
// open-ended.
std::string TieBucketRange(uint32_t bucket, std::string_view separator,
                           std::string_view open_end) {
  const uint64_t lo = uint64_t{1} << bucket;
  if (bucket + 1 == LOEHLE_TIE_BUCKETS) return absl::StrCat(lo, std::string(open_end));
  if (bucket == 0) return "1";
  return absl::StrCat(lo, std::string(separator), 2 * lo - 1);
}

}  // namespace

std::string StatName(uint32_t index) {
  if (index < LOEHLE_STAT_PICK) {
    return absl::StrCat("select_", std::string(PathName(index - LOEHLE_STAT_SELECT)));
  }
  if (index < LOEHLE_STAT_TIE_HIST) {
    return absl::StrCat("pick_", std::string(ReasonName(index - LOEHLE_STAT_PICK)));
  }
  if (index < LOEHLE_STAT_CANDIDATES) {
    return absl::StrCat("tie_hist_", TieBucketLabel(index - LOEHLE_STAT_TIE_HIST, '_'));
  }
  if (index < LOEHLE_NR_STATS) {
    return std::string(kScalarCounters[index - LOEHLE_STAT_CANDIDATES].name);
  }
  return absl::StrCat("stat_", index);
}

std::string TieBucketLabel(uint32_t bucket, char separator) {
  const std::string sep(1, separator);
  return TieBucketRange(bucket, sep, sep + "up");
}

CounterInfo CounterInfoFor(uint32_t index) {
  CounterInfo info;
  info.name = StatName(index);
  if (index < LOEHLE_STAT_PICK) {
    info.unit = "calls";
    info.description = absl::StrCat("select_cpu calls on the ",
                                    std::string(PathName(index - LOEHLE_STAT_SELECT)), " path");
  } else if (index < LOEHLE_STAT_TIE_HIST) {
    info.unit = "picks";
    info.description = absl::StrCat("picks that ended with reason ",
                                    std::string(ReasonName(index - LOEHLE_STAT_PICK)));
  } else if (index < LOEHLE_STAT_CANDIDATES) {
    info.unit = "tie groups";
    info.description = absl::StrCat(
        "slow-path tie groups of size ",
        TieBucketRange(index - LOEHLE_STAT_TIE_HIST, "-", " or more"));
  } else if (index < LOEHLE_NR_STATS) {
    const ScalarCounter& scalar = kScalarCounters[index - LOEHLE_STAT_CANDIDATES];
    info.unit = std::string(scalar.unit);
    info.description = std::string(scalar.description);
  }
  return info;
}

}  // namespace loehle
