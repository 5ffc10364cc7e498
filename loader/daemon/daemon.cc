#include "loader/daemon/daemon.h"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "loader/daemon/control_service.h"
#include "loader/daemon/event_ring.h"
#include "loader/daemon/metrics_server.h"
#include "loader/daemon/scx_stats_service.h"
#include "loader/daemon/stats_collector.h"
#include "loader/daemon/systemd_notify.h"
#include "loader/core/build_info.h"
#include "loader/core/settings.h"
#include "loader/bpf/scheduler.h"
#include "loader/core/sched_ext_sysfs.h"
#include "loader/core/stats.h"
#include "loader/core/stats_snapshot.h"
#include "loader/core/topology.h"
#include "loader/core/event_wire.h"
#include "loader/net/json_lines.h"

namespace loehle {
namespace {

using Clock = std::chrono::steady_clock;

std::string KernelRelease() {
  struct utsname u;
  if (uname(&u) != 0) return "";
  return u.release;
}

// Blocks SIGINT and SIGTERM and delivers them through a file descriptor, so
// the event loop sees them between two polls and never in the middle of a
// map update. Restores the mask on destruction.
class SignalFd {
 public:
  static absl::StatusOr<std::unique_ptr<SignalFd>> Create() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    auto self = std::unique_ptr<SignalFd>(new SignalFd());
    if (sigprocmask(SIG_BLOCK, &mask, &self->old_mask_) != 0) {
      return absl::InternalError("cannot block SIGINT/SIGTERM");
    }
    self->fd_ = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (self->fd_ < 0) return absl::InternalError("cannot create a signalfd");
    return self;
  }
  ~SignalFd() {
    if (fd_ >= 0) close(fd_);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  // Readable when a signal is pending.
  int fd() const { return fd_; }
  // The signal number received, or 0.
  int Take() {
    struct signalfd_siginfo info;
    if (read(fd_, &info, sizeof(info)) == sizeof(info)) {
      return static_cast<int>(info.ssi_signo);
    }
    return 0;
  }

 private:
  SignalFd() = default;
  int fd_ = -1;
  sigset_t old_mask_;
};

// The topology, with the exit latencies of --idle-latency-file when given.
absl::StatusOr<Topology> LoadTopology(const DaemonOptions& options) {
  absl::StatusOr<Topology> topology = ReadTopology(options.sysfs_root);
  if (!topology.ok()) return topology.status();
  if (!options.idle_latency_file.empty()) {
    if (absl::Status read =
            ApplyIdleLatencyFile(options.idle_latency_file, &*topology);
        !read.ok()) {
      return read;
    }
  }
  return topology;
}

class Daemon : public ControlHandler {
 public:
  // `events` outlives the daemon: it carries on across a restart.
  Daemon(const DaemonOptions& options, Topology topology, EventRing* events,
         Clock::time_point started)
      : options_(options), topology_(std::move(topology)), started_(started),
        events_(events) {}

  absl::Status StartScheduler(uint32_t first_generation,
                              const Settings& settings) {
    Scheduler::Options opts;
    opts.settings = settings;
    opts.first_generation = first_generation;
    opts.keep_generations = options_.keep_generations;
    opts.verbose = options_.verbose;
    opts.sysfs_root = options_.sysfs_root;
    absl::StatusOr<std::unique_ptr<Scheduler>> sched =
        Scheduler::Start(topology_, opts);
    if (!sched.ok()) return sched.status();
    scheduler_ = *std::move(sched);
    return absl::OkStatus();
  }

  Scheduler& scheduler() { return *scheduler_; }
  const Topology& topology() const { return topology_; }
  void StopScheduler() { scheduler_.reset(); }

  // After an exit the kernel wants restarted (CPU hotplug): a fresh
  // topology, the same settings, the next generation.
  absl::Status Restart() {
    const Settings settings = scheduler_->settings();
    const uint32_t next_generation = scheduler_->generation() + 1;
    StopScheduler();
    absl::StatusOr<Topology> fresh = LoadTopology(options_);
    if (!fresh.ok()) return fresh.status();
    topology_ = *std::move(fresh);
    last_summary_.reset();
    if (absl::Status started = StartScheduler(next_generation, settings);
        !started.ok()) {
      return started;
    }
    fprintf(stderr, "scx_loehle: restarted (%s)\n",
            DescribeTopology(topology_).c_str());
    return absl::OkStatus();
  }

