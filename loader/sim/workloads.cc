#include "loader/sim/workloads.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
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

// What a task is to its workload. kLead: a creator, message thread or
// job-starting worker, `index` its slot; kMember: a child, woken worker,
// job or SMT task, `index` its lead's slot (its own for SMT tasks);
// kExiting: its last burst (the wakeup of its parent) is running; kHog: a
// SCHED_IDLE CPU hog.
struct Role {
  enum class Kind : uint8_t { kNone, kLead, kMember, kExiting, kHog };
  Kind kind = Kind::kNone;
  uint32_t index = 0;

  static Role Lead(uint32_t i) { return {Kind::kLead, i}; }
  static Role Member(uint32_t i) { return {Kind::kMember, i}; }
};
constexpr Role kExitingRole = {Role::Kind::kExiting, 0};
constexpr Role kHogRole = {Role::Kind::kHog, 0};

// A burst ended for a task its workload never gave that role: a bug in the
// workload, not a state a run can reach; stop at once rather than
// simulate on with wrong bookkeeping.
[[noreturn]] void UnknownRole(int task) {
  std::fprintf(stderr, "scx_loehle sim: internal error: task %d has no role here\n", task);
  std::abort();
}

// Each task's role, by task id (ids are reused: Clear() on exit).
class Roles {
 public:
  void Set(int task, Role role) {
    if (static_cast<size_t>(task) >= roles_.size()) roles_.resize(task + 1);
    roles_[task] = role;
  }
  void Clear(int task) { roles_[task] = Role{}; }
  Role Get(int task) const { return roles_[task]; }

 private:
  std::vector<Role> roles_;
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
      roles_.Set(creators_[i].task, Role::Lead(i));
      m.Timer(i * kStartStaggerNs, static_cast<int>(i));
    }
  }

  void OnTimer(Machine& m, int i) override {
    m.Wake(creators_[i].task, -1, WakePath::kFork, times_.Around(T::kForkNs));
  }

  void BurstDone(Machine& m, int task) override {
    const Role role = roles_.Get(task);
    switch (role.kind) {
      case Role::Kind::kExiting:
        roles_.Clear(task);
        m.Exit(task);
        return;
      case Role::Kind::kLead:
        CreatorStep(m, creators_[role.index]);
        return;
      case Role::Kind::kMember:
        ChildDone(m, task, creators_[role.index]);
        return;
      case Role::Kind::kNone:
      case Role::Kind::kHog:
        break;
    }
    UnknownRole(task);
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
  void CreatorStep(Machine& m, CreatorState& c) {
    switch (c.phase) {
      case Phase::kForking: {
        const int child = m.NewTask(false);
        roles_.Set(child, Role::Member(static_cast<uint32_t>(&c - creators_.data())));
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
    roles_.Set(child, kExitingRole);
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
      roles_.Set(g.message, Role::Lead(i));
      for (int& w : g.workers) {
        w = m.NewTask(false);
        roles_.Set(w, Role::Member(i));
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
    const Role role = roles_.Get(task);
    if (role.kind == Role::Kind::kLead) {
      Group& g = groups_[role.index];
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
    Group& g = groups_[role.index];
    if (--g.outstanding == 0) {
      m.Timer(times_.Around(T::kMessageSleepNs), static_cast<int>(role.index));
    }
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
      roles_.Set(workers_[i], Role::Lead(i));
      m.Timer(i * kStartStaggerNs, static_cast<int>(i));
    }
    // The hogs start first, one by one, as a parent starting them would.
    for (uint32_t i = 0; i < spec_.idle_hogs; ++i) {
      hogs_.push_back(m.NewTask(true));
      roles_.Set(hogs_.back(), kHogRole);
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
    const Role role = roles_.Get(task);
    switch (role.kind) {
      case Role::Kind::kHog:
        m.Continue(task, UINT64_MAX / 4);
        return;
      case Role::Kind::kExiting:
        roles_.Clear(task);
        m.Exit(task);
        return;
      case Role::Kind::kLead:
        WorkerStep(m, task, role.index);
        return;
      case Role::Kind::kMember:
        JobDone(m, task, role.index);
        return;
      case Role::Kind::kNone:
        break;
    }
    UnknownRole(task);
  }

  WorkloadOutcome outcome() const override { return {jobs_done_, done_ns_}; }

 private:
  static constexpr int kHogTimer = 1 << 20;  // timer tokens of hogs

  // A worker's fork burst is done: start its next job, or stop.
  void WorkerStep(Machine& m, int task, uint32_t i) {
    if (waiting_.size() <= i) waiting_.resize(i + 1, false);
    if (waiting_[i] || jobs_started_ >= T::kJobs) {
      m.Block(task);
      return;
    }
    ++jobs_started_;
    const int job = m.NewTask(true);
    roles_.Set(job, Role::Member(i));
    const uint64_t select_ns =
        m.Wake(job, m.TaskCpu(task), WakePath::kFork, times_.Around(T::kJobNs));
    waiting_[i] = true;
    m.Continue(task, select_ns);
  }

  // The job's exit wakes its worker, the select_cpu on the job's CPU.
  void JobDone(Machine& m, int job, uint32_t i) {
    if (++jobs_done_ == T::kJobs) {
      done_ns_ = m.now();
      m.Stop();
    }
    waiting_[i] = false;
    roles_.Set(job, kExitingRole);
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
      roles_.Set(tasks_[i], Role::Member(i));
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
    m.Timer(times_.Around(T::kSmtSleepNs), static_cast<int>(roles_.Get(task).index));
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
