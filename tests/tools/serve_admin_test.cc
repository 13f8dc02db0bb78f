// SPDX-License-Identifier: Apache-2.0
// Tests the admin HTTP API (docs/OPERATIONS.md "Admin API") over real HTTP (curl) against a
// real `scenecrdt serve`: 404 without --admin-token-file, 401 (logged, counted, the token
// never in the log) for a missing or wrong token, the scene list, one scene's figures and a
// WAL checkpoint for the right one, deleting a scene (its writer closed with scene_deleted,
// its rows gone across a restart, the other scenes untouched), and a refused start for a
// token file that is too short.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/protocol/session/sequence.h"
#include "tests/tools/serve_process.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;
const std::string kExamplesDir = SCENECRDT_EXAMPLES_DIR;
const std::string kToken = "0123456789abcdef0123456789abcdef";

struct Http {
  int status = 0;
  std::string body;
};

// `curl -X METHOD URL` with an optional bearer token.
Http Curl(const ScratchDir& scratch, const std::string& method, const std::string& url,
          const std::string& token = {}) {
  std::vector<std::string> args = {"-s", "-S", "--max-time",     "10", "-o",
                                   "-",  "-w", "\n%{http_code}", "-X", method};
  if (!token.empty()) {
    args.push_back("-H");
    args.push_back("Authorization: Bearer " + token);
  }
  args.push_back(url);
  const RunResult r = RunProcess("/usr/bin/curl", args, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Http out;
  const auto nl = r.out.rfind('\n');
  if (nl == std::string::npos) return out;
  out.status = std::atoi(r.out.c_str() + nl + 1);
  out.body = r.out.substr(0, nl);
  return out;
}

std::string Base(const ServeProcess& serve) {
  return "http://127.0.0.1:" + std::to_string(serve.http_port());
}

// An envelope client on a blocking loopback socket (reads time out after 10 s): what a writer
// of the scene sees, frame by frame.
class RawClient {
 public:
  explicit RawClient(unsigned port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    timeval tv{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  bool Send(const session::Frame& frame) {
    const std::vector<uint8_t> bytes = session::BuildFrame(frame);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  // The next frame, or nullopt at EOF, a timeout or a frame that does not read. Views in it
  // (Crdt::data) live until the next call.
  std::optional<session::Frame> Read() {
    uint8_t prefix[4];
    if (!ReadAll(prefix, sizeof(prefix))) return std::nullopt;
    const auto size = session::PeekFrameSize(prefix);
    if (!size || *size < 4 || *size > (8u << 20)) return std::nullopt;
    buffer_.assign((*size + 7) / 8, 0);  // 8-byte aligned (ReadFrame)
    auto* bytes = reinterpret_cast<uint8_t*>(buffer_.data());
    std::memcpy(bytes, prefix, sizeof(prefix));
    if (!ReadAll(bytes + 4, *size - 4)) return std::nullopt;
    auto frame = session::ReadFrame({bytes, *size});
    if (!frame.has_value()) return std::nullopt;
    return frame.value();
  }

 private:
  bool ReadAll(uint8_t* out, std::size_t n) {
    while (n > 0) {
      const ssize_t got = ::recv(fd_, out, n, 0);
      if (got <= 0) return false;
      out += got;
      n -= static_cast<std::size_t>(got);
    }
    return true;
  }

  int fd_;
  bool connected_ = false;
  std::vector<uint64_t> buffer_;
};

// One PUT of a plain component (not a Transform) on entity `number`.
std::vector<uint8_t> Put(uint32_t number, uint32_t timestamp) {
  static const uint8_t kPayload[] = {'h', 'i'};
  protocol::CrdtMessage m;
  m.type = protocol::MessageType::kPutComponent;
  m.entity = protocol::MakeEntityId(number, 0);
  m.component = 2000;
  m.timestamp = timestamp;
  m.data = kPayload;
  std::vector<uint8_t> out;
  protocol::AppendMessage(m, out);
  return out;
}

// A client's Crdt frame.
session::Crdt Frame(uint64_t frame_sequence, const std::vector<uint8_t>& dcl) {
  session::Crdt crdt;
  crdt.frame_sequence = frame_sequence;
  crdt.data = dcl;
  return crdt;
}

// The "stateHash" of `scenecrdt pull` of `scene`, "" when it fails.
std::string PulledHash(const ScratchDir& scratch, const ServeProcess& serve,
                       const std::string& scene) {
  const RunResult r =
      RunProcess(kCli, {"pull", "--server", serve.tcp_url(), "--scene", scene}, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto doc = json::ReadJson(r.out);
  if (!doc.has_value()) return {};
  const json::Json* hash = json::Member(*doc, "stateHash");
  return hash && hash->is_string() ? hash->get<std::string>() : std::string();
}

TEST(ServeAdminTest, WithoutATokenFileEveryAdminPathIs404) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started()) << serve.log();
  EXPECT_EQ(Curl(scratch, "GET", Base(serve) + "/admin/scenes").status, 404);
  EXPECT_EQ(Curl(scratch, "GET", Base(serve) + "/admin/scenes", kToken).status, 404);
  EXPECT_EQ(Curl(scratch, "DELETE", Base(serve) + "/admin/scenes/x", kToken).status, 404);
}

TEST(ServeAdminTest, TheTokenGuardsTheListAndOneScenesFigures) {
  ScratchDir scratch;
  WriteText(scratch.File("admin.token"), kToken + "\n");
  ServeProcess serve(kCli, scratch.File("data"),
                     {"--admin-token-file", scratch.File("admin.token").string()});
  ASSERT_TRUE(serve.started()) << serve.log();
  const RunResult sent = RunProcess(kCli,
                                    {"send", "--server", serve.tcp_url(), "--scene", "kept",
                                     "--timeout", "20", kExamplesDir + "/sample_scene.dcl"},
                                    scratch);
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
  const std::string list = Base(serve) + "/admin/scenes";

  EXPECT_EQ(Curl(scratch, "GET", list).status, 401);
  EXPECT_EQ(Curl(scratch, "GET", list, "wrong-token-wrong-token-wrong-tok").status, 401);
  EXPECT_EQ(Curl(scratch, "GET", list, kToken + "x").status, 401);
  EXPECT_TRUE(serve.WaitForLog("kind=admin", 3)) << serve.log();
  EXPECT_NE(serve.log().find("reason=unauthorized"), std::string::npos) << serve.log();
  EXPECT_EQ(serve.log().find("wrong-token"), std::string::npos) << serve.log();
  const Http metrics = Curl(scratch, "GET", Base(serve) + "/metrics");
  EXPECT_NE(metrics.body.find("scenecrdt_admin_refused_total 3"), std::string::npos);

  const Http scenes = Curl(scratch, "GET", list, kToken);
  ASSERT_EQ(scenes.status, 200) << scenes.body;
  auto doc = json::ReadJson(scenes.body);
  ASSERT_TRUE(doc.has_value()) << scenes.body;
  const json::Json* array = json::Member(*doc, "scenes");
  ASSERT_TRUE(array && array->is_array()) << scenes.body;
  bool found = false;
  for (const json::Json& s : *array) {
    const json::Json* name = json::Member(s, "name");
    if (name && name->is_string() && name->get<std::string>() == "kept") found = true;
  }
  EXPECT_TRUE(found) << scenes.body;

  const Http one = Curl(scratch, "GET", list + "/kept", kToken);
  ASSERT_EQ(one.status, 200) << one.body;
  auto scene = json::ReadJson(one.body);
  ASSERT_TRUE(scene.has_value()) << one.body;
  for (const char* field : {"entities", "bytes", "sessions", "sequences"}) {
    EXPECT_NE(json::Member(*scene, field), nullptr) << field << " " << one.body;
  }
  const json::Json* bytes = json::Member(*scene, "bytes");
  ASSERT_TRUE(bytes && bytes->is_number()) << one.body;
  EXPECT_GT(bytes->get<double>(), 0) << one.body;

  // Nothing stored: 404, and the inspection did not create the scene.
  EXPECT_EQ(Curl(scratch, "GET", list + "/nope", kToken).status, 404);
  EXPECT_EQ(Curl(scratch, "GET", list, kToken).body.find("\"nope\""), std::string::npos);
  EXPECT_EQ(Curl(scratch, "GET", list + "/bad%20name", kToken).status, 400);
  EXPECT_EQ(Curl(scratch, "DELETE", list + "/nope", kToken).status, 404);
  EXPECT_EQ(Curl(scratch, "DELETE", list + "/kept", "wrong-token-wrong-token-wrong-tok").status,
            401);
  // The WAL moves into the database file and is truncated (nothing writes meanwhile).
  const Http checkpoint = Curl(scratch, "POST", list + "/kept/checkpoint", kToken);
  EXPECT_EQ(checkpoint.status, 200) << checkpoint.body;
  EXPECT_NE(checkpoint.body.find("\"database_bytes\""), std::string::npos) << checkpoint.body;
  EXPECT_EQ(std::filesystem::file_size(scratch.File("data") / "scenes.sqlite3-wal"), 0u);
  EXPECT_EQ(Curl(scratch, "GET", list + "/kept/checkpoint", kToken).status, 405);
  EXPECT_EQ(Curl(scratch, "POST", list, kToken).status, 405);
}

// A writer joined and writing is closed with scene_deleted; the scene pulls empty, before and
// after a restart, its name is no longer listed and a resume position of its old life is not
// resumed; another scene keeps its state hash.
TEST(ServeAdminTest, DeleteClosesTheWriterAndRemovesTheRowsDurably) {
  ScratchDir scratch;
  WriteText(scratch.File("admin.token"), kToken + "\n");
  const std::vector<std::string> args = {"--admin-token-file",
                                         scratch.File("admin.token").string()};
  auto serve = std::make_unique<ServeProcess>(kCli, scratch.File("data"), args);
  ASSERT_TRUE(serve->started()) << serve->log();
  const RunResult sent = RunProcess(kCli,
                                    {"send", "--server", serve->tcp_url(), "--scene", "kept",
                                     "--timeout", "20", kExamplesDir + "/sample_scene.dcl"},
                                    scratch);
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
  const std::string kept_hash = PulledHash(scratch, *serve, "kept");
  const std::string empty_hash = PulledHash(scratch, *serve, "never-written");
  ASSERT_FALSE(kept_hash.empty());
  ASSERT_NE(kept_hash, empty_hash);

  // The writer: joined, one frame acked (durable), a second one sent just before the DELETE.
  RawClient writer(serve->tcp_port());
  ASSERT_TRUE(writer.connected());
  session::Hello hello;
  hello.scene = "doomed";
  ASSERT_TRUE(writer.Send(hello));
  uint64_t last_sequence = 0;
  const std::vector<uint8_t> first = Put(600, 1);
  ASSERT_TRUE(writer.Send(Frame(1, first)));
  bool acked = false;
  while (!acked) {
    auto frame = writer.Read();
    ASSERT_TRUE(frame.has_value()) << serve->log();
    if (const auto* w = std::get_if<session::Welcome>(&*frame)) last_sequence = w->scene_sequence;
    if (const auto* c = std::get_if<session::Crdt>(&*frame)) last_sequence = c->scene_sequence;
    if (const auto* a = std::get_if<session::Ack>(&*frame)) acked = a->frame_sequence >= 1;
    ASSERT_EQ(std::get_if<session::ErrorFrame>(&*frame), nullptr);
  }
  const std::vector<uint8_t> second = Put(601, 1);
  ASSERT_TRUE(writer.Send(Frame(2, second)));

  // A `watch` joined to the scene says why it ended: the server's reason, not just "closed".
  const std::string url = Base(*serve) + "/admin/scenes/doomed";
  RunResult watched;
  ScratchDir watch_scratch;  // RunProcess's output files are per scratch folder
  std::jthread watch([&] {
    watched = RunProcess(kCli,
                         {"watch", "--server", serve->tcp_url(), "--scene", "doomed", "--timeout",
                          "20", "--duration", "30"},
                         watch_scratch);
  });
  bool watching = false;
  for (int i = 0; i < 200 && !watching; ++i) {
    auto doc = json::ReadJson(Curl(scratch, "GET", url, kToken).body);
    const json::Json* sessions = doc.has_value() ? json::Member(*doc, "sessions") : nullptr;
    watching = sessions && sessions->is_number() && sessions->get<double>() >= 2;
    if (!watching) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(watching) << serve->log();

  const Http deleted = Curl(scratch, "DELETE", url, kToken);
  ASSERT_EQ(deleted.status, 200) << deleted.body << serve->log();
  auto body = json::ReadJson(deleted.body);
  ASSERT_TRUE(body.has_value()) << deleted.body;
  const json::Json* name = json::Member(*body, "deleted");
  ASSERT_TRUE(name && name->is_string()) << deleted.body;
  EXPECT_EQ(name->get<std::string>(), "doomed");
  const json::Json* entities = json::Member(*body, "entities");
  ASSERT_TRUE(entities && entities->is_number()) << deleted.body;
  EXPECT_GE(entities->get<double>(), 1) << deleted.body;

  // The writer hears why, then the connection ends.
  std::optional<session::ErrorFrame> error;
  for (auto frame = writer.Read(); frame.has_value(); frame = writer.Read()) {
    if (const auto* e = std::get_if<session::ErrorFrame>(&*frame)) error = *e;
  }
  ASSERT_TRUE(error.has_value()) << serve->log();
  EXPECT_EQ(error->code, ErrorCode::kSceneDeleted) << error->text;
  EXPECT_TRUE(error->fatal);
  watch.join();
  EXPECT_EQ(watched.exit_code, 1) << watched.err;
  EXPECT_NE(watched.err.find("the connection ended: scene_deleted: an operator deleted the scene "
                             "(admin API); join again for an empty scene"),
            std::string::npos)
      << watched.err;
  EXPECT_TRUE(serve->WaitForLog("reason=scene_deleted")) << serve->log();
  EXPECT_NE(serve->log().find("action=delete scene=doomed"), std::string::npos) << serve->log();
  EXPECT_EQ(serve->log().find(kToken), std::string::npos);
  const Http metrics = Curl(scratch, "GET", Base(*serve) + "/metrics");
  EXPECT_NE(metrics.body.find("scenecrdt_admin_scene_deletes_total 1\n"), std::string::npos);
  // The writer's close counts as scene_deleted; the watch's may count as its own close instead
  // when it hangs up first on reading the reason.
  const bool one =
      metrics.body.find("scenecrdt_session_closes_total{reason=\"scene_deleted\"} 1\n") !=
      std::string::npos;
  const bool two =
      metrics.body.find("scenecrdt_session_closes_total{reason=\"scene_deleted\"} 2\n") !=
      std::string::npos;
  EXPECT_TRUE(one || two) << metrics.body;

  // A resume position of the old scene is not resumed into the new one (fresh incarnation).
  {
    RawClient again(serve->tcp_port());
    hello.resume_sequence = last_sequence;
    ASSERT_TRUE(again.Send(hello));
    auto frame = again.Read();
    ASSERT_TRUE(frame.has_value());
    const auto* welcome = std::get_if<session::Welcome>(&*frame);
    ASSERT_NE(welcome, nullptr);
    EXPECT_FALSE(welcome->resumed);
    EXPECT_NE(session::SequenceIncarnation(welcome->scene_sequence),
              session::SequenceIncarnation(last_sequence));
  }
  EXPECT_EQ(PulledHash(scratch, *serve, "doomed"), empty_hash);
  EXPECT_EQ(PulledHash(scratch, *serve, "kept"), kept_hash);

  serve.reset();  // SIGTERM; what was erased stays erased
  serve = std::make_unique<ServeProcess>(kCli, scratch.File("data"), args);
  ASSERT_TRUE(serve->started()) << serve->log();
  EXPECT_EQ(Curl(scratch, "GET", Base(*serve) + "/admin/scenes/doomed", kToken).status, 404);
  EXPECT_EQ(Curl(scratch, "GET", Base(*serve) + "/admin/scenes", kToken).body.find("\"doomed\""),
            std::string::npos);
  EXPECT_EQ(PulledHash(scratch, *serve, "doomed"), empty_hash);
  EXPECT_EQ(PulledHash(scratch, *serve, "kept"), kept_hash);
}

TEST(ServeAdminTest, ATokenFileTooShortOrMissingRefusesToStart) {
  ScratchDir scratch;
  WriteText(scratch.File("short.token"), "short\n");
  for (const std::string& file :
       {scratch.File("short.token").string(), scratch.File("none.token").string()}) {
    const RunResult r =
        RunProcess(kCli,
                   {"serve", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data",
                    scratch.File("data").string(), "--admin-token-file", file},
                   scratch);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--admin-token-file"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace scenecrdt::tools::test
