// Tests for what `scx_loehle top` says when its stats request fails.

#include "loader/client/top_command.h"

#include <gtest/gtest.h>

#include "absl/status/status.h"

namespace loehle {
namespace {

TEST(TopLostStatsTest, ATimeoutIsABusyDaemonNotAGoneOne) {
  const absl::Status late = TopLostStats(
      absl::DeadlineExceededError("no reply from /run/scx_loehle.sock within 3000 ms"),
      "enabled");
  EXPECT_TRUE(absl::IsDeadlineExceeded(late));
  EXPECT_EQ(late.message(),
            "the scheduler did not answer in time (no reply from "
            "/run/scx_loehle.sock within 3000 ms); sched_ext state is enabled");
}

TEST(TopLostStatsTest, AClosedSocketIsAGoneScheduler) {
  const absl::Status gone = TopLostStats(
      absl::UnavailableError("cannot connect to /run/scx_loehle.sock: No such file"), "");
  EXPECT_TRUE(absl::IsUnavailable(gone));
  EXPECT_EQ(gone.message(),
            "the scheduler went away (cannot connect to /run/scx_loehle.sock: "
            "No such file); sched_ext state is now unknown");
}

}  // namespace
}  // namespace loehle
