// The transport alone, with protocols of its own; the control protocol's
// tests over it (framing limits, half-closed clients, peer rules, stale
// sockets) are in daemon/control_service_test.cc.
#include "loader/net/json_lines.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/net/json_lines_testing.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using ::loehle::test_support::ServerThread;
using ::loehle::test_support::TempDir;
using ::nlohmann::json;
using ::testing::HasSubstr;

// Answers {"<tag>": request}; errors as {"<tag>_error": message}. A request
// {"array":true} gets an array back, which is no reply.
class TagProtocol : public JsonLineProtocol {
 public:
  explicit TagProtocol(std::string tag) : tag_(std::move(tag)) {}
  json Answer(const json& request) override {
    if (request.is_object() && request.contains("array")) return json::array();
    return json{{tag_, request}};
  }
  json ErrorReply(const std::string& message) override {
    return json{{tag_ + "_error", message}};
  }

 private:
  std::string tag_;
};

class JsonLinesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    first_ = dir_.path() + "/first.sock";
    second_ = dir_.path() + "/second.sock";
    absl::StatusOr<std::unique_ptr<JsonLineServer>> server =
        JsonLineServer::Listen(first_, std::make_unique<TagProtocol>("a"));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_TRUE(
        server_->AddListener(second_, std::make_unique<TagProtocol>("b")).ok());
  }

  TempDir dir_;
  std::string first_;
  std::string second_;
  std::unique_ptr<JsonLineServer> server_;
};

TEST_F(JsonLinesTest, EachSocketAnswersWithItsOwnProtocol) {
  ServerThread thread(server_.get());
  absl::StatusOr<json> a = JsonRequest(first_, json{{"x", 1}});
  absl::StatusOr<json> b = JsonRequest(second_, json{{"x", 2}});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, (json{{"a", {{"x", 1}}}}));
  EXPECT_EQ(*b, (json{{"b", {{"x", 2}}}}));
  EXPECT_EQ(server_->path(), first_);
}

TEST_F(JsonLinesTest, ErrorsFoundBeforeTheProtocolUseItsErrorReply) {
  ServerThread thread(server_.get());
  absl::StatusOr<json> reply = JsonLineRequest(second_, "not json");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, (json{{"b_error", "malformed JSON request"}}));
  reply = JsonLineRequest(first_, std::string(JsonLineServer::kMaxRequestLine + 1, 'x'));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT((*reply)["a_error"].get<std::string>(), HasSubstr("longer than"));
}

TEST_F(JsonLinesTest, AReplyThatIsNotAnObjectIsDataLoss) {
  ServerThread thread(server_.get());
  absl::StatusOr<json> reply = JsonRequest(first_, json{{"array", true}});
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(JsonLinesTest, ADuplicateSocketIsRefusedAndTheOthersStay) {
  absl::Status added = server_->AddListener(first_, std::make_unique<TagProtocol>("c"));
  EXPECT_EQ(added.code(), absl::StatusCode::kFailedPrecondition);
  ServerThread thread(server_.get());
  EXPECT_TRUE(JsonRequest(first_, json::object()).ok());
  EXPECT_TRUE(JsonRequest(second_, json::object()).ok());
}

TEST(OneLineTest, NewlinesBecomeSpaces) {
  EXPECT_EQ(OneLine("a\nb\n"), "a b ");
  EXPECT_EQ(OneLine("plain"), "plain");
}

}  // namespace
}  // namespace loehle
