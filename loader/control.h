// scx_loehle's control socket: a UNIX stream socket on which clients send one
// JSON object per line and get one JSON object per line back.
//
// Requests:
//   {"cmd":"get"}                   current settings
//   {"cmd":"set","args":{...}}      change settings (ControlHandler::HandleSet)
//   {"cmd":"stats"}                 statistics, every generation
//   {"cmd":"stats","generations":"current"}
//                                   the same with only the current generation
//                                   (what `top` polls: a fraction of the
//                                   cost once many generations have run)
//   {"cmd":"events","since":N}      pick events after sequence number N
// Replies:
//   {"ok":true,"result":<handler json>}
//   {"ok":false,"error":"<one line>"}
// A bad request (malformed JSON, not an object, missing or unknown "cmd",
// "set" without an "args" object, a line longer than kMaxRequestLine, a
// handler error) gets an error reply and the connection carries on. Blank
// lines are ignored. Only root and the server's own effective uid may talk
// to it (SO_PEERCRED); anyone else gets one error reply and is disconnected.

#ifndef LOEHLE_LOADER_CONTROL_H_
#define LOEHLE_LOADER_CONTROL_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"

namespace loehle {

// What the server asks of the scheduler. All calls are made from within
// ControlServer::Poll, on the thread that calls it.
// Which generations a stats reply carries ("generations": "all" or
// "current").
enum class StatsScope { kAll, kCurrent };

class ControlHandler {
 public:
  virtual ~ControlHandler() = default;
  // The reply's "result" for {"cmd":"get"}.
  virtual nlohmann::json HandleGet() = 0;
  // {"cmd":"set","args":args}; args is always an object. An error status
  // becomes the reply's "error" (its message, on one line).
  virtual absl::StatusOr<nlohmann::json> HandleSet(
      const nlohmann::json& args) = 0;
  // The reply's "result" for {"cmd":"stats"}: with kCurrent only the
  // current generation is in "generations".
  virtual nlohmann::json HandleStats(StatsScope scope) = 0;
  // {"cmd":"events","since":since}; since is a non-negative integer (0 when
  // the request has none). Handlers without events keep the default.
  virtual absl::StatusOr<nlohmann::json> HandleEvents(uint64_t since) {
    (void)since;
    return absl::UnimplementedError("this server keeps no events");
  }
};

class ControlServer {
 public:
  // Longest request line accepted, excluding its newline.
  static constexpr size_t kMaxRequestLine = 64 * 1024;
  static constexpr size_t kMaxClients = 32;
  // A client that lets this much reply data pile up unread is dropped.
  static constexpr size_t kMaxPendingOutput = 1024 * 1024;

  // Creates a UNIX stream socket at `path` with mode 0600 and listens on it.
  // A stale socket file (nothing accepts on it) is replaced; a live one gives
  // FailedPrecondition "another scx_loehle is already serving <path>"; a
  // file that is not a socket is left alone (FailedPrecondition). The parent
  // directory must exist. `handler` must outlive the server.
  static absl::StatusOr<std::unique_ptr<ControlServer>> Listen(
      const std::string& path, ControlHandler* handler);

  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;
  // Closes every descriptor and removes the socket file, unless it has been
  // replaced by somebody else's in the meantime.
  ~ControlServer();

  // Waits up to timeout_ms (0: just look; negative: forever) for activity,
  // then accepts new clients, reads what they sent, answers every complete
  // line and writes what it can. All sockets are non-blocking, so a slow or
  // stuck client never holds Poll up beyond timeout_ms. Returns early when a
  // signal interrupts the wait. Not thread-safe: call it from one thread.
  // Also returns when one of `wake_fds` becomes readable (the daemon's
  // event ring and signalfd); negative fds are ignored.
  void Poll(int timeout_ms, absl::Span<const int> wake_fds = {});

  const std::string& path() const { return path_; }
  // The listening descriptor, for callers that want to poll it themselves.
  int listen_fd() const { return listen_fd_; }
  size_t client_count() const { return clients_.size(); }

 private:
  struct Client {
    int fd = -1;
    std::string input;        // bytes after the last complete line
    std::string output;       // reply bytes not yet written
    bool discarding = false;  // inside an oversized line
    bool closing = false;     // close once output is written
    bool failed = false;      // close now
  };

  ControlServer(std::string path, int listen_fd, dev_t dev, ino_t ino,
                ControlHandler* handler);

  void AcceptClients();
  void ReadFrom(Client& client);
  void ConsumeLines(Client& client, bool at_eof);
  void Reply(Client& client, const nlohmann::json& reply);
  void Flush(Client& client);
  nlohmann::json Answer(const std::string& line);

  std::string path_;
  int listen_fd_;
  dev_t dev_;  // identity of the socket file we created, so that the
  ino_t ino_;  // destructor never removes another server's socket
  ControlHandler* handler_;
  std::vector<std::unique_ptr<Client>> clients_;
};

// Connects to the server at `path`, sends `request` as one line and returns
// the parsed reply line (the whole {"ok":...} object). Fails with
// Unavailable "cannot connect to <path>: No such file or directory (is
// scx_loehle running?)" and the like, DeadlineExceeded when no full reply
// arrives within timeout_ms, DataLoss when the reply is not a JSON object.
absl::StatusOr<nlohmann::json> ControlRequest(const std::string& path,
                                              const nlohmann::json& request,
                                              int timeout_ms = 3000);

// The same with the request line as given, not necessarily valid JSON (a
// newline is added when missing): `scx_loehle ctl send` and tests of how the
// server answers malformed requests.
absl::StatusOr<nlohmann::json> ControlRequestLine(const std::string& path,
                                                  std::string line,
                                                  int timeout_ms = 3000);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CONTROL_H_
