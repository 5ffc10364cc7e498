// What sysfs says about sched_ext: whether a scheduler can be attached here
// and which one is loaded. Reads files only; the daemon, the dashboard and
// the scheduler's preflight share it.

#ifndef LOEHLE_LOADER_CORE_SCHED_EXT_SYSFS_H_
#define LOEHLE_LOADER_CORE_SCHED_EXT_SYSFS_H_

#include <string>

#include "absl/status/status.h"

namespace loehle {

// Why a sched_ext scheduler cannot be attached here, or OK. `euid` is the
// caller's effective uid.
absl::Status CheckSchedExtAvailable(const std::string& sysfs_root,
                                    unsigned euid);

// /sys/kernel/sched_ext/state and root/ops, "" when unreadable.
std::string ReadSchedExtState(const std::string& sysfs_root = "/sys");
std::string ReadSchedExtOps(const std::string& sysfs_root = "/sys");

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_SCHED_EXT_SYSFS_H_
