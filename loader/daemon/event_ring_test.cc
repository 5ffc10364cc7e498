#include "loader/daemon/event_ring.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/event_wire_testing.h"
#include "loader/core/event_wire.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

using ::loehle::test_support::Event;

TEST(EventRingTest, EmptyRingHasNothing) {
  EventRing ring(4);
  EventBatch slice = ring.Since(0, 10);
  EXPECT_TRUE(slice.events.empty());
  EXPECT_EQ(slice.newest_seq, 0u);
  EXPECT_EQ(slice.lost, 0u);
}

TEST(EventRingTest, SequenceNumbersStartAtOneAndSinceIsExclusive) {
  EventRing ring(8);
  for (uint32_t pid = 1; pid <= 5; ++pid) ring.Push(Event(pid));
  EventBatch slice = ring.Since(2, 10);
  ASSERT_EQ(slice.events.size(), 3u);
  EXPECT_EQ(slice.events[0].seq, 3u);
  EXPECT_EQ(slice.events[0].event.pid, 3u);
  EXPECT_EQ(slice.events[2].seq, 5u);
  EXPECT_EQ(slice.newest_seq, 5u);
  EXPECT_EQ(slice.lost, 0u);
  EXPECT_TRUE(ring.Since(5, 10).events.empty());
}

TEST(EventRingTest, MaxEventsLimitsTheReplyFromTheOldest) {
  EventRing ring(8);
  for (uint32_t pid = 1; pid <= 6; ++pid) ring.Push(Event(pid));
  EventBatch slice = ring.Since(0, 4);
  ASSERT_EQ(slice.events.size(), 4u);
  EXPECT_EQ(slice.events.front().seq, 1u);
  EXPECT_EQ(slice.events.back().seq, 4u);
  EXPECT_EQ(slice.newest_seq, 6u);
  EXPECT_TRUE(ring.Since(0, 0).events.empty());
}

TEST(EventRingTest, OverwrittenEventsAreCountedAsLost) {
  EventRing ring(4);
  for (uint32_t pid = 1; pid <= 10; ++pid) ring.Push(Event(pid));
  // Held: 7..10. A reader at 2 missed 3..6.
  EventBatch slice = ring.Since(2, 100);
  EXPECT_EQ(slice.lost, 4u);
  ASSERT_EQ(slice.events.size(), 4u);
  EXPECT_EQ(slice.events.front().seq, 7u);
  EXPECT_EQ(slice.events.front().event.pid, 7u);
  EXPECT_EQ(slice.events.back().event.pid, 10u);
  EXPECT_EQ(ring.Since(6, 100).lost, 0u);
}

TEST(EventRingTest, ReaderAheadOfTheRingGetsNothing) {
  EventRing ring(4);
  ring.Push(Event(1));
  EventBatch slice = ring.Since(1000, 10);
  EXPECT_TRUE(slice.events.empty());
  EXPECT_EQ(slice.newest_seq, 1u);
  EXPECT_EQ(slice.lost, 0u);
}

TEST(EventsReplyTest, RoundTripsThroughTheWireFormat) {
  EventRing ring(4);
  for (uint32_t pid = 1; pid <= 6; ++pid) ring.Push(Event(pid));
  loehle_pick_event unpublished = Event(9);
  unpublished.latency_key = LOEHLE_U64_MAX;
  ring.Push(unpublished);
  // Through text, as over the socket.
  nlohmann::json reply = nlohmann::json::parse(EventsReply(ring.Since(1, 100)).dump());
  absl::StatusOr<EventBatch> decoded = DecodeEventsReply(reply);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->newest_seq, 7u);
  EXPECT_EQ(decoded->lost, 2u);
  ASSERT_EQ(decoded->events.size(), 4u);
  EXPECT_EQ(decoded->events[0].seq, 4u);
  EXPECT_EQ(TraceJson(decoded->events[0]), TraceJson({4, Event(4)}));
  EXPECT_EQ(decoded->events[3].event.latency_key, LOEHLE_U64_MAX);
  EXPECT_EQ(decoded->events[3].event.prev_cpu, -1);
}

TEST(EventsReplyTest, AFullReplyStaysUnderTheSocketLimit) {
  EventRing ring(kMaxEventsPerReply);
  loehle_pick_event big = Event(4000000);
  big.ts_ns = 9'000'000'000'000'000'000u;
  big.latency_key = LOEHLE_U64_MAX;
  for (size_t i = 0; i < kMaxEventsPerReply; ++i) ring.Push(big);
  const std::string line = EventsReply(ring.Since(0, kMaxEventsPerReply)).dump();
  EXPECT_LT(line.size(), 1024u * 1024u / 2);
}

}  // namespace
}  // namespace loehle
