#include "loader/sim/event_queue.h"

namespace loehle::sim {

void EventQueue::Push(uint64_t time, uint32_t kind, int32_t subject, uint64_t epoch) {
  heap_.push(Event{time, next_seq_++, kind, subject, epoch});
}

Event EventQueue::Pop() {
  Event event = heap_.top();
  heap_.pop();
  return event;
}

}  // namespace loehle::sim
