#include "loader/core/event_wire.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/event_wire_testing.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

using ::loehle::test_support::Event;

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

TEST(EventsReplyTest, DecodeRejectsWhatIsNotAReply) {
  EXPECT_FALSE(DecodeEventsReply(nlohmann::json::object()).ok());
  nlohmann::json reply = EventsReply(EventBatch{});
  reply["fields"][0] = "sequence";
  EXPECT_FALSE(DecodeEventsReply(reply).ok());
  reply = EventsReply(EventBatch{});
  reply["events"].push_back(nlohmann::json::array({1, 2}));
  EXPECT_FALSE(DecodeEventsReply(reply).ok());
}

}  // namespace
}  // namespace loehle
