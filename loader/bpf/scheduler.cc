#include "loader/bpf/scheduler.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "loader/bpf/rodata_tables.h"
#include "loehle/intf.h"

// The skeleton names its BPF globals' types as the BPF side spells them.
#include "loehle.skel.h"

namespace loehle {
namespace {

// libbpf's messages for the current load, so that a verifier rejection can
// be reported with the end of its log. Only Start() loads, on one thread.
std::deque<std::string>* libbpf_log = nullptr;
bool libbpf_verbose = false;

int CaptureLibbpfPrint(enum libbpf_print_level level, const char* format,
                       va_list args) {
  // The verifier log arrives as one message of any length.
  va_list copy;
  va_copy(copy, args);
  int length = vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (length < 0) return 0;
  std::string text(static_cast<size_t>(length) + 1, '\0');
  vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<size_t>(length));
  if (libbpf_verbose) fputs(text.c_str(), stderr);
  if (libbpf_log != nullptr && level != LIBBPF_DEBUG) {
    std::istringstream lines(text);
    for (std::string one; std::getline(lines, one);) {
      if (one.empty()) continue;
      libbpf_log->push_back(one);
      if (libbpf_log->size() > 400) libbpf_log->pop_front();
    }
  }
  return 0;
}

std::string LogTail(const std::deque<std::string>& log, size_t lines) {
  std::vector<std::string> tail;
  size_t start = log.size() > lines ? log.size() - lines : 0;
  for (size_t i = start; i < log.size(); ++i) tail.push_back(log[i]);
  return absl::StrJoin(tail, " | ");
}

std::string ExitKindName(int64_t kind) {
  switch (kind) {
    case 0: return "none";
    case 1: return "done";
    case 64: return "unregistered";
    case 65: return "unregistered by the BPF scheduler";
    case 66: return "unregistered by the kernel";
    case 67: return "disabled by sysrq-S";
    case 1024: return "error";
    case 1025: return "error in the BPF scheduler";
    case 1026: return "runnable task stall";
    default: return absl::StrCat("exit kind ", kind);
  }
}

}  // namespace

std::string ExitRecord::Describe() const {
  std::string text = ExitKindName(kind);
  if (!reason.empty()) absl::StrAppend(&text, " (", reason, ")");
  if (!message.empty()) absl::StrAppend(&text, ": ", message);
  if (WantsRestart()) absl::StrAppend(&text, " [kernel asks for a restart]");
  return text;
}

std::vector<std::string> KfuncVariantNames(uint32_t compat_flags) {
  struct Variant {
    uint32_t flag;
    const char* fresh;
    const char* old;
  };
  static constexpr Variant kVariants[] = {
      {LOEHLE_COMPAT_INSERT_V2, "scx_bpf_dsq_insert___v2", "scx_bpf_dsq_insert"},
      {LOEHLE_COMPAT_INSERT_VTIME_ARGS, "__scx_bpf_dsq_insert_vtime",
       "scx_bpf_dsq_insert_vtime"},
      {LOEHLE_COMPAT_MOVE_TO_LOCAL_V2, "scx_bpf_dsq_move_to_local___v2",
       "scx_bpf_dsq_move_to_local"},
      {LOEHLE_COMPAT_REENQUEUE_V2, "scx_bpf_reenqueue_local___v2",
       "scx_bpf_reenqueue_local"},
      {LOEHLE_COMPAT_SET_VTIME, "scx_bpf_task_set_dsq_vtime",
       "p->scx.dsq_vtime store"},
  };
  std::vector<std::string> names;
  for (const Variant& v : kVariants) {
    names.push_back((compat_flags & v.flag) ? v.fresh : v.old);
  }
  return names;
}

bool WantsIdleStateTracking(bool have_exit_latencies, const Settings& settings) {
  return have_exit_latencies && settings.policy != LOEHLE_POLICY_BUILTIN;
}

absl::Status Scheduler::AttachIdleStateTrackingFor(const Settings& settings) {
  if (idle_state_link_ != nullptr ||
      !WantsIdleStateTracking(has_exit_latencies_, settings)) {
    return absl::OkStatus();
  }
  idle_state_link_ = bpf_program__attach(skel_->progs.loehle_cpu_idle);
  if (idle_state_link_ == nullptr) {
    return absl::InternalError(absl::StrCat(
        "cannot attach the cpu_idle tracepoint: ", strerror(errno)));
  }
  return absl::OkStatus();
}

