// Reads pick events out of the BPF ring buffer (libbpf's ring_buffer), for
// the daemon (through Scheduler) and for the event-throughput benchmark
// (tests/bench/event_bench.cc), so that both measure the same path.
//
// Contract: Open() takes the fd of a BPF_MAP_TYPE_RINGBUF map whose records
// are loehle_pick_event; shorter records are skipped. Consume() hands every
// record written so far to `sink`, in ring order, and returns how many;
// wait_fd() becomes readable when the BPF side submits with a wakeup
// (loehle_events_wakeup_due() in loehle/sample.h). Not thread-safe.

#ifndef LOEHLE_LOADER_BPF_EVENT_READER_H_
#define LOEHLE_LOADER_BPF_EVENT_READER_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "loehle/intf.h"

struct ring_buffer;  // libbpf

namespace loehle {

class EventReader {
 public:
  using Sink = std::function<void(const loehle_pick_event&)>;

  static absl::StatusOr<std::unique_ptr<EventReader>> Open(int ring_map_fd);

  EventReader(const EventReader&) = delete;
  EventReader& operator=(const EventReader&) = delete;
  ~EventReader();

  absl::StatusOr<int> Consume(Sink sink);
  int wait_fd() const;

 private:
  EventReader() = default;
  static int OnRecord(void* ctx, void* data, size_t size);

  struct ring_buffer* ring_ = nullptr;
  Sink sink_;
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_BPF_EVENT_READER_H_
