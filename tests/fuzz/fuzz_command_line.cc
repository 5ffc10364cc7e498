// libFuzzer target: ParseCommandLine (loader/command_line.h) on any
// argument vector (the input split at NUL bytes). Beyond not crashing: a
// parse either succeeds or gives a one-line message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "loader/command_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args;
  std::string current;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty()) args.push_back(current);
  absl::StatusOr<loehle::Command> command = loehle::ParseCommandLine(args);
  if (!command.ok() &&
      command.status().message().find('\n') != std::string::npos) {
    abort();
  }
  return 0;
}