void Scheduler::DetachIdleStateTrackingUnless(const Settings& settings) {
  if (idle_state_link_ == nullptr ||
      WantsIdleStateTracking(has_exit_latencies_, settings)) {
    return;
  }
  // A CPU idle now keeps the state it published last; update_idle marks it
  // unpublished on its next idle entry, and builtin reads none.
  bpf_link__destroy(idle_state_link_);
  idle_state_link_ = nullptr;
}

// The skeleton names the BPF globals' types as the BPF side spells them;
// they are the same structs and arrays as RodataTables'.
void Scheduler::CopyRodata(const RodataTables& tables) {
  auto* ro = skel_->rodata;
  static_assert(sizeof(ro->topo) == sizeof(tables.topo));
  static_assert(sizeof(ro->cpu_lists) == sizeof(tables.cpu_lists));
  static_assert(sizeof(ro->exit_latency_ns) == sizeof(tables.exit_latency_ns));
  ro->nr_cpus = tables.nr_cpus;
  ro->nr_llcs = tables.nr_llcs;
  ro->nr_nodes = tables.nr_nodes;
  ro->smt_active = tables.smt_active;
  std::memcpy(const_cast<loehle_cpu_topo*>(ro->topo), tables.topo.data(),
              sizeof(ro->topo));
  std::memcpy(const_cast<loehle_cpu_lists*>(&ro->cpu_lists), &tables.cpu_lists,
              sizeof(ro->cpu_lists));
  std::memcpy(const_cast<__u64*>(&ro->exit_latency_ns[0][0]),
              tables.exit_latency_ns.data(), sizeof(ro->exit_latency_ns));
}

namespace {

// Collects libbpf's messages while it lives: one load at a time.
class LibbpfLogCapture {
 public:
  explicit LibbpfLogCapture(bool verbose) {
    libbpf_log = &log_;
    libbpf_verbose = verbose;
    libbpf_set_print(CaptureLibbpfPrint);
  }
  ~LibbpfLogCapture() { libbpf_log = nullptr; }
  LibbpfLogCapture(const LibbpfLogCapture&) = delete;
  LibbpfLogCapture& operator=(const LibbpfLogCapture&) = delete;

  // ": <the last lines>" or "".
  std::string Tail(size_t lines) const {
    std::string tail = LogTail(log_, lines);
    return tail.empty() ? "" : absl::StrCat(": ", tail);
  }

 private:
  std::deque<std::string> log_;
};

}  // namespace

bool KernelFollowsHotplug() {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  if (vmlinux == nullptr) return false;
  const bool newer =
      btf__find_by_name_kind(vmlinux, "scx_bpf_task_set_dsq_vtime", BTF_KIND_FUNC) >= 0;
  btf__free(vmlinux);
  return newer;
}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Start(
    const Topology& topology, const Options& options) {
  if (absl::Status ok = CheckSchedExtAvailable(options.sysfs_root, geteuid());
      !ok.ok()) {
    return ok;
  }
  if (topology.cpus.empty() ||
      topology.cpus.size() > static_cast<size_t>(LOEHLE_MAX_CPUS)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported CPU count ", topology.cpus.size(),
                     " (1 to ", LOEHLE_MAX_CPUS, ")"));
  }
  LibbpfLogCapture log(options.verbose);
  std::unique_ptr<Scheduler> sched(new Scheduler());
  if (absl::Status opened = sched->Open(topology, options); !opened.ok()) {
    return opened;
  }
  const auto opened_at = std::chrono::steady_clock::now();
  if (int err = loehle_bpf__load(sched->skel_); err != 0) {
    return absl::InternalError(absl::StrCat(
        "the kernel rejected the BPF scheduler (", strerror(-err), ")", log.Tail(12)));
  }
  const auto loaded_at = std::chrono::steady_clock::now();
  // Make bpf_prog_info report run time and count; closing the fd restores.
  sched->run_time_stats_fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (int err = loehle_bpf__attach(sched->skel_); err != 0) {
    if (err == -EBUSY || err == -EEXIST) {
      std::string ops = ReadSchedExtOps(options.sysfs_root);
      return absl::FailedPreconditionError(absl::StrCat(
          "another sched_ext scheduler is already loaded: ",
          ops.empty() ? "(name unknown)" : ops));
    }
    return absl::InternalError(absl::StrCat(
        "cannot attach the scheduler (", strerror(-err), ")", log.Tail(6)));
  }
  sched->start_timing_.load_s =
      std::chrono::duration<double>(loaded_at - opened_at).count();
  sched->start_timing_.attach_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - loaded_at)
          .count();
  if (absl::Status s = sched->AttachIdleStateTrackingFor(options.settings);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::unique_ptr<EventReader>> events =
      EventReader::Open(bpf_map__fd(sched->skel_->maps.events));
  if (!events.ok()) return events.status();
  sched->events_ = *std::move(events);
  return sched;
}

