#include "loader/trace.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loader/cli.h"
#include "loader/ctl.h"
#include "loader/options.h"

namespace loehle {

EventRing::EventRing(size_t capacity) : slots_(capacity > 0 ? capacity : 1) {}

void EventRing::Push(const loehle_pick_event& event) {
  slots_[(next_seq_ - 1) % slots_.size()] = event;
  ++next_seq_;
}

EventRing::Slice EventRing::Since(uint64_t since, size_t max_events) const {
  Slice slice;
  slice.newest_seq = newest_seq();
  if (since >= slice.newest_seq) return slice;
  const uint64_t held = std::min<uint64_t>(slice.newest_seq, slots_.size());
  const uint64_t oldest = slice.newest_seq - held + 1;
  uint64_t first = since + 1;
  if (first < oldest) {
    slice.lost = oldest - first;
    first = oldest;
  }
  if (max_events == 0) return slice;
  const uint64_t last =
      std::min<uint64_t>(slice.newest_seq, first + max_events - 1);
  slice.events.reserve(last - first + 1);
  for (uint64_t seq = first; seq <= last; ++seq) {
    slice.events.push_back({seq, slots_[(seq - 1) % slots_.size()]});
  }
  return slice;
}

std::string_view ClaimName(uint32_t claim) {
  switch (claim) {
    case LOEHLE_CLAIM_NONE: return "none";
    case LOEHLE_CLAIM_OK: return "ok";
    case LOEHLE_CLAIM_RETRIED: return "retried";
    case LOEHLE_CLAIM_FAILED: return "failed";
    default: return "unknown";
  }
}

nlohmann::json EventsReply(const EventRing::Slice& slice) {
  nlohmann::json fields = nlohmann::json::array();
  for (std::string_view f : kEventFields) fields.push_back(std::string(f));
  nlohmann::json events = nlohmann::json::array();
  for (const SequencedEvent& e : slice.events) {
    const loehle_pick_event& ev = e.event;
    events.push_back(nlohmann::json::array(
        {e.seq, ev.ts_ns, ev.pid, ev.cpu, ev.prev_cpu, ev.path, ev.reason,
         ev.candidates, ev.ties, ev.latency_key, ev.claim, ev.generation,
         ev.wakee_sched_idle}));
  }
  return {{"fields", std::move(fields)},
          {"events", std::move(events)},
          {"newest_seq", slice.newest_seq},
          {"lost", slice.lost}};
}

namespace {

constexpr size_t kNrFields = std::size(kEventFields);

template <typename T>
bool TakeInt(const nlohmann::json& value, T* out) {
  if (value.is_number_unsigned()) {
    *out = static_cast<T>(value.get<uint64_t>());
    return true;
  }
  if (value.is_number_integer()) {
    *out = static_cast<T>(value.get<int64_t>());
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<DecodedEvents> DecodeEventsReply(const nlohmann::json& result) {
  if (!result.is_object() || !result.contains("events") ||
      !result["events"].is_array()) {
    return absl::DataLossError("events reply without an \"events\" array");
  }
  const nlohmann::json fields = result.value("fields", nlohmann::json::array());
  if (fields.size() != kNrFields) {
    return absl::DataLossError("events reply with unexpected \"fields\"");
  }
  for (size_t i = 0; i < kNrFields; ++i) {
    if (!fields[i].is_string() || fields[i].get<std::string>() != kEventFields[i]) {
      return absl::DataLossError("events reply with unexpected \"fields\"");
    }
  }
  DecodedEvents decoded;
  if (!TakeInt(result.value("newest_seq", nlohmann::json(0)), &decoded.newest_seq) ||
      !TakeInt(result.value("lost", nlohmann::json(0)), &decoded.lost)) {
    return absl::DataLossError("events reply with a malformed newest_seq or lost");
  }
  for (const nlohmann::json& row : result["events"]) {
    if (!row.is_array() || row.size() != kNrFields) {
      return absl::DataLossError("events reply with a malformed event");
    }
    SequencedEvent e;
    loehle_pick_event& ev = e.event;
    bool ok = TakeInt(row[0], &e.seq) && TakeInt(row[1], &ev.ts_ns) &&
              TakeInt(row[2], &ev.pid) && TakeInt(row[3], &ev.cpu) &&
              TakeInt(row[4], &ev.prev_cpu) && TakeInt(row[5], &ev.path) &&
              TakeInt(row[6], &ev.reason) && TakeInt(row[7], &ev.candidates) &&
              TakeInt(row[8], &ev.ties) && TakeInt(row[9], &ev.latency_key) &&
              TakeInt(row[10], &ev.claim) && TakeInt(row[11], &ev.generation) &&
              TakeInt(row[12], &ev.wakee_sched_idle);
    if (!ok) return absl::DataLossError("events reply with a non-integer field");
    decoded.events.push_back(e);
  }
  return decoded;
}

nlohmann::ordered_json TraceJson(const SequencedEvent& e) {
  const loehle_pick_event& ev = e.event;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["seq"] = e.seq;
  out["ts_ns"] = ev.ts_ns;
  out["pid"] = ev.pid;
  out["cpu"] = ev.cpu;
  out["prev_cpu"] = ev.prev_cpu;
  out["path"] = std::string(PathName(ev.path));
  out["reason"] = std::string(ReasonName(ev.reason));
  out["candidates"] = ev.candidates;
  out["ties"] = ev.ties;
  if (ev.latency_key == LOEHLE_U64_MAX) {
    out["latency_key"] = nullptr;
  } else {
    out["latency_key"] = ev.latency_key;
  }
  out["claim"] = std::string(ClaimName(ev.claim));
  out["generation"] = ev.generation;
  out["wakee_sched_idle"] = ev.wakee_sched_idle != 0;
  return out;
}

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

// Sum of event_drops over every generation of a stats reply.
uint64_t TotalDrops(const nlohmann::json& stats) {
  uint64_t drops = 0;
  for (const nlohmann::json& gen :
       stats.value("generations", nlohmann::json::array())) {
    const nlohmann::json counters = gen.value("counters", nlohmann::json::object());
    uint64_t n = 0;
    if (TakeInt(counters.value("event_drops", nlohmann::json(0)), &n)) drops += n;
  }
  return drops;
}

}  // namespace

absl::Status RunTrace(const Command& command) {
  std::unique_ptr<FILE, FileCloser> out(
      command.out_path == "-" ? stdout : fopen(command.out_path.c_str(), "w"));
  if (!out) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", command.out_path, ": ", strerror(errno)));
  }
  absl::StatusOr<nlohmann::json> start =
      RequestResult(command.socket_path, {{"cmd", "stats"}});
  if (!start.ok()) return start.status();
  const uint64_t drops_at_start = TotalDrops(*start);
  uint64_t last_seq = 0;
  if (start->contains("events")) {
    TakeInt((*start)["events"].value("newest_seq", nlohmann::json(0)), &last_seq);
  }

  using Clock = std::chrono::steady_clock;
  const Clock::time_point began = Clock::now();
  const bool bounded = command.duration_s > 0;
  const Clock::time_point deadline =
      began + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(command.duration_s));
  StopOnSignals signals;
  uint64_t written = 0;
  uint64_t lost = 0;
  absl::Status failure;
  bool last_round = false;
  for (;;) {
    if (!last_round && (signals.stopped() || (bounded && Clock::now() >= deadline))) {
      last_round = true;  // one more request collects what is left
    }
    absl::StatusOr<nlohmann::json> reply = RequestResult(
        command.socket_path, {{"cmd", "events"}, {"since", last_seq}});
    if (!reply.ok()) {
      failure = reply.status();
      break;
    }
    absl::StatusOr<DecodedEvents> decoded = DecodeEventsReply(*reply);
    if (!decoded.ok()) {
      failure = decoded.status();
      break;
    }
    lost += decoded->lost;
    for (const SequencedEvent& e : decoded->events) {
      const std::string line = TraceJson(e).dump();
      fprintf(out.get(), "%s\n", line.c_str());
      last_seq = e.seq;
      ++written;
    }
    if (decoded->newest_seq < last_seq) last_seq = decoded->newest_seq;  // new daemon
    const bool full = decoded->events.size() >= kMaxEventsPerReply;
    if (last_round && !full) break;
    if (!full) poll(nullptr, 0, 100);  // a signal cuts the wait short
  }
  fflush(out.get());
  const double seconds =
      std::chrono::duration<double>(Clock::now() - began).count();
  uint64_t dropped = 0;
  if (failure.ok()) {
    absl::StatusOr<nlohmann::json> end =
        RequestResult(command.socket_path, {{"cmd", "stats"}});
    if (end.ok()) {
      const uint64_t drops_at_end = TotalDrops(*end);
      dropped = drops_at_end > drops_at_start ? drops_at_end - drops_at_start : 0;
    }
  }
  fprintf(stderr,
          "scx_loehle trace: %llu events in %.1f s (%.0f/s) to %s; lost %llu in "
          "the daemon's ring, %llu dropped by the BPF ring buffer\n",
          static_cast<unsigned long long>(written), seconds,
          seconds > 0 ? static_cast<double>(written) / seconds : 0.0,
          command.out_path == "-" ? "stdout" : command.out_path.c_str(),
          static_cast<unsigned long long>(lost),
          static_cast<unsigned long long>(dropped));
  if (!failure.ok()) {
    return absl::Status(failure.code(),
                        absl::StrCat("trace stopped: ", failure.message()));
  }
  return absl::OkStatus();
}

}  // namespace loehle
