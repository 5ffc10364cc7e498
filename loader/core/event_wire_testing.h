// A pick event with every field set, for tests of the event wire format and
// the daemon's event ring. Only for *_test.cc files.

#ifndef LOEHLE_LOADER_CORE_EVENT_WIRE_TESTING_H_
#define LOEHLE_LOADER_CORE_EVENT_WIRE_TESTING_H_

#include <cstdint>

#include "loehle/intf.h"

namespace loehle {
namespace test_support {

// Distinct per pid: ts_ns = 1000 + pid; the rest fixed, prev_cpu -1.
inline loehle_pick_event Event(uint32_t pid) {
  loehle_pick_event e{};
  e.ts_ns = 1000 + pid;
  e.latency_key = 250;
  e.pid = pid;
  e.cpu = 3;
  e.prev_cpu = -1;
  e.generation = 2;
  e.candidates = 8;
  e.ties = 4;
  e.path = LOEHLE_PATH_FORK;
  e.reason = LOEHLE_REASON_SHALLOWEST;
  e.claim = LOEHLE_CLAIM_RETRIED;
  e.wakee_sched_idle = 1;
  return e;
}

}  // namespace test_support
}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_EVENT_WIRE_TESTING_H_
