// The loaded scx_loehle BPF scheduler: one object owns the skeleton, the
// struct_ops link and the kernel's BPF run-time statistics for as long as
// the scheduler is attached. Destroying it detaches the scheduler, and the
// kernel moves every task back to the fair class.
//
// Contract:
// - CheckSchedExtAvailable() explains, in one line, why this machine cannot
//   run a sched_ext scheduler right now (no sched_ext in the kernel, not
//   root, another scheduler loaded); Start() calls it first.
// - Start() opens, configures (topology, exit-latency table, first
//   generation's settings), loads and attaches. A verifier rejection comes
//   back with the tail of the verifier log.
// - Apply() starts a new configuration generation without detaching; picks
//   made from then on are counted under it.
// - ReadGeneration() sums the per-CPU counters of one generation. The BPF
//   side keeps LOEHLE_GEN_SLOTS generations; Apply() snapshots the one whose
//   slot it is about to recycle, so older generations stay readable, and
//   folds those beyond Options::keep_generations into one running total
//   (core/generation_history.h).
// - ExitInfo() reports the kernel's exit record once the kernel has disabled
//   the scheduler (error, stall, hotplug, sysrq, or our own detach).
// Not thread-safe: one thread drives it.

#ifndef LOEHLE_LOADER_BPF_SCHEDULER_H_
#define LOEHLE_LOADER_BPF_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/bpf/event_reader.h"
#include "loader/core/sched_ext_sysfs.h"
#include "loader/core/generation_history.h"
#include "loader/core/settings.h"
#include "loader/core/stats_snapshot.h"
#include "loader/core/stats.h"
#include "loader/core/topology.h"
#include "loehle/intf.h"

struct loehle_bpf;   // generated skeleton (loehle.skel.h)
struct bpf_link;     // libbpf

namespace loehle {

struct RodataTables;

// The kernel sets this action bit in exit_code when it wants the scheduler
// reloaded, e.g. after CPU hotplug (SCX_ECODE_ACT_RESTART).
inline constexpr uint64_t kExitActionRestart = 1ULL << 48;

struct ExitRecord {
  int64_t kind = 0;  // enum scx_exit_kind
  int64_t exit_code = 0;
  std::string reason;
  std::string message;
  // The kernel's debug dump (error exits only; empty otherwise).
  std::string dump;
  bool WantsRestart() const {
    return (static_cast<uint64_t>(exit_code) & kExitActionRestart) != 0;
  }
  // "runnable task stall (...): <message>" style one-liner.
  std::string Describe() const;
};


// The kfuncs the BPF side calls for the operations that changed between
// 6.18 and 7.x, given the LOEHLE_COMPAT_* flags its init recorded: for each
// pair the new name when the flag is set, else the old one, in the order
// insert, vtime insert, move to local, re-enqueue, vtime write, e.g.
//   scx_bpf_dsq_insert___v2, __scx_bpf_dsq_insert_vtime, ...
// The last entry is "p->scx.dsq_vtime store" without the setter kfunc.
std::vector<std::string> KfuncVariantNames(uint32_t compat_flags);

// Whether the power:cpu_idle tracepoint, which publishes the idle state a
// CPU entered, is attached: only under a policy of ours (builtin reads no
// exit latencies) and only when some CPU has an exit-latency table. Without
// a table there is no cpuidle driver, and the kernel publishes no idle state
// either (rq->idle_state stays NULL: every idle CPU ties at seed 000's
// U64_MAX key); the tracepoint would still fire (from the default idle
// loop) and rank "published, latency 0" above "unpublished", a distinction
// the kernel does not make there, so scx_loehle follows the kernel. With a
// table, even of equal latencies, a published state beats an unpublished
// one as in the kernel, so it stays attached.
// `have_exit_latencies` is HasExitLatencies() of the topology.
bool WantsIdleStateTracking(bool have_exit_latencies, const Settings& settings);

// Whether the scheduler follows CPU hotplug in place (ops.cpu_online and
// ops.cpu_offline). On 6.18 a CPU going offline with the callbacks present
// left its own kthreads unrun (ksoftirqd/3 in an LLC queue, then cpuhp/4
// in its local DSQ on an idle CPU: 30 s stalls, the hotplug hung) where 7.x
// runs them, so there the callbacks are left out and the kernel's restart
// request reloads the scheduler instead (about 1.5 s under TCG). Told
// apart by a kfunc that 7.x has and 6.18 lacks, from the kernel's BTF.
bool KernelFollowsHotplug();

class Scheduler {
 public:
  struct Options {
    Settings settings;
    uint32_t first_generation = 1;
    uint32_t keep_generations = kDefaultKeptGenerations;
    bool verbose = false;
    std::string sysfs_root = "/sys";
  };

