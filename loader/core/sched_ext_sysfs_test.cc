// Host tests of the preflight checks on a fake sysfs tree.
#include "loader/core/sched_ext_sysfs.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loehle {
namespace {

using ::testing::HasSubstr;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/loehle-sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    std::filesystem::path p = std::filesystem::path(root_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root_;
};

TEST_F(FakeSysfs, NoSchedExtPointsAtTheVmRunner) {
  absl::Status s = CheckSchedExtAvailable(root_, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("no sched_ext"));
  EXPECT_THAT(s.message(), HasSubstr("scripts/vm"));
}

TEST_F(FakeSysfs, NotRootSaysSo) {
  Write("kernel/sched_ext/state", "disabled\n");
  absl::Status s = CheckSchedExtAvailable(root_, 1000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("root"));
}

TEST_F(FakeSysfs, AnotherSchedulerIsNamed) {
  Write("kernel/sched_ext/state", "enabled\n");
  Write("kernel/sched_ext/root/ops", "simple\n");
  absl::Status s = CheckSchedExtAvailable(root_, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("already loaded: simple"));
}

TEST_F(FakeSysfs, DisabledSchedExtAsRootIsFine) {
  Write("kernel/sched_ext/state", "disabled\n");
  EXPECT_TRUE(CheckSchedExtAvailable(root_, 0).ok());
  EXPECT_EQ(ReadSchedExtState(root_), "disabled");
  EXPECT_EQ(ReadSchedExtOps(root_), "");
}

}  // namespace
}  // namespace loehle
