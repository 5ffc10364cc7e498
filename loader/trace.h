// Pick events between the daemon and its clients.
//
// The daemon keeps the newest pick events drained from the BPF ring buffer
// in an EventRing, each numbered with a sequence number (1, 2, ...), and
// answers {"cmd":"events","since":N} with EventsReply(). `scx_loehle trace`
// (RunTrace) polls that request and writes one JSON object per event and
// line. The wire format carries events as arrays (see kEventFields), so that
// a full reply of kMaxEventsPerReply events stays far below the control
// socket's reply limit; the trace file names every field
// (Documentation/stats.md).

#ifndef LOEHLE_LOADER_TRACE_H_
#define LOEHLE_LOADER_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {

struct Command;

inline constexpr size_t kEventRingCapacity = 65536;
inline constexpr size_t kMaxEventsPerReply = 4096;

struct SequencedEvent {
  uint64_t seq = 0;
  loehle_pick_event event{};
};

// A fixed-size ring of the newest events. Not thread-safe.
class EventRing {
 public:
  explicit EventRing(size_t capacity = kEventRingCapacity);

  void Push(const loehle_pick_event& event);

  // Sequence number of the newest event, 0 before the first.
  uint64_t newest_seq() const { return next_seq_ - 1; }
  size_t capacity() const { return slots_.size(); }

  struct Slice {
    std::vector<SequencedEvent> events;  // seq > since, oldest first
    uint64_t newest_seq = 0;
    // Events after `since` that were already overwritten: the reader fell
    // more than capacity() events behind.
    uint64_t lost = 0;
  };
  // At most `max_events` events with seq > since. A `since` beyond
  // newest_seq() (a client of an earlier daemon) gives no events; the client
  // resynchronises on newest_seq.
  Slice Since(uint64_t since, size_t max_events) const;

 private:
  std::vector<loehle_pick_event> slots_;
  uint64_t next_seq_ = 1;
};

// "none", "ok", "retried", "failed"; "unknown" out of range.
std::string_view ClaimName(uint32_t claim);

// The column order of the wire format.
inline constexpr std::string_view kEventFields[] = {
    "seq",        "ts_ns",   "pid",   "cpu",         "prev_cpu",
    "path",       "reason",  "candidates", "ties",   "latency_key",
    "claim",      "generation", "wakee_sched_idle"};

// The result of an "events" request:
// {"fields":[...kEventFields],"events":[[...],...],"newest_seq":N,"lost":L}
nlohmann::json EventsReply(const EventRing::Slice& slice);

struct DecodedEvents {
  std::vector<SequencedEvent> events;
  uint64_t newest_seq = 0;
  uint64_t lost = 0;
};
// Parses an EventsReply() result; DataLoss when it is not one.
absl::StatusOr<DecodedEvents> DecodeEventsReply(const nlohmann::json& result);

// One line of the trace file: {"seq":..,"ts_ns":..,"pid":..,"cpu":..,
// "prev_cpu":..,"path":"fork","reason":"shallowest","candidates":..,
// "ties":..,"latency_key":N|null,"claim":"ok","generation":..,
// "wakee_sched_idle":false}, keys in that order.
nlohmann::ordered_json TraceJson(const SequencedEvent& event);

// `scx_loehle trace --out=FILE [--duration=S]`.
absl::Status RunTrace(const Command& command);

}  // namespace loehle

#endif  // LOEHLE_LOADER_TRACE_H_
