#include "loader/core/event_wire.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/core/settings.h"
#include "loehle/intf.h"

namespace loehle {

std::string_view ClaimName(uint32_t claim) {
  switch (claim) {
    case LOEHLE_CLAIM_NONE: return "none";
    case LOEHLE_CLAIM_OK: return "ok";
    case LOEHLE_CLAIM_RETRIED: return "retried";
    case LOEHLE_CLAIM_FAILED: return "failed";
    default: return "unknown";
  }
}

nlohmann::json EventsReply(const EventBatch& slice) {
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

absl::StatusOr<EventBatch> DecodeEventsReply(const nlohmann::json& result) {
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
  EventBatch decoded;
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

}  // namespace loehle
