// `scx_loehle trace --out=FILE [--duration=SECONDS]`: polls the daemon's
// {"cmd":"events","since":N} and writes one JSON object per pick event and
// line (TraceJson of core/event_wire.h), then a summary line on stderr with
// the events lost in the daemon's ring and dropped by the BPF ring buffer.

#ifndef LOEHLE_LOADER_CLIENT_TRACE_COMMAND_H_
#define LOEHLE_LOADER_CLIENT_TRACE_COMMAND_H_

#include "absl/status/status.h"

namespace loehle {

struct Command;

absl::Status RunTrace(const Command& command);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CLIENT_TRACE_COMMAND_H_
