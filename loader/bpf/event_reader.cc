#include "loader/bpf/event_reader.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace loehle {

absl::StatusOr<std::unique_ptr<EventReader>> EventReader::Open(int ring_map_fd) {
  std::unique_ptr<EventReader> reader(new EventReader());
  reader->ring_ =
      ring_buffer__new(ring_map_fd, &EventReader::OnRecord, reader.get(), nullptr);
  if (reader->ring_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot open the event ring buffer: ", strerror(errno)));
  }
  return reader;
}

EventReader::~EventReader() {
  if (ring_ != nullptr) ring_buffer__free(ring_);
}

int EventReader::OnRecord(void* ctx, void* data, size_t size) {
  auto* self = static_cast<EventReader*>(ctx);
  if (size >= sizeof(loehle_pick_event) && self->sink_) {
    loehle_pick_event event;
    memcpy(&event, data, sizeof(event));
    self->sink_(event);
  }
  return 0;
}

absl::StatusOr<int> EventReader::Consume(Sink sink) {
  sink_ = std::move(sink);
  int n = ring_buffer__consume(ring_);
  sink_ = nullptr;
  if (n < 0) {
    return absl::InternalError(
        absl::StrCat("cannot read the event ring buffer: ", strerror(-n)));
  }
  return n;
}

int EventReader::wait_fd() const { return ring_buffer__epoll_fd(ring_); }

}  // namespace loehle
