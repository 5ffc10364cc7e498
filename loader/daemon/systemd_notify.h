// Tells systemd how the daemon is doing, for the unit's Type=notify
// (packaging/scx_loehle.service): READY=1 once the control socket answers,
// STOPPING=1 on the way out, STATUS= lines for `systemctl status`.
//
// A no-op (OK) when $NOTIFY_SOCKET is unset, i.e. not started by systemd.
// Uses libsystemd's sd_notify() where the build found libsystemd, else the
// protocol itself (one datagram to the AF_UNIX socket $NOTIFY_SOCKET names,
// "@" standing for the abstract namespace).

#ifndef LOEHLE_LOADER_DAEMON_SYSTEMD_NOTIFY_H_
#define LOEHLE_LOADER_DAEMON_SYSTEMD_NOTIFY_H_

#include <string_view>

#include "absl/status/status.h"

namespace loehle {

// Sends `state`, newline-separated assignments such as "READY=1\nSTATUS=...".
absl::Status NotifySystemd(std::string_view state);

// The protocol by hand: sends `state` to the socket `address` names (a
// path, or "@name" for the abstract namespace). Exposed for tests.
absl::Status NotifySocket(std::string_view address, std::string_view state);

}  // namespace loehle

#endif  // LOEHLE_LOADER_DAEMON_SYSTEMD_NOTIFY_H_
