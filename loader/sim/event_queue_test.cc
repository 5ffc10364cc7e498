#include "loader/sim/event_queue.h"

#include <vector>

#include "gtest/gtest.h"

namespace loehle::sim {
namespace {

TEST(EventQueueTest, PopsInTimeOrderAndTiesInPushOrder) {
  EventQueue q;
  q.Push(30, 0, 1, 0);
  q.Push(10, 0, 2, 0);
  q.Push(20, 0, 3, 0);
  q.Push(10, 0, 4, 0);
  q.Push(10, 0, 5, 0);
  std::vector<int> order;
  while (!q.Empty()) order.push_back(q.Pop().subject);
  EXPECT_EQ(order, (std::vector<int>{2, 4, 5, 3, 1}));
}

TEST(EventQueueTest, CarriesKindAndEpoch) {
  EventQueue q;
  q.Push(5, 7, 3, 42);
  ASSERT_EQ(q.Size(), 1u);
  const Event e = q.Pop();
  EXPECT_EQ(e.time, 5u);
  EXPECT_EQ(e.kind, 7u);
  EXPECT_EQ(e.subject, 3);
  EXPECT_EQ(e.epoch, 42u);
  EXPECT_TRUE(q.Empty());
}

}  // namespace
}  // namespace loehle::sim
