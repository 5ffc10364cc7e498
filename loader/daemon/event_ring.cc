#include "loader/daemon/event_ring.h"

#include <algorithm>
#include <cstdint>

#include "loader/core/event_wire.h"
#include "loehle/intf.h"

namespace loehle {

EventRing::EventRing(size_t capacity) : slots_(capacity > 0 ? capacity : 1) {}

void EventRing::Push(const loehle_pick_event& event) {
  slots_[(next_seq_ - 1) % slots_.size()] = event;
  ++next_seq_;
}

EventBatch EventRing::Since(uint64_t since, size_t max_events) const {
  EventBatch slice;
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

}  // namespace loehle
