#include "loader/core/sched_ext_sysfs.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace loehle {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace

std::string ReadSchedExtState(const std::string& sysfs_root) {
  return ReadFirstLine(sysfs_root + "/kernel/sched_ext/state");
}

std::string ReadSchedExtOps(const std::string& sysfs_root) {
  return ReadFirstLine(sysfs_root + "/kernel/sched_ext/root/ops");
}

absl::Status CheckSchedExtAvailable(const std::string& sysfs_root,
                                    unsigned euid) {
  if (access((sysfs_root + "/kernel/sched_ext").c_str(), F_OK) != 0) {
    return absl::FailedPreconditionError(
        "this kernel has no sched_ext (CONFIG_SCHED_CLASS_EXT is not set, "
        "no /sys/kernel/sched_ext); run scx_loehle in a VM with "
        "`scripts/vm -- build/scx_loehle`");
  }
  if (euid != 0) {
    return absl::PermissionDeniedError(
        "scx_loehle must run as root: loading a sched_ext scheduler needs "
        "CAP_SYS_ADMIN and CAP_BPF (try sudo)");
  }
  std::string state = ReadSchedExtState(sysfs_root);
  if (!state.empty() && state != "disabled") {
    std::string ops = ReadSchedExtOps(sysfs_root);
    return absl::FailedPreconditionError(absl::StrCat(
        "another sched_ext scheduler is already loaded: ",
        ops.empty() ? "(name unknown)" : ops, " (state ", state,
        "); stop it first"));
  }
  return absl::OkStatus();
}

}  // namespace loehle