absl::Status Scheduler::Open(const Topology& topology, const Options& options) {
  nr_cpus_ = static_cast<int>(topology.cpus.size());
  nr_possible_ = libbpf_num_possible_cpus();
  if (nr_possible_ <= 0) return absl::InternalError("cannot count the possible CPUs");
  // Verbose: the kernel's verifier statistics of each program too (time,
  // instructions processed), which is where a slow start goes.
  LIBBPF_OPTS(bpf_object_open_opts, open_opts,
              .kernel_log_level = options.verbose ? 4u : 0u);
  skel_ = loehle_bpf__open_opts(&open_opts);
  if (skel_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot open the BPF object: ", strerror(errno)));
  }
  // The topology was read under this hotplug sequence number: if a CPU
  // came or went since, the kernel refuses the attach with a restart.
  skel_->struct_ops.loehle_ops->hotplug_seq = topology.hotplug_seq;
  follows_hotplug_ = KernelFollowsHotplug();
  if (!follows_hotplug_) {
    // Without the two callbacks the kernel unloads us on every hotplug
    // with a restart request, and the daemon reloads (Documentation/
    // design.md, "Hotplug").
    skel_->struct_ops.loehle_ops->cpu_online = nullptr;
    skel_->struct_ops.loehle_ops->cpu_offline = nullptr;
    bpf_program__set_autoload(skel_->progs.loehle_cpu_online, false);
    bpf_program__set_autoload(skel_->progs.loehle_cpu_offline, false);
  }
  // Attached by AttachIdleStateTrackingFor() only where it is wanted.
  bpf_program__set_autoattach(skel_->progs.loehle_cpu_idle, false);
  has_exit_latencies_ = HasExitLatencies(topology);
  CopyRodata(BuildRodataTables(topology));

  first_generation_ = options.first_generation;
  generation_ = options.first_generation;
  history_ = GenerationHistory(options.keep_generations);
  history_.Begin(generation_, options.settings);
  skel_->bss->configs[0] = ToBpfConfig(options.settings, generation_);
  skel_->bss->active_config = 0;
  return absl::OkStatus();
}

Scheduler::~Scheduler() {
  events_.reset();  // before the map it reads goes with the skeleton
  if (idle_state_link_ != nullptr) bpf_link__destroy(idle_state_link_);
  // Destroying the skeleton destroys the struct_ops link: the kernel
  // disables the scheduler and returns every task to the fair class.
  if (skel_ != nullptr) loehle_bpf__destroy(skel_);
  if (run_time_stats_fd_ >= 0) close(run_time_stats_fd_);
}

void Scheduler::WriteConfig(const Settings& settings, uint32_t generation) {
  auto* bss = skel_->bss;
  uint32_t next = (__atomic_load_n(&bss->active_config, __ATOMIC_ACQUIRE) + 1) & 1;
  bss->configs[next] = ToBpfConfig(settings, generation);
  // Publish the filled copy; a select_cpu reads either all of the old
  // generation or all of the new one.
  __atomic_store_n(&bss->active_config, next, __ATOMIC_RELEASE);
}

