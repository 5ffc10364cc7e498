// The daemon's memory of pick events: the newest kEventRingCapacity events
// drained from the BPF ring buffer, numbered 1, 2, ... so that clients
// (`scx_loehle trace`) can ask for what came after the last one they saw.
// The wire format of a reply is core/event_wire.h.

#ifndef LOEHLE_LOADER_DAEMON_EVENT_RING_H_
#define LOEHLE_LOADER_DAEMON_EVENT_RING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "loader/core/event_wire.h"
#include "loehle/intf.h"

namespace loehle {

inline constexpr size_t kEventRingCapacity = 65536;

// A fixed-size ring of the newest events. Not thread-safe.
class EventRing {
 public:
  explicit EventRing(size_t capacity = kEventRingCapacity);

  void Push(const loehle_pick_event& event);

  // Sequence number of the newest event, 0 before the first.
  uint64_t newest_seq() const { return next_seq_ - 1; }
  size_t capacity() const { return slots_.size(); }

  // At most `max_events` events with seq > since. A `since` beyond
  // newest_seq() (a client of an earlier daemon) gives no events; the client
  // resynchronises on newest_seq.
  EventBatch Since(uint64_t since, size_t max_events) const;

 private:
  std::vector<loehle_pick_event> slots_;
  uint64_t next_seq_ = 1;
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_DAEMON_EVENT_RING_H_
