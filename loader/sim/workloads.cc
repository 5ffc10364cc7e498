#include "loader/sim/workloads.h"

#include <cstdint>
#include <memory>
#include <random>
#include <vector>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace loehle::sim {
namespace {

using T = WorkloadTimes;

// Durations around their mean, from the workload's own generator.
class Durations {
 public:
  explicit Durations(uint64_t seed) : rng_(seed ^ 0x5eed5eedULL) {}
  // Uniform in [mean/2, mean*3/2] by a multiply-shift of the 64-bit draw:
  // std::uniform_int_distribution's algorithm is the library's, and the
  // committed tables must not depend on the libstdc++ version.
  uint64_t Around(uint64_t mean) {
    const uint64_t range = mean + 1;
    const auto scaled = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(rng_()) * range) >> 64);
    return mean / 2 + scaled;
  }

 private:
  std::mt19937_64 rng_;
};

// Which workload object a task belongs to, by task id (ids are reused).
class Roles {
 public:
  void Set(int task, int role) {
    if (static_cast<size_t>(task) >= roles_.size()) roles_.resize(task + 1, -1);
    roles_[task] = role;
  }
  int Get(int task) const { return roles_[task]; }

 private:
  std::vector<int> roles_;
};

// Staggered starts, as a parent process starting its instances one by one.
constexpr uint64_t kStartStaggerNs = 20'000;

class ForkWorkload : public DrivenWorkload {
 public:
  explicit ForkWorkload(const WorkloadSpec& spec)
      : spec_(spec), times_(spec.seed), creators_(spec.size) {}

  void Start(Machine& m) override {
    for (uint32_t i = 0; i < creators_.size(); ++i) {
      creators_[i].task = m.NewTask(false);
      roles_.Set(creators_[i].task, Creator(i));
      m.Timer(i * kStartStaggerNs, static_cast<int>(i));
    }
  }

  void OnTimer(Machine& m, int i) override {
    m.Wake(creators_[i].task, -1, WakePath::kFork, times_.Around(T::kForkNs));
  }

  void BurstDone(Machine& m, int task) override {
    const int role = roles_.Get(task);
    if (role == kExiting) {
      roles_.Set(task, -1);
      m.Exit(task);
    } else if (IsCreator(role)) {
      CreatorStep(m, creators_[CreatorIndex(role)]);
    } else {
      ChildDone(m, task, creators_[role]);
    }
  }

  WorkloadOutcome outcome() const override { return {children_done_, 0}; }

 private:
  enum class Phase { kForking, kLastFork, kReaping };
  struct CreatorState {
    int task = -1;
    uint32_t forked = 0;
    uint32_t outstanding = 0;
    bool waiting = false;
    Phase phase = Phase::kForking;
  };
  // Creators' roles are negative, children's the creator's index.
  static constexpr int kExiting = -1000000;
  static int Creator(uint32_t i) { return -2 - static_cast<int>(i); }
  static bool IsCreator(int role) { return role <= -2 && role != kExiting; }
  static int CreatorIndex(int role) { return -2 - role; }

  void CreatorStep(Machine& m, CreatorState& c) {
    switch (c.phase) {
      case Phase::kForking: {
        const int child = m.NewTask(false);
        roles_.Set(child, static_cast<int>(&c - creators_.data()));
        const uint64_t select_ns =
            m.Wake(child, m.TaskCpu(c.task), WakePath::kFork, times_.Around(T::kChildNs));
        ++c.outstanding;
        if (++c.forked < spec_.fork_max) {
          m.Continue(c.task, select_ns + times_.Around(T::kForkNs));
        } else {
          c.phase = Phase::kLastFork;
          m.Continue(c.task, select_ns);
        }
        return;
      }
      case Phase::kLastFork:
        if (c.outstanding == 0) {
          c.phase = Phase::kReaping;
          m.Continue(c.task, times_.Around(T::kReapNs));
        } else {
          c.waiting = true;
          m.Block(c.task);
        }
        return;
      case Phase::kReaping:
        c.forked = 0;
        c.phase = Phase::kForking;
        m.Continue(c.task, times_.Around(T::kForkNs));
        return;
    }
  }