absl::Status Scheduler::Apply(const Settings& settings) {
  uint32_t next = generation_ + 1;
  // The slot `next` will use still holds generation next - SLOTS: keep its
  // final figures before the BPF side and we recycle it.
  if (next >= first_generation_ + LOEHLE_GEN_SLOTS) {
    const uint32_t retiring = next - LOEHLE_GEN_SLOTS;
    if (history_.settings().contains(retiring) && history_.Retired(retiring) == nullptr) {
      absl::StatusOr<GenerationStats> last = ReadLiveGeneration(retiring);
      if (!last.ok()) return last.status();
      history_.Retire(*last);
    }
  }
  for (int cpu = 0; cpu < nr_cpus_; ++cpu) {
    uint32_t key = (next % LOEHLE_GEN_SLOTS) * LOEHLE_MAX_CPUS + cpu;
    __atomic_store_n(&skel_->bss->fork_picks[key], 0, __ATOMIC_RELAXED);
  }
  // Attach before the flip, so that a failure leaves the running generation
  // as it was; detach after it (a pick of the old generation may still read
  // states until then; a builtin pick reads none).
  if (absl::Status s = AttachIdleStateTrackingFor(settings); !s.ok()) {
    return s;
  }
  history_.Begin(next, settings);
  WriteConfig(settings, next);
  generation_ = next;
  DetachIdleStateTrackingUnless(settings);
  for (uint32_t oldest : history_.Overflow()) {
    absl::StatusOr<GenerationStats> stats = ReadGeneration(oldest);
    if (!stats.ok()) return stats.status();
    history_.Fold(*stats);
  }
  return absl::OkStatus();
}

absl::StatusOr<GenerationStats> Scheduler::ReadGeneration(
    uint32_t generation) const {
  if (const GenerationStats* retired = history_.Retired(generation)) {
    return *retired;
  }
  if (!history_.settings().contains(generation)) {
    return absl::NotFoundError(
        absl::StrCat("generation ", generation, " is not kept"));
  }
  return ReadLiveGeneration(generation);
}

absl::StatusOr<GenerationStats> Scheduler::ReadLiveGeneration(
    uint32_t generation) const {
  uint32_t slot = generation % LOEHLE_GEN_SLOTS;
  std::vector<loehle_stats> per_cpu(nr_possible_);
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.stats), &slot,
                          per_cpu.data()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot read the stats map: ", strerror(errno)));
  }
  GenerationStats sum = SumCpus(per_cpu, generation);
  sum.fork_picks.assign(nr_cpus_, 0);
  for (int cpu = 0; cpu < nr_cpus_; ++cpu) {
    sum.fork_picks[cpu] = __atomic_load_n(
        &skel_->bss->fork_picks[slot * LOEHLE_MAX_CPUS + cpu], __ATOMIC_RELAXED);
  }
  return sum;
}

std::optional<ExitRecord> Scheduler::Exit() const {
  const auto& info = skel_->bss->exit_info;
  int64_t kind = __atomic_load_n(&info.kind, __ATOMIC_ACQUIRE);
  if (kind == 0) return std::nullopt;
  ExitRecord record;
  record.kind = kind;
  record.exit_code = info.exit_code;
  record.reason.assign(info.reason, strnlen(info.reason, sizeof(info.reason)));
  record.message.assign(info.msg, strnlen(info.msg, sizeof(info.msg)));
  const char* dump = skel_->bss->exit_dump;
  record.dump.assign(dump, strnlen(dump, sizeof(skel_->bss->exit_dump)));
  return record;
}

absl::StatusOr<int> Scheduler::ConsumeEvents(
    std::function<void(const loehle_pick_event&)> sink) {
  return events_->Consume(std::move(sink));
}

int Scheduler::events_wait_fd() const { return events_->wait_fd(); }

uint32_t Scheduler::compat_flags() const {
  return __atomic_load_n(&skel_->bss->compat_flags, __ATOMIC_RELAXED);
}

Scheduler::OnlineCpus Scheduler::Online() const {
  OnlineCpus view;
  view.hotplug_events =
      __atomic_load_n(&skel_->bss->hotplug.events, __ATOMIC_ACQUIRE);
  const int cpus = std::min(nr_possible_, LOEHLE_ONLINE_WORDS * 64);
  view.online.resize(cpus);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const uint64_t word = __atomic_load_n(&skel_->bss->hotplug.online[cpu / 64],
                                          __ATOMIC_RELAXED);
    view.online[cpu] = (word >> (cpu % 64)) & 1;
  }
  return view;
}

std::vector<ProgramStats> Scheduler::ProgramCosts() const {
  std::vector<ProgramStats> costs;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj) {
    struct bpf_prog_info info;
    uint32_t len = sizeof(info);
    memset(&info, 0, sizeof(info));
    int fd = bpf_program__fd(prog);
    if (fd < 0 || bpf_prog_get_info_by_fd(fd, &info, &len) != 0) continue;
    std::string name = bpf_program__name(prog);
    if (absl::StartsWith(name, "loehle_")) name = name.substr(7);
    costs.push_back({name, info.run_cnt, info.run_time_ns});
  }
  return costs;
}

}  // namespace loehle
