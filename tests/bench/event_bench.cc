// loehle-event-bench: how many pick events per second the ring buffer and
// the daemon's reading path carry without drops, on any kernel with BPF (no
// sched_ext needed; root).
//
//   loehle-event-bench [--rate=N] [--seconds=S] [--batch=B]
//
// A producer thread runs tests/bench/event_source.bpf.c's syscall program
// (BPF_PROG_TEST_RUN), B events per run, paced to N events/s (0: as fast as
// it can). The main thread is the daemon's loop: EventReader (the class the
// daemon reads its ring with) into an EventRing, waiting on the ring's wakeup
// fd with the daemon's timeout (kDaemonLoopTimeoutMs). Prints one line:
//   rate=N seconds=S produced=P consumed=C drops=D events_per_s=E reader_cpu=F
// (reader_cpu: the main thread's CPU time over the run, as a share of one
// CPU). Exit status 0 when it ran (whatever the drops), 1 when it could not
// load or run, 2 for bad arguments. Documentation/benchmarks.md has figures.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "event_source.skel.h"
#include "loader/daemon/daemon.h"
#include "loader/bpf/event_reader.h"
#include "loader/daemon/event_ring.h"

namespace {

struct Args {
  uint64_t rate = 200000;
  double seconds = 5;
  uint32_t batch = 64;
};

absl::Status ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    bool ok = false;
    if (arg.rfind("--rate=", 0) == 0) {
      ok = absl::SimpleAtoi(arg.substr(7), &args->rate);
    } else if (arg.rfind("--seconds=", 0) == 0) {
      ok = absl::SimpleAtod(arg.substr(10), &args->seconds) &&
           args->seconds > 0 && args->seconds <= 3600;
    } else if (arg.rfind("--batch=", 0) == 0) {
      ok = absl::SimpleAtoi(arg.substr(8), &args->batch) && args->batch > 0 &&
           args->batch <= 4096;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad argument '", std::string(arg),
          "' (usage: loehle-event-bench [--rate=N] [--seconds=S] [--batch=1..4096])"));
    }
  }
  return absl::OkStatus();
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

// Runs the source program until `stop`, `batch` events a run, paced to
// `rate` events/s (0: unpaced). Returns 0, or the errno of a failed run.
int Produce(int prog_fd, const Args& args, const std::atomic<bool>& stop) {
  struct {
    __u32 count;
  } ctx = {args.batch};
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
  const auto start = std::chrono::steady_clock::now();
  uint64_t sent = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    if (bpf_prog_test_run_opts(prog_fd, &opts) != 0) return errno;
    sent += args.batch;
    if (args.rate == 0) continue;
    const auto due = start + std::chrono::duration<double>(
                                 static_cast<double>(sent) / args.rate);
    std::this_thread::sleep_until(due);
  }
  return 0;
}

int Run(const Args& args) {
  event_source_bpf* skel = event_source_bpf__open_and_load();
  if (skel == nullptr) {
    fprintf(stderr, "loehle-event-bench: cannot load the event source (%s)\n",
            strerror(errno));
    return 1;
  }
  absl::StatusOr<std::unique_ptr<loehle::EventReader>> reader =
      loehle::EventReader::Open(bpf_map__fd(skel->maps.events));
  if (!reader.ok()) {
    fprintf(stderr, "loehle-event-bench: %s\n",
            std::string(reader.status().message()).c_str());
    event_source_bpf__destroy(skel);
    return 1;
  }
  loehle::EventRing ring;
  std::atomic<bool> stop{false};
  std::atomic<int> produce_errno{0};
  std::thread producer([&] {
    produce_errno = Produce(bpf_program__fd(skel->progs.emit), args, stop);
  });
  const double cpu0 = ThreadCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(args.seconds);
  uint64_t consumed = 0;
  auto sink = [&](const loehle_pick_event& event) {
    ring.Push(event);
    ++consumed;
  };
  int rc = 0;
  while (std::chrono::steady_clock::now() < end) {
    pollfd wait = {(*reader)->wait_fd(), POLLIN, 0};
    poll(&wait, 1, loehle::kDaemonLoopTimeoutMs);
    if (!(*reader)->Consume(sink).ok()) rc = 1;
  }
  stop = true;
  producer.join();
  if (!(*reader)->Consume(sink).ok()) rc = 1;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu = ThreadCpuSeconds() - cpu0;
  if (produce_errno != 0) {
    fprintf(stderr, "loehle-event-bench: BPF_PROG_TEST_RUN failed (%s)\n",
            strerror(produce_errno));
    rc = 1;
  }
  const uint64_t produced = skel->bss->produced, drops = skel->bss->drops;
  printf("rate=%llu seconds=%.2f produced=%llu consumed=%llu drops=%llu "
         "events_per_s=%.0f reader_cpu=%.4f\n",
         static_cast<unsigned long long>(args.rate), elapsed,
         static_cast<unsigned long long>(produced),
         static_cast<unsigned long long>(consumed),
         static_cast<unsigned long long>(drops), consumed / elapsed,
         cpu / elapsed);
  (*reader).reset();
  event_source_bpf__destroy(skel);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (absl::Status s = ParseArgs(argc, argv, &args); !s.ok()) {
    fprintf(stderr, "loehle-event-bench: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (geteuid() != 0) {
    fprintf(stderr, "loehle-event-bench: needs root (loading a BPF program)\n");
    return 1;
  }
  return Run(args);
}