  // The child's exit wakes its waiting parent; the select_cpu runs on the
  // child's CPU before it is gone.
  void ChildDone(Machine& m, int child, CreatorState& c) {
    roles_.Set(child, kExiting);
    ++children_done_;
    if (--c.outstanding == 0 && c.waiting) {
      c.waiting = false;
      c.phase = Phase::kReaping;
      m.Continue(child, m.Wake(c.task, m.TaskCpu(child), WakePath::kWakeup,
                               times_.Around(T::kReapNs)));
      return;
    }
    m.Exit(child);
  }

  WorkloadSpec spec_;
  Durations times_;
  Roles roles_;
  std::vector<CreatorState> creators_;
  uint64_t children_done_ = 0;
};

class WakeupWorkload : public DrivenWorkload {
 public:
  explicit WakeupWorkload(const WorkloadSpec& spec)
      : times_(spec.seed), groups_(spec.size) {}

  void Start(Machine& m) override {
    for (uint32_t i = 0; i < groups_.size(); ++i) {
      Group& g = groups_[i];
      g.message = m.NewTask(false);
      roles_.Set(g.message, Message(i));
      for (int& w : g.workers) {
        w = m.NewTask(false);
        roles_.Set(w, static_cast<int>(i));
      }
      g.started = false;
      m.Timer(i * kStartStaggerNs, static_cast<int>(i));
    }
  }

  void OnTimer(Machine& m, int i) override {
    Group& g = groups_[i];
    const bool again = g.started;
    g.started = true;
    m.Wake(g.message, again ? m.TaskCpu(g.message) : -1,
           again ? WakePath::kWakeup : WakePath::kFork, times_.Around(T::kMessageNs));
  }

  // A message thread wakes its workers one per burst (each select_cpu runs
  // on its CPU in turn, its time charged before the next), then sleeps.
  void BurstDone(Machine& m, int task) override {
    const int role = roles_.Get(task);
    if (role <= -2) {
      Group& g = groups_[-2 - role];
      if (g.sent < T::kWorkersPerMessage) {
        if (g.sent == 0) g.outstanding = T::kWorkersPerMessage;
        const uint64_t select_ns = m.Wake(g.workers[g.sent++], m.TaskCpu(task),
                                          WakePath::kWakeup, times_.Around(T::kWorkerNs));
        m.Continue(task, select_ns);
      } else {
        g.sent = 0;
        m.Block(task);
      }
      return;
    }
    ++worker_runs_;
    Group& g = groups_[role];
    if (--g.outstanding == 0) m.Timer(times_.Around(T::kMessageSleepNs), role);
    m.Block(task);
  }

  WorkloadOutcome outcome() const override { return {worker_runs_, 0}; }

 private:
  struct Group {
    int message = -1;
    int workers[T::kWorkersPerMessage] = {};
    uint32_t outstanding = 0;
    uint32_t sent = 0;  // workers woken this round
    bool started = false;
  };
  static int Message(uint32_t i) { return -2 - static_cast<int>(i); }

  Durations times_;
  Roles roles_;
  std::vector<Group> groups_;
  uint64_t worker_runs_ = 0;
};

class SchedIdleWorkload : public DrivenWorkload {
 public:
  explicit SchedIdleWorkload(const WorkloadSpec& spec)
      : spec_(spec), times_(spec.seed), workers_(spec.size) {}

  void Start(Machine& m) override {
    for (uint32_t i = 0; i < workers_.size(); ++i) {
      workers_[i] = m.NewTask(true);
      roles_.Set(workers_[i], Worker(i));
      m.Timer(i * kStartStaggerNs, static_cast<int>(i));
    }
    // The hogs start first, one by one, as a parent starting them would.
    for (uint32_t i = 0; i < spec_.idle_hogs; ++i) {
      hogs_.push_back(m.NewTask(true));
      roles_.Set(hogs_.back(), kHog);
      m.Timer(i * kStartStaggerNs, kHogTimer + static_cast<int>(i));
    }
  }

  void OnTimer(Machine& m, int i) override {
    if (i >= kHogTimer) {
      m.Wake(hogs_[i - kHogTimer], -1, WakePath::kFork, UINT64_MAX / 4);
      return;
    }
    m.Wake(workers_[i], -1, WakePath::kFork, times_.Around(T::kJobForkNs));
  }

  void BurstDone(Machine& m, int task) override {
    const int role = roles_.Get(task);
    if (role == kHog) {
      m.Continue(task, UINT64_MAX / 4);
    } else if (role == kExiting) {
      roles_.Set(task, -1);
      m.Exit(task);
    } else if (role <= -2) {
      WorkerStep(m, task, -2 - role);
    } else {
      JobDone(m, task, role);
    }
  }

