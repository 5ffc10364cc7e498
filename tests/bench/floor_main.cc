// loehle-floor: loads tests/bench/floor.bpf.c, the minimal sched_ext
// scheduler scripts/bench measures scx_loehle's hot path against, and keeps
// it attached until SIGINT or SIGTERM.
//
//   loehle-floor [--stats-file FILE] [--run-time-stats=on|off]
//
//   --stats-file FILE   on SIGUSR1 and at exit, write the BPF programs'
//                       run counts and run times to FILE (written to
//                       FILE.tmp, then renamed) as {"programs":[{"name",
//                       "run_count","run_time_ns"}]}, the shape of
//                       `scx_loehle ctl stats --json`'s "programs"
//   --run-time-stats    on (default): enable the kernel's BPF run-time
//                       statistics while loaded, as scx_loehle does, so that
//                       the two pay the same for them; off: leave them alone
//
// Exit status: 0 after SIGINT/SIGTERM, 1 when the kernel ejected the
// scheduler or it could not be loaded (one line on stderr says why), 2 for
// bad arguments. A test fixture (Documentation/benchmarks.md), not
// installed.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include <linux/types.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "floor.skel.h"
#include "nlohmann/json.hpp"

namespace {

volatile sig_atomic_t stop_requested = 0;
volatile sig_atomic_t stats_requested = 0;

struct Args {
  std::string stats_file;
  bool run_time_stats = true;
};

// Owns the skeleton and the run-time statistics fd; destroying it detaches
// the scheduler (the struct_ops link goes with the skeleton).
class Floor {
 public:
  Floor() = default;
  Floor(const Floor&) = delete;
  Floor& operator=(const Floor&) = delete;
  ~Floor() {
    if (skel_ != nullptr) floor_bpf__destroy(skel_);
    if (stats_fd_ >= 0) close(stats_fd_);
  }

  absl::Status Load(bool run_time_stats) {
    if (access("/sys/kernel/sched_ext", F_OK) != 0) {
      return absl::FailedPreconditionError(
          "this kernel has no sched_ext (/sys/kernel/sched_ext is missing)");
    }
    skel_ = floor_bpf__open_and_load();
    if (skel_ == nullptr) {
      return absl::InternalError(absl::StrCat(
          "the kernel rejected the floor scheduler (", strerror(errno), ")"));
    }
    if (run_time_stats) stats_fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (int err = floor_bpf__attach(skel_); err != 0) {
      if (err == -EBUSY || err == -EEXIST) {
        return absl::FailedPreconditionError(
            "another sched_ext scheduler is already loaded");
      }
      return absl::InternalError(
          absl::StrCat("cannot attach the floor scheduler (", strerror(-err), ")"));
    }
    return absl::OkStatus();
  }

  // Empty while attached; the kernel's reason once it disabled us.
  std::string ExitReason() const {
    const auto* bss = skel_->bss;
    if (__atomic_load_n(&bss->exit_kind, __ATOMIC_ACQUIRE) == 0) return "";
    return absl::StrCat(bss->exit_reason, bss->exit_msg[0] ? ": " : "",
                        bss->exit_msg);
  }

  absl::Status WriteStats(const std::string& path) const {
    nlohmann::json programs = nlohmann::json::array();
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, skel_->obj) {
      struct bpf_prog_info info;
      uint32_t len = sizeof(info);
      memset(&info, 0, sizeof(info));
      if (bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0) {
        continue;
      }
      std::string name = bpf_program__name(prog);
      if (absl::StartsWith(name, "floor_")) name = name.substr(6);
      programs.push_back({{"name", name},
                          {"run_count", info.run_cnt},
                          {"run_time_ns", info.run_time_ns}});
    }
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << nlohmann::json{{"programs", programs}}.dump() << "\n";
      if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
      return absl::InternalError(
          absl::StrCat("cannot rename ", tmp, ": ", strerror(errno)));
    }
    return absl::OkStatus();
  }

 private:
  floor_bpf* skel_ = nullptr;
  int stats_fd_ = -1;
};

absl::Status ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--stats-file" && i + 1 < argc) {
      args->stats_file = argv[++i];
    } else if (absl::StartsWith(arg, "--stats-file=")) {
      args->stats_file = std::string(arg.substr(13));
    } else if (arg == "--run-time-stats=on") {
      args->run_time_stats = true;
    } else if (arg == "--run-time-stats=off") {
      args->run_time_stats = false;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown argument '", std::string(arg),
          "' (usage: loehle-floor [--stats-file FILE] [--run-time-stats=on|off])"));
    }
  }
  return absl::OkStatus();
}

void OnSignal(int sig) {
  if (sig == SIGUSR1) {
    stats_requested = 1;
  } else {
    stop_requested = 1;
  }
}

int Run(const Args& args) {
  Floor floor;
  if (absl::Status s = floor.Load(args.run_time_stats); !s.ok()) {
    fprintf(stderr, "loehle-floor: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  fprintf(stderr, "loehle-floor: attached\n");
  int rc = 0;
  while (!stop_requested) {
    if (std::string why = floor.ExitReason(); !why.empty()) {
      fprintf(stderr, "loehle-floor: the kernel disabled the scheduler: %s\n",
              why.c_str());
      rc = 1;
      break;
    }
    if (stats_requested && !args.stats_file.empty()) {
      stats_requested = 0;
      if (absl::Status s = floor.WriteStats(args.stats_file); !s.ok()) {
        fprintf(stderr, "loehle-floor: %s\n", std::string(s.message()).c_str());
      }
    }
    usleep(20000);
  }
  if (!args.stats_file.empty()) {
    if (absl::Status s = floor.WriteStats(args.stats_file); !s.ok()) {
      fprintf(stderr, "loehle-floor: %s\n", std::string(s.message()).c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (absl::Status s = ParseArgs(argc, argv, &args); !s.ok()) {
    fprintf(stderr, "loehle-floor: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (geteuid() != 0) {
    fprintf(stderr, "loehle-floor: needs root (loading a BPF scheduler)\n");
    return 1;
  }
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
  return Run(args);
}
