// What was built: the version and the git commit, so that a bug report (or
// a `ctl get` reply) says what ran. The definitions are generated at every
// build by cmake/BuildInfo.cmake.

#ifndef LOEHLE_LOADER_CORE_BUILD_INFO_H_
#define LOEHLE_LOADER_CORE_BUILD_INFO_H_

#include <string>
#include <string_view>

namespace loehle {

// The project version of CMakeLists.txt, e.g. "0.1.0".
std::string_view Version();
// `git describe --always --dirty` of the source tree, e.g. "9b7d763a1c2e"
// or "9b7d763a1c2e-dirty"; LOEHLE_GIT_COMMIT where there was no checkout;
// else "unknown".
std::string_view GitCommit();

// "scx_loehle 0.1.0 (git 9b7d763a1c2e)", the --version line.
inline std::string VersionLine() {
  return "scx_loehle " + std::string(Version()) + " (git " +
         std::string(GitCommit()) + ")";
}

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_BUILD_INFO_H_
