#include "loader/daemon/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#ifdef LOEHLE_HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace loehle {
namespace {

absl::Status ErrnoError(int error, std::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(error),
                      absl::StrCat(std::string(what), ": ", std::strerror(error)));
}

}  // namespace

absl::Status NotifySocket(std::string_view address, std::string_view state) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (address.size() < 2 || address.size() >= sizeof(addr.sun_path) ||
      (address[0] != '/' && address[0] != '@')) {
    return absl::InvalidArgumentError(
        absl::StrCat("NOTIFY_SOCKET is not a socket address: ", std::string(address)));
  }
  memcpy(addr.sun_path, address.data(), address.size());
  if (address[0] == '@') addr.sun_path[0] = '\0';
  const socklen_t len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoError(errno, "socket for NOTIFY_SOCKET");
  const ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                              reinterpret_cast<const sockaddr*>(&addr), len);
  const int saved = errno;
  close(fd);
  if (sent != static_cast<ssize_t>(state.size())) {
    return ErrnoError(saved, absl::StrCat("notifying ", std::string(address)));
  }
  return absl::OkStatus();
}

absl::Status NotifySystemd(std::string_view state) {
  const char* address = getenv("NOTIFY_SOCKET");
  if (address == nullptr || *address == '\0') return absl::OkStatus();
#ifdef LOEHLE_HAVE_LIBSYSTEMD
  const std::string text(state);
  const int rc = sd_notify(0, text.c_str());
  if (rc < 0) return ErrnoError(-rc, "sd_notify");
  return absl::OkStatus();
#else
  return NotifySocket(address, state);
#endif
}

}  // namespace loehle