  SchedulerStatus Status() {
    return {std::string(Version()), std::string(GitCommit()),
            scheduler_->generation(), scheduler_->settings(),
            ReadSchedExtState(options_.sysfs_root),
            ReadSchedExtOps(options_.sysfs_root),
            KfuncVariantNames(scheduler_->compat_flags())};
  }

  nlohmann::json HandleGet() override { return ToJson(Status()); }

  absl::StatusOr<nlohmann::json> HandleSet(const nlohmann::json& args) override {
    absl::StatusOr<Settings> next =
        ApplySettingsJson(scheduler_->settings(), args);
    if (!next.ok()) return next.status();
    if (absl::Status applied = scheduler_->Apply(*next); !applied.ok()) {
      return applied;
    }
    fprintf(stderr, "scx_loehle: generation %u: %s\n",
            scheduler_->generation(), SettingsLabel(*next).c_str());
    return HandleGet();
  }

  // Brings the topology's online flags to what the BPF side's scans use
  // (it follows hotplug by itself), logging each change; called before
  // every snapshot and on every loop turn. Returns the changes followed.
  uint64_t FollowHotplug() {
    const Scheduler::OnlineCpus now = scheduler_->Online();
    for (const OnlineChange& change : FollowOnlineCpus(now.online, &topology_)) {
      fprintf(stderr, "scx_loehle: CPU %d %s, scheduler kept (%s)\n",
              change.cpu, change.online ? "came online" : "went offline",
              DescribeTopology(topology_).c_str());
    }
    return now.hotplug_events;
  }

  StatsSnapshot Snapshot(StatsScope scope) {
    const uint64_t hotplug_events = FollowHotplug();
    StatsSources sources;
    sources.kernel = KernelRelease();
    sources.state = ReadSchedExtState(options_.sysfs_root);
    sources.ops = ReadSchedExtOps(options_.sysfs_root);
    sources.uptime_s =
        std::chrono::duration<double>(Clock::now() - started_).count();
    sources.generation = scheduler_->generation();
    sources.topology = &topology_;
    sources.hotplug_events = hotplug_events;
    sources.settings_by_generation = &scheduler_->settings_by_generation();
    sources.older = &scheduler_->older_generations();
    sources.read_generation = [this](uint32_t generation) {
      return scheduler_->ReadGeneration(generation);
    };
    sources.programs = scheduler_->ProgramCosts();
    sources.idle_state_tracking = scheduler_->idle_state_tracking();
    sources.events_newest_seq = events_->newest_seq();
    sources.events_capacity = events_->capacity();
    return CollectStats(sources, scope);
  }

  nlohmann::json HandleStats(StatsScope scope) override {
    return ToJson(Snapshot(scope));
  }

  absl::StatusOr<nlohmann::json> HandleEvents(uint64_t since) override {
    return EventsReply(events_->Since(since, kMaxEventsPerReply));
  }

  void DrainEvents() {
    absl::StatusOr<int> n = scheduler_->ConsumeEvents(
        [this](const loehle_pick_event& event) { events_->Push(event); });
    if (!n.ok()) {
      fprintf(stderr, "scx_loehle: %s\n", n.status().ToString().c_str());
    }
  }

  // Prints the --stats line for what happened since the previous one, from
  // the same snapshot every other reader gets.
  void PrintSummary(double seconds) {
    const StatsSnapshot snapshot = Snapshot(StatsScope::kCurrent);
    const GenerationSnapshot* now = snapshot.Current();
    if (now == nullptr) return;
    GenerationStats before;
    if (last_summary_ && last_summary_->generation == now->generation()) {
      before = *last_summary_;
    }
    GenerationStats delta = Delta(now->stats, before);
    delta.generation = now->generation();
    printf("%s\n", SummaryLine(delta, seconds, SettingsLabel(now->settings)).c_str());
    fflush(stdout);
    last_summary_ = now->stats;
  }

