#include "loader/trace.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

loehle_pick_event Event(uint32_t pid) {
  loehle_pick_event e{};
  e.ts_ns = 1000 + pid;
  e.latency_key = 250;
  e.pid = pid;
  e.cpu = 3;
  e.prev_cpu = -1;
  e.generation = 2;
  e.candidates = 8;
  e.ties = 4;
  e.path = LOEHLE_PATH_FORK;
  e.reason = LOEHLE_REASON_SHALLOWEST;
  e.claim = LOEHLE_CLAIM_RETRIED;
  e.wakee_sched_idle = 1;
  return e;
}

TEST(EventRingTest, EmptyRingHasNothing) {
  EventRing ring(4);
  EventRing::Slice slice = ring.Since(0, 10);
  EXPECT_TRUE(slice.events.empty());
  EXPECT_EQ(slice.newest_seq, 0u);
  EXPECT_EQ(slice.lost, 0u);
}

TEST(EventRingTest, SequenceNumbersStartAtOneAndSinceIsExclusive) {
  EventRing ring(8);
  for (uint32_t pid = 1; pid <= 5; ++pid) ring.Push(Event(pid));
  EventRing::Slice slice = ring.Since(2, 10);
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
  EventRing::Slice slice = ring.Since(0, 4);
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
  EventRing::Slice slice = ring.Since(2, 100);
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
  EventRing::Slice slice = ring.Since(1000, 10);
  EXPECT_TRUE(slice.events.empty());
  EXPECT_EQ(slice.newest_seq, 1u);
  EXPECT_EQ(slice.lost, 0u);
}

TEST(TraceJsonTest, NamesEveryField) {
  nlohmann::json j = nlohmann::json::parse(TraceJson({42, Event(7)}).dump());
  EXPECT_EQ(j, nlohmann::json::parse(R"({
    "seq":42,"ts_ns":1007,"pid":7,"cpu":3,"prev_cpu":-1,"path":"fork",
    "reason":"shallowest","candidates":8,"ties":4,"latency_key":250,
    "claim":"retried","generation":2,"wakee_sched_idle":true})"));
}

TEST(TraceJsonTest, UnpublishedLatencyKeyIsNull) {
  loehle_pick_event e = Event(1);
  e.latency_key = LOEHLE_U64_MAX;
  e.claim = LOEHLE_CLAIM_NONE;
  e.path = LOEHLE_PATH_SYNC;
  e.reason = LOEHLE_REASON_PREV_BUSY;
  e.wakee_sched_idle = 0;
  nlohmann::json j = nlohmann::json::parse(TraceJson({1, e}).dump());
  EXPECT_TRUE(j["latency_key"].is_null());
  EXPECT_EQ(j["claim"], "none");
  EXPECT_EQ(j["path"], "sync");
  EXPECT_EQ(j["reason"], "prev_busy");
  EXPECT_EQ(j["wakee_sched_idle"], false);
}

TEST(TraceJsonTest, KeysComeInTheDocumentedOrder) {
  EXPECT_EQ(TraceJson({1, Event(2)}).dump().substr(0, 30), "{\"seq\":1,\"ts_ns\":1002,\"pid\":2,");
}

TEST(TraceJsonTest, ClaimNames) {
  EXPECT_EQ(ClaimName(LOEHLE_CLAIM_OK), "ok");
  EXPECT_EQ(ClaimName(LOEHLE_CLAIM_FAILED), "failed");
  EXPECT_EQ(ClaimName(99), "unknown");
}

TEST(EventsReplyTest, RoundTripsThroughTheWireFormat) {
  EventRing ring(4);
  for (uint32_t pid = 1; pid <= 6; ++pid) ring.Push(Event(pid));
  loehle_pick_event unpublished = Event(9);
  unpublished.latency_key = LOEHLE_U64_MAX;
  ring.Push(unpublished);
  // Through text, as over the socket.
  nlohmann::json reply = nlohmann::json::parse(EventsReply(ring.Since(1, 100)).dump());
  absl::StatusOr<DecodedEvents> decoded = DecodeEventsReply(reply);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->newest_seq, 7u);
  EXPECT_EQ(decoded->lost, 2u);
  ASSERT_EQ(decoded->events.size(), 4u);
  EXPECT_EQ(decoded->events[0].seq, 4u);
  EXPECT_EQ(TraceJson(decoded->events[0]), TraceJson({4, Event(4)}));
  EXPECT_EQ(decoded->events[3].event.latency_key, LOEHLE_U64_MAX);
  EXPECT_EQ(decoded->events[3].event.prev_cpu, -1);
}

TEST(EventsReplyTest, DecodeRejectsWhatIsNotAReply) {
  EXPECT_FALSE(DecodeEventsReply(nlohmann::json::object()).ok());
  nlohmann::json reply = EventsReply(EventRing(2).Since(0, 1));
  reply["fields"][0] = "sequence";
  EXPECT_FALSE(DecodeEventsReply(reply).ok());
  reply = EventsReply(EventRing(2).Since(0, 1));
  reply["events"].push_back(nlohmann::json::array({1, 2}));
  EXPECT_FALSE(DecodeEventsReply(reply).ok());
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
