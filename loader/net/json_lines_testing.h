// Test helpers for servers of net/json_lines.h: a temporary folder for
// sockets and a thread that polls a server while a test blocks in a request.
// Only for *_test.cc files.

#ifndef LOEHLE_LOADER_NET_JSON_LINES_TESTING_H_
#define LOEHLE_LOADER_NET_JSON_LINES_TESTING_H_

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>

#include "loader/net/json_lines.h"

namespace loehle {
namespace test_support {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "loehle_ctl_XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Polls the server on its own thread, for the blocking ControlRequest.
class ServerThread {
 public:
  explicit ServerThread(JsonLineServer* server)
      : thread_([this, server] {
          while (!stop_.load()) server->Poll(10);
        }) {}
  ~ServerThread() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace test_support
}  // namespace loehle

#endif  // LOEHLE_LOADER_NET_JSON_LINES_TESTING_H_