  WorkloadOutcome outcome() const override { return {jobs_done_, done_ns_}; }

 private:
  static constexpr int kHog = -1000000;
  static constexpr int kExiting = -1000001;
  static constexpr int kHogTimer = 1 << 20;  // timer tokens of hogs
  static int Worker(uint32_t i) { return -2 - static_cast<int>(i); }

  // A worker's fork burst is done: start its next job, or stop.
  void WorkerStep(Machine& m, int task, int i) {
    if (waiting_.size() <= static_cast<size_t>(i)) waiting_.resize(i + 1, false);
    if (waiting_[i] || jobs_started_ >= T::kJobs) {
      m.Block(task);
      return;
    }
    ++jobs_started_;
    const int job = m.NewTask(true);
    roles_.Set(job, i);
    const uint64_t select_ns =
        m.Wake(job, m.TaskCpu(task), WakePath::kFork, times_.Around(T::kJobNs));
    waiting_[i] = true;
    m.Continue(task, select_ns);
  }

  // The job's exit wakes its worker, the select_cpu on the job's CPU.
  void JobDone(Machine& m, int job, int i) {
    if (++jobs_done_ == T::kJobs) {
      done_ns_ = m.now();
      m.Stop();
    }
    waiting_[i] = false;
    roles_.Set(job, kExiting);
    m.Continue(job, m.Wake(workers_[i], m.TaskCpu(job), WakePath::kWakeup,
                           times_.Around(T::kJobForkNs)));
  }

  WorkloadSpec spec_;
  Durations times_;
  Roles roles_;
  std::vector<int> workers_;
  std::vector<int> hogs_;
  std::vector<bool> waiting_;
  uint32_t jobs_started_ = 0;
  uint64_t jobs_done_ = 0;
  uint64_t done_ns_ = 0;
};

class SmtWorkload : public DrivenWorkload {
 public:
  SmtWorkload(const WorkloadSpec& spec, const SimTopology& topology)
      : times_(spec.seed),
        tasks_(spec.size ? spec.size : static_cast<uint32_t>(topology.nr_cores)) {}

  void Start(Machine& m) override {
    for (uint32_t i = 0; i < tasks_.size(); ++i) {
      tasks_[i] = m.NewTask(false);
      roles_.Set(tasks_[i], static_cast<int>(i));
      m.Timer(i * kStartStaggerNs, static_cast<int>(i));
    }
    started_.assign(tasks_.size(), false);
  }

  void OnTimer(Machine& m, int i) override {
    const bool again = started_[i];
    started_[i] = true;
    m.Wake(tasks_[i], again ? m.TaskCpu(tasks_[i]) : -1,
           again ? WakePath::kWakeup : WakePath::kFork, times_.Around(T::kSmtBurstNs));
  }

  void BurstDone(Machine& m, int task) override {
    ++bursts_;
    m.Timer(times_.Around(T::kSmtSleepNs), roles_.Get(task));
    m.Block(task);
  }

  WorkloadOutcome outcome() const override { return {bursts_, 0}; }

 private:
  Durations times_;
  Roles roles_;
  std::vector<int> tasks_;
  std::vector<bool> started_;
  uint64_t bursts_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DrivenWorkload>> MakeWorkload(const WorkloadSpec& spec,
                                                             const SimTopology& topology) {
  if (spec.kind == "fork") {
    if (spec.size == 0 || spec.fork_max == 0) {
      return absl::InvalidArgumentError("fork needs at least one creator and --fork-max >= 1");
    }
    return std::make_unique<ForkWorkload>(spec);
  }
  if (spec.size == 0 && spec.kind != "smt") {
    return absl::InvalidArgumentError(absl::StrCat(spec.kind, " needs a size of at least 1"));
  }
  if (spec.kind == "wakeup") return std::make_unique<WakeupWorkload>(spec);
  if (spec.kind == "schedidle") return std::make_unique<SchedIdleWorkload>(spec);
  if (spec.kind == "smt") return std::make_unique<SmtWorkload>(spec, topology);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown workload \"", spec.kind, "\" (expected fork, wakeup, schedidle or smt)"));
}

}  // namespace loehle::sim
