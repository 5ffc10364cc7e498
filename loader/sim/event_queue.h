// The simulator's clock: events in time order, ties in the order they were
// pushed, so that a run is a function of its seed alone.
#ifndef LOEHLE_LOADER_SIM_EVENT_QUEUE_H_
#define LOEHLE_LOADER_SIM_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace loehle::sim {

struct Event {
  uint64_t time = 0;   // simulated ns
  uint64_t seq = 0;    // push order, breaks ties
  uint32_t kind = 0;   // the owner's enum
  int32_t subject = 0; // a CPU or a task, per kind
  uint64_t epoch = 0;  // the subject's epoch when pushed: stale if it moved on
};

class EventQueue {
 public:
  void Push(uint64_t time, uint32_t kind, int32_t subject, uint64_t epoch);
  bool Empty() const { return heap_.empty(); }
  size_t Size() const { return heap_.size(); }
  // The earliest event; the queue must not be empty.
  Event Pop();

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace loehle::sim

#endif  // LOEHLE_LOADER_SIM_EVENT_QUEUE_H_