 private:
  DaemonOptions options_;
  Topology topology_;
  Clock::time_point started_;
  std::unique_ptr<Scheduler> scheduler_;
  EventRing* events_;
  std::optional<GenerationStats> last_summary_;
};

// Null without an address.
absl::StatusOr<std::unique_ptr<MetricsServer>> StartMetrics(
    const std::optional<MetricsAddress>& address) {
  if (!address) return nullptr;
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      MetricsServer::Start(*address);
  if (!server.ok()) return server.status();
  fprintf(stderr, "scx_loehle: metrics on http://%s:%d/metrics\n",
          address->host.find(':') != std::string::npos
              ? absl::StrCat("[", address->host, "]").c_str()
              : address->host.c_str(),
          (*server)->port());
  return server;
}

void PrintExit(const ExitRecord& exit) {
  fprintf(stderr, "scx_loehle: the kernel disabled the scheduler: %s\n",
          exit.Describe().c_str());
  if (!exit.dump.empty()) {
    fprintf(stderr, "scx_loehle: the kernel's debug dump:\n%s%s",
            exit.dump.c_str(), absl::EndsWith(exit.dump, "\n") ? "" : "\n");
  }
}

// The daemon's loop: until a signal (OK) or an exit the kernel does not
// want restarted (the exit as an error).
absl::Status ServeUntilStopped(const DaemonOptions& options, Daemon& daemon,
                               JsonLineServer* sockets, MetricsServer* metrics,
                               SignalFd& signals) {
  const auto summary_every = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options.stats_interval_s));
  auto next_summary = Clock::now() + summary_every;
  for (;;) {
    // A signal, a control client or a half-full event ring wakes the loop
    // at once; the timer drains the ring at low rates and notices an exit.
    const int wake[] = {daemon.scheduler().events_wait_fd(), signals.fd()};
    if (sockets != nullptr) {
      sockets->Poll(kDaemonLoopTimeoutMs, wake);
    } else {
      pollfd waits[] = {{wake[0], POLLIN, 0}, {wake[1], POLLIN, 0}};
      poll(waits, 2, kDaemonLoopTimeoutMs);
    }
    if (int sig = signals.Take(); sig != 0) {
      fprintf(stderr, "scx_loehle: %s, detaching\n", strsignal(sig));
      daemon.DrainEvents();
      daemon.StopScheduler();
      return absl::OkStatus();
    }
    daemon.DrainEvents();
    daemon.FollowHotplug();
    if (metrics != nullptr && metrics->SnapshotWanted()) {
      metrics->Publish(daemon.Snapshot(StatsScope::kAll));
    }
    if (std::optional<ExitRecord> exit = daemon.scheduler().Exit()) {
      PrintExit(*exit);
      if (!exit->WantsRestart()) {
        return absl::AbortedError(
            absl::StrCat("scheduler exited: ", exit->Describe()));
      }
      if (absl::Status restarted = daemon.Restart(); !restarted.ok()) {
        return restarted;
      }
    }
    if (options.stats_interval_s > 0 && Clock::now() >= next_summary) {
      daemon.PrintSummary(options.stats_interval_s);
      next_summary += summary_every;
    }
  }
}

// Adds the scx_stats socket to *server, creating the server when there is
// none yet.
absl::Status ServeScxStats(const std::string& path, Daemon* daemon,
                           std::unique_ptr<JsonLineServer>* server) {
  if (absl::Status dir = PrepareSocketDirectory(path); !dir.ok()) return dir;
  auto service = std::make_unique<ScxStatsService>(
      [daemon] { return daemon->Snapshot(StatsScope::kCurrent); });
  if (*server != nullptr) return (*server)->AddListener(path, std::move(service));
  absl::StatusOr<std::unique_ptr<JsonLineServer>> created =
      JsonLineServer::Listen(path, std::move(service));
  if (!created.ok()) return created.status();
  *server = *std::move(created);
  return absl::OkStatus();
}

// The control socket and the scx_stats socket, on one server; null when
// both are disabled. Only the control socket is required.
absl::StatusOr<std::unique_ptr<JsonLineServer>> ListenOnSockets(
    const DaemonOptions& options, Daemon* daemon) {
  std::unique_ptr<JsonLineServer> server;
  if (!options.socket_path.empty()) {
    absl::StatusOr<std::unique_ptr<JsonLineServer>> control =
        ListenForControl(options.socket_path, daemon);
    if (!control.ok()) return control.status();
    server = *std::move(control);
  }
  if (!options.scx_stats_socket_path.empty()) {
    // The scheduler runs without it: the scx_stats socket is a convenience
    // for scx's tools, the control socket is ours.
    if (absl::Status served = ServeScxStats(options.scx_stats_socket_path,
                                            daemon, &server);
        !served.ok()) {
      fprintf(stderr, "scx_loehle: no scx_stats socket: %s\n",
              std::string(served.message()).c_str());
    }
  }
  return server;
}

