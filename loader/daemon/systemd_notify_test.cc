#include "loader/daemon/systemd_notify.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace loehle {
namespace {

// A datagram socket bound to `address` (a path, or "@name": abstract), as
// systemd's notify socket is.
class NotifyListener {
 public:
  explicit NotifyListener(const std::string& address) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, address.data(), address.size());
    if (address[0] == '@') addr.sun_path[0] = '\0';
    bound_ = bind(fd_, reinterpret_cast<const sockaddr*>(&addr),
                  static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) +
                                         address.size())) == 0;
  }
  ~NotifyListener() { close(fd_); }
  bool bound() const { return bound_; }
  std::string Receive() {
    char buf[512];
    const ssize_t n = recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

TEST(SystemdNotifyTest, SendsToAPathAndToAnAbstractName) {
  const std::string path = testing::TempDir() + "/notify-" + std::to_string(getpid());
  unlink(path.c_str());
  NotifyListener at_path(path);
  ASSERT_TRUE(at_path.bound());
  ASSERT_TRUE(NotifySocket(path, "READY=1").ok());
  EXPECT_EQ(at_path.Receive(), "READY=1");
  unlink(path.c_str());

  const std::string abstract = "@loehle-notify-test-" + std::to_string(getpid());
  NotifyListener at_name(abstract);
  ASSERT_TRUE(at_name.bound());
  ASSERT_TRUE(NotifySocket(abstract, "STOPPING=1").ok());
  EXPECT_EQ(at_name.Receive(), "STOPPING=1");
}

TEST(SystemdNotifyTest, RefusesWhatIsNoSocketAddress) {
  EXPECT_FALSE(NotifySocket("relative", "READY=1").ok());
  EXPECT_FALSE(NotifySocket("@", "READY=1").ok());
  EXPECT_FALSE(NotifySocket(std::string(200, '/'), "READY=1").ok());
  EXPECT_FALSE(NotifySocket("/nonexistent/dir/sock", "READY=1").ok());
}

// Through $NOTIFY_SOCKET, as the daemon calls it (sd_notify() when built
// with libsystemd); nothing at all without it.
TEST(SystemdNotifyTest, FollowsNotifySocketAndIsANoOpWithoutIt) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_TRUE(NotifySystemd("READY=1").ok());
  const std::string abstract = "@loehle-notify-env-" + std::to_string(getpid());
  NotifyListener listener(abstract);
  ASSERT_TRUE(listener.bound());
  setenv("NOTIFY_SOCKET", abstract.c_str(), 1);
  EXPECT_TRUE(NotifySystemd("READY=1\nSTATUS=attached").ok());
  unsetenv("NOTIFY_SOCKET");
  EXPECT_EQ(listener.Receive(), "READY=1\nSTATUS=attached");
}

}  // namespace
}  // namespace loehle
