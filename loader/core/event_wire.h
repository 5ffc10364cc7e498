// The wire format of pick events between the daemon and its clients.
//
// The daemon keeps the newest pick events drained from the BPF ring buffer
// in an EventRing (daemon/event_ring.h), each numbered with a sequence number
// (1, 2, ...), and answers {"cmd":"events","since":N} with EventsReply().
// `scx_loehle trace` (client/trace_command.h) polls that request, decodes it
// with DecodeEventsReply() and writes TraceJson() per event and line. The wire format carries events as arrays (see kEventFields), so that
// a full reply of kMaxEventsPerReply events stays far below the control
// socket's reply limit; the trace file names every field
// (Documentation/stats.md).

#ifndef LOEHLE_LOADER_CORE_EVENT_WIRE_H_
#define LOEHLE_LOADER_CORE_EVENT_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loehle/intf.h"
#include "nlohmann/json.hpp"

namespace loehle {

inline constexpr size_t kMaxEventsPerReply = 4096;

struct SequencedEvent {
  uint64_t seq = 0;
  loehle_pick_event event{};
};

// Events with seq greater than a client's `since`, oldest first.
struct EventBatch {
  std::vector<SequencedEvent> events;
  uint64_t newest_seq = 0;
  // Events after `since` that were already overwritten: the reader fell
  // more than the ring's capacity behind.
  uint64_t lost = 0;
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
nlohmann::json EventsReply(const EventBatch& batch);

// Parses an EventsReply() result; DataLoss when it is not one.
absl::StatusOr<EventBatch> DecodeEventsReply(const nlohmann::json& result);

// One line of the trace file: {"seq":..,"ts_ns":..,"pid":..,"cpu":..,
// "prev_cpu":..,"path":"fork","reason":"shallowest","candidates":..,
// "ties":..,"latency_key":N|null,"claim":"ok","generation":..,
// "wakee_sched_idle":false}, keys in that order.
nlohmann::ordered_json TraceJson(const SequencedEvent& event);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_EVENT_WIRE_H_