// Ready means answering (the sockets listen): systemd's Type=notify. A
// failure to notify is said, not fatal: the scheduler runs either way.
void AnnounceReady(const DaemonOptions& options, const Daemon& daemon) {
  const std::string state = absl::StrCat(
      "READY=1\nSTATUS=attached: ", SettingsLabel(options.settings), "; ",
      DescribeTopology(daemon.topology()));
  if (absl::Status notified = NotifySystemd(state); !notified.ok()) {
    fprintf(stderr, "scx_loehle: cannot notify systemd: %s\n",
            std::string(notified.message()).c_str());
  }
}

}  // namespace

// A stats reply is hundreds of kB, built and freed per request. glibc
// raises its mmap threshold to the size of each mmapped block freed, so
// after the first big replies they came from the heap, whose high-water
// mark stays resident: beside a few concurrent clients the RSS rose in
// 1-1.5 MB steps for minutes (the soak's RSS rule). A fixed threshold
// keeps big blocks mmapped, handed back when freed.
constexpr int kMallocMmapThreshold = 128 * 1024;

absl::Status RunDaemon(const DaemonOptions& options) {
  mallopt(M_MMAP_THRESHOLD, kMallocMmapThreshold);
  if (absl::Status valid = ValidateSettings(options.settings); !valid.ok()) {
    return valid;
  }
  if (absl::Status available =
          CheckSchedExtAvailable(options.sysfs_root, geteuid());
      !available.ok()) {
    return available;
  }
  absl::StatusOr<Topology> topology = LoadTopology(options);
  if (!topology.ok()) return topology.status();
  // Checked before the attach, so that a typo costs no scheduler start.
  std::optional<MetricsAddress> metrics_address;
  if (!options.metrics_addr.empty()) {
    absl::StatusOr<MetricsAddress> parsed = ParseMetricsAddress(
        options.metrics_addr, options.metrics_allow_remote);
    if (!parsed.ok()) return parsed.status();
    metrics_address = *parsed;
  }
  absl::StatusOr<std::unique_ptr<SignalFd>> signals = SignalFd::Create();
  if (!signals.ok()) return signals.status();

  EventRing events;
  Daemon daemon(options, *std::move(topology), &events, Clock::now());
  if (absl::Status started = daemon.StartScheduler(1, options.settings);
      !started.ok()) {
    return started;
  }
  const Scheduler::StartTiming& timing = daemon.scheduler().start_timing();
  fprintf(stderr, "scx_loehle: attached (%s; %s) in %.1f s (load %.1f s, enable %.1f s)\n",
          SettingsLabel(options.settings).c_str(),
          DescribeTopology(daemon.topology()).c_str(),
          timing.load_s + timing.attach_s, timing.load_s, timing.attach_s);
  fprintf(stderr, "scx_loehle: CPU hotplug: %s\n",
          daemon.scheduler().follows_hotplug()
              ? "followed in place"
              : "reloads (this kernel's sched_ext strands a dying CPU's kthreads)");
  fprintf(stderr, "scx_loehle: kfuncs: %s\n",
          absl::StrJoin(KfuncVariantNames(daemon.scheduler().compat_flags()),
                        ", ")
              .c_str());

  // The sockets listen only now: a client that connects is answered.
  absl::StatusOr<std::unique_ptr<JsonLineServer>> sockets =
      ListenOnSockets(options, &daemon);
  if (!sockets.ok()) return sockets.status();
  // Declared after `daemon`: destroyed (threads joined) before it.
  absl::StatusOr<std::unique_ptr<MetricsServer>> metrics =
      StartMetrics(metrics_address);
  if (!metrics.ok()) return metrics.status();
  AnnounceReady(options, daemon);
  absl::Status served = ServeUntilStopped(options, daemon, sockets->get(),
                                          metrics->get(), **signals);
  // Best effort: the unit learns the rest from the exit status.
  (void)NotifySystemd("STOPPING=1");
  return served;
}

}  // namespace loehle