  static absl::StatusOr<std::unique_ptr<Scheduler>> Start(
      const Topology& topology, const Options& options);

  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();

  // Starts generation() + 1 with `settings` (validated by the caller).
  absl::Status Apply(const Settings& settings);

  uint32_t generation() const { return generation_; }
  const Settings& settings() const { return history_.settings().at(generation_); }
  // The generations kept one by one, oldest first, with their settings.
  const std::map<uint32_t, Settings>& settings_by_generation() const {
    return history_.settings();
  }
  // The older ones, summed.
  const FoldedGenerations& older_generations() const { return history_.older(); }

  // Counters of one kept generation.
  absl::StatusOr<GenerationStats> ReadGeneration(uint32_t generation) const;

  // Set once the kernel has disabled the scheduler.
  std::optional<ExitRecord> Exit() const;

  // Hands every pick event waiting in the ring buffer to `sink`; returns how
  // many there were.
  absl::StatusOr<int> ConsumeEvents(
      std::function<void(const loehle_pick_event&)> sink);

  // Readable when the BPF side asks for its events to be read now (the ring
  // is half full: loehle_events_wakeup_due()); poll it beside the timer.
  int events_wait_fd() const;

  // Run count and time of each callback since attach.
  std::vector<ProgramStats> ProgramCosts() const;

  int nr_cpus() const { return nr_cpus_; }

  // CPU hotplug as the BPF side followed it (ops.cpu_online/cpu_offline):
  // the callbacks run since attach, and per CPU id whether its scans may
  // offer the CPU now.
  struct OnlineCpus {
    uint64_t hotplug_events = 0;
    std::vector<bool> online;
  };
  OnlineCpus Online() const;

  // How long Start() took to load (the verifier, mostly) and to attach
  // (the kernel's enable: every task moves to sched_ext), in seconds.
  struct StartTiming {
    double load_s = 0;
    double attach_s = 0;
  };
  const StartTiming& start_timing() const { return start_timing_; }

  // LOEHLE_COMPAT_* of the running kernel, recorded by the BPF init.
  uint32_t compat_flags() const;

  // Whether the cpu_idle tracepoint is attached now (WantsIdleStateTracking
  // of the active settings; Start() and Apply() attach or detach it).
  bool idle_state_tracking() const { return idle_state_link_ != nullptr; }

  // KernelFollowsHotplug() at Start().
  bool follows_hotplug() const { return follows_hotplug_; }

 private:
  Scheduler() = default;
  absl::StatusOr<GenerationStats> ReadLiveGeneration(uint32_t generation) const;
  void WriteConfig(const Settings& settings, uint32_t generation);
  // Opens the skeleton and fills what it needs before load.
  absl::Status Open(const Topology& topology, const Options& options);
  void CopyRodata(const RodataTables& tables);
  absl::Status AttachIdleStateTrackingFor(const Settings& settings);
  void DetachIdleStateTrackingUnless(const Settings& settings);

  struct loehle_bpf* skel_ = nullptr;
  std::unique_ptr<EventReader> events_;
  struct bpf_link* idle_state_link_ = nullptr;  // the cpu_idle tracepoint
  bool has_exit_latencies_ = false;
  bool follows_hotplug_ = false;
  int run_time_stats_fd_ = -1;
  int nr_cpus_ = 0;
  int nr_possible_ = 0;
  uint32_t generation_ = 0;
  uint32_t first_generation_ = 0;
  StartTiming start_timing_;
  GenerationHistory history_{kDefaultKeptGenerations};
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_BPF_SCHEDULER_H_
