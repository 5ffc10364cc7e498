#include "loader/client/trace_command.h"

#include <poll.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "loader/client/control_client.h"
#include "loader/command_line.h"
#include "loader/core/event_wire.h"
#include "loader/core/stats_snapshot.h"
#include "nlohmann/json.hpp"

namespace loehle {

namespace {

volatile sig_atomic_t g_trace_stop = 0;

void OnTraceSignal(int) { g_trace_stop = 1; }

// Turns SIGINT and SIGTERM into a flag for as long as it lives, so that the
// trace ends with its summary instead of dying mid-line.
class StopOnSignals {
 public:
  StopOnSignals() {
    g_trace_stop = 0;
    struct sigaction action = {};
    action.sa_handler = OnTraceSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  bool stopped() const { return g_trace_stop != 0; }

 private:
  struct sigaction old_int_;
  struct sigaction old_term_;
};

struct FileCloser {
  void operator()(FILE* f) const {
    if (f != nullptr && f != stdout) fclose(f);
  }
};

// The daemon's count of events the BPF ring buffer dropped, over every
// generation, and the newest event it holds.
absl::StatusOr<EventsInfo> RequestEventCounts(const std::string& socket) {
  absl::StatusOr<nlohmann::json> result =
      RequestResult(socket, {{"cmd", "stats"}, {"generations", "current"}});
  if (!result.ok()) return result.status();
  absl::StatusOr<StatsSnapshot> stats = ParseStatsSnapshot(*result);
  if (!stats.ok()) return stats.status();
  return stats->events;
}

}  // namespace

namespace {

using Clock = std::chrono::steady_clock;

struct Copied {
  uint64_t written = 0;
  uint64_t lost = 0;  // overwritten in the daemon's ring before we asked
  absl::Status failure;
};

// Copies events after `last_seq` to `out` until a signal or the deadline,
// then once more for what is left.
Copied CopyEvents(const Command& command, uint64_t last_seq, FILE* out) {
  const bool bounded = command.duration_s > 0;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(command.duration_s));
  StopOnSignals signals;
  Copied copied;
  bool last_round = false;
  for (;;) {
    if (!last_round && (signals.stopped() || (bounded && Clock::now() >= deadline))) {
      last_round = true;  // one more request collects what is left
    }
    absl::StatusOr<nlohmann::json> reply = RequestResult(
        command.socket_path, {{"cmd", "events"}, {"since", last_seq}});
    absl::StatusOr<EventBatch> batch =
        reply.ok() ? DecodeEventsReply(*reply) : absl::StatusOr<EventBatch>(reply.status());
    if (!batch.ok()) {
      copied.failure = batch.status();
      return copied;
    }
    copied.lost += batch->lost;
    for (const SequencedEvent& e : batch->events) {
      fprintf(out, "%s\n", TraceJson(e).dump().c_str());
      last_seq = e.seq;
      ++copied.written;
    }
    if (batch->newest_seq < last_seq) last_seq = batch->newest_seq;  // new daemon
    const bool full = batch->events.size() >= kMaxEventsPerReply;
    if (last_round && !full) return copied;
    if (!full) poll(nullptr, 0, 100);  // a signal cuts the wait short
  }
}

}  // namespace

absl::Status RunTrace(const Command& command) {
  std::unique_ptr<FILE, FileCloser> out(
      command.out_path == "-" ? stdout : fopen(command.out_path.c_str(), "w"));
  if (!out) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", command.out_path, ": ", strerror(errno)));
  }
  absl::StatusOr<EventsInfo> start = RequestEventCounts(command.socket_path);
  if (!start.ok()) return start.status();
  const Clock::time_point began = Clock::now();
  const Copied copied = CopyEvents(command, start->newest_seq, out.get());
  fflush(out.get());
  const double seconds = std::chrono::duration<double>(Clock::now() - began).count();
  uint64_t dropped = 0;
  if (copied.failure.ok()) {
    absl::StatusOr<EventsInfo> end = RequestEventCounts(command.socket_path);
    if (end.ok() && end->drops_total > start->drops_total) {
      dropped = end->drops_total - start->drops_total;
    }
  }
  fprintf(stderr,
          "scx_loehle trace: %llu events in %.1f s (%.0f/s) to %s; lost %llu in "
          "the daemon's ring, %llu dropped by the BPF ring buffer\n",
          static_cast<unsigned long long>(copied.written), seconds,
          seconds > 0 ? static_cast<double>(copied.written) / seconds : 0.0,
          command.out_path == "-" ? "stdout" : command.out_path.c_str(),
          static_cast<unsigned long long>(copied.lost),
          static_cast<unsigned long long>(dropped));
  if (!copied.failure.ok()) {
    return absl::Status(copied.failure.code(),
                        absl::StrCat("trace stopped: ", copied.failure.message()));
  }
  return absl::OkStatus();
}

}  // namespace loehle
