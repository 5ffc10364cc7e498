#include "loader/core/build_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace loehle {
namespace {

TEST(BuildInfoTest, VersionLineNamesTheVersionAndTheCommit) {
  EXPECT_THAT(VersionLine(),
              ::testing::MatchesRegex("scx_loehle [0-9]+\\.[0-9]+\\.[0-9]+ "
                                      "\\(git [A-Za-z0-9._+-]+\\)"));
  EXPECT_FALSE(GitCommit().empty());
}

// The man page's header carries the same version as the binary.
TEST(BuildInfoTest, TheManPageHasTheProjectVersion) {
  std::ifstream in(std::string(LOEHLE_SOURCE_DIR) + "/Documentation/scx_loehle.8");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), ::testing::HasSubstr("\"scx_loehle " + std::string(Version()) + "\""));
}

}  // namespace
}  // namespace loehle
