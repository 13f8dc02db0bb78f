// SPDX-License-Identifier: Apache-2.0
// Storage failures against real SQLite files: a database with garbage written into its middle
// is refused at start (exit 2 for the real binary) and `db-salvage` copies what reads and
// names what was lost; a 0-byte file and a foreign file are refused; a full database
// (SQLITE_FULL for real, through --max-db-bytes = PRAGMA max_page_count) is logged once per
// episode, told to writers as storage_unavailable, shown by /healthz and the metrics, and
// recovers when a delete frees space; a join to a scene that no longer reads closes as
// storage_unavailable.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join " << scene;
  return c;
}

void AppendOpaque(std::vector<uint8_t>& out, uint32_t entity, uint32_t timestamp, std::size_t bytes,
                  uint8_t fill) {
  const std::vector<uint8_t> data(bytes, fill);
  protocol::CrdtMessage m;
  m.type = protocol::MessageType::kPutComponent;
  m.entity = entity;
  m.component = 1100;
  m.timestamp = timestamp;
  m.data = data;
  protocol::AppendMessage(m, out);
}

class Lines {
 public:
  std::function<void(std::string_view)> Sink() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      text_.emplace_back(line);
    };
  }
  std::size_t Count(std::string_view part) {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t n = 0;
    for (const std::string& l : text_) n += l.find(part) != std::string::npos ? 1 : 0;
    return n;
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const std::string& l : text_) out += l;
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> text_;
};

std::string DbPath(const std::string& dir) { return dir + "/scenes.sqlite3"; }

std::string Binary() {
#ifdef SCENECRDT_BINARY
  return SCENECRDT_BINARY;
#else
  return {};
#endif
}

// 15 scenes of 400 entities (a Transform and a 200-byte component each); their hashes.
std::map<std::string, std::string> Populate(const std::string& dir) {
  std::map<std::string, std::string> hashes;
  TestServer server(TestServer::Config(), dir);
  for (int s = 0; s < 15; ++s) {
    const std::string name = (s < 10 ? "s0" : "s") + std::to_string(s);
    auto c = Join(server.tcp_url(), name);
    std::vector<uint8_t> dcl;
    for (uint32_t e = 0; e < 400; ++e) {
      AppendPut(dcl, 600 + e, 1, static_cast<float>(s * 1000 + e));
      AppendOpaque(dcl, 600 + e, 1, 200, static_cast<uint8_t>(s + e));
    }
    c->SendCrdt(dcl);
    EXPECT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 30s));
    c->Stop();
    hashes[name] = server.SceneHash(name);
  }
  EXPECT_EQ(server.Stop(), 0);
  return hashes;
}

void WriteGarbage(const std::string& path, std::size_t offset, std::size_t bytes) {
  std::mt19937 rng(14);
  std::vector<char> junk(bytes);
  for (char& b : junk) b = static_cast<char>(rng());
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

Result<void> StartOn(const std::string& dir, std::string* diagnostic) {
  auto config = TestServer::Config();
  config.data_dir = dir;
  server::Server s(config);
  auto started = s.Start(false);
  *diagnostic = s.start_diagnostic();
  if (started.has_value()) {
    s.RequestStop();
    s.Wait();
  }
  return started;
}

// Whether `scene` is named by a db-salvage line ("scene s03", "scene after 's03' up to
// 's07'", "scene from the first scene up to 's02'", "... up to 'the end'").
bool NamedAsIncomplete(const std::string& report, const std::string& scene) {
  std::istringstream lines(report);
  std::string line;
  while (std::getline(lines, line)) {
    const auto at = line.find("incomplete: scene ");
    if (at == std::string::npos) continue;
    const std::string what = line.substr(at + 18);
    if (what == scene) return true;
    const auto up = what.find(" up to '");
    if (up == std::string::npos) continue;
    std::string lower;
    if (const auto a = what.find("after '"); a != std::string::npos && a < up) {
      lower = what.substr(a + 7, what.find('\'', a + 7) - a - 7);
    }
    std::string upper = what.substr(up + 8, what.find('\'', up + 8) - up - 8);
    if (upper == "the end") upper = "\x7f";
    if (scene > lower && scene <= upper) return true;
  }
  return false;
}

TEST(StorageCorruptionTest, GarbageInTheMiddleIsRefusedAndSalvageNamesWhatWasLost) {
  ASSERT_FALSE(Binary().empty()) << "needs the scenecrdt binary (tests are built with tools/)";
  TempDir dir;
  const auto hashes = Populate(dir.path());
  const std::string db = DbPath(dir.path());
  ASSERT_FALSE(fs::exists(db + "-wal") && fs::file_size(db + "-wal") > 0)
      << "a clean stop checkpoints the WAL into the file";
  const auto size = fs::file_size(db);
  ASSERT_GT(size, 512u << 10);
  WriteGarbage(db, size / 2, 64u << 10);

  // In process: kCorruptData, with SQLite's words and the way out.
  std::string diagnostic;
  auto started = StartOn(dir.path(), &diagnostic);
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kCorruptData);
  EXPECT_NE(diagnostic.find("quick_check"), std::string::npos) << diagnostic;
  EXPECT_NE(diagnostic.find("db-salvage"), std::string::npos) << diagnostic;

  // The real binary exits 2 and says why; it changed nothing.
  const auto serve =
      RunCommand(Binary() + " serve --tcp 127.0.0.1:0 --http off --data " + dir.path() + " 2>&1");
  EXPECT_EQ(serve.status, 2) << serve.output;
  EXPECT_NE(serve.output.find("corrupt"), std::string::npos) << serve.output;
  EXPECT_NE(serve.output.find("db-salvage"), std::string::npos) << serve.output;

  // Salvage: rows were lost (exit 1), and named.
  const auto salvage = RunCommand(Binary() + " db-salvage --data " + dir.path() + " 2>&1");
  EXPECT_EQ(salvage.status, 1) << salvage.output;
  EXPECT_NE(salvage.output.find("incomplete: scene"), std::string::npos) << salvage.output;
  bool kept_damaged = false;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    kept_damaged |= entry.path().filename().string().rfind("scenes.sqlite3.damaged-", 0) == 0;
  }
  EXPECT_TRUE(kept_damaged);

  // The salvaged database starts; every scene not named is whole, bit for bit.
  TestServer server(TestServer::Config(), dir.path());
  std::size_t intact = 0;
  for (const auto& [name, hash] : hashes) {
    const std::string now = server.SceneHash(name);
    if (now == hash) {
      ++intact;
    } else {
      EXPECT_TRUE(NamedAsIncomplete(salvage.output, name))
          << name << " changed but db-salvage did not name it:\n"
          << salvage.output;
    }
  }
  EXPECT_GT(intact, 0u);
  EXPECT_LT(intact, hashes.size());
}

TEST(StorageCorruptionTest, ALoadNeverReturnsAPartialScene) {
  TempDir dir;
  const auto hashes = Populate(dir.path());
  // Opened while sound; then garbage lands in the file under the open database (as a failing
  // disk would do it). Each scene loads whole (800 rows) or fails: never in part.
  server::Metrics metrics;
  server::PersistenceOptions options;
  options.dir = dir.path();
  std::string diagnostic;
  auto opened = server::Persistence::Open(options, metrics, &diagnostic);
  ASSERT_TRUE(opened.has_value()) << diagnostic;
  const std::string db = DbPath(dir.path());
  WriteGarbage(db, fs::file_size(db) / 2, 64u << 10);
  std::size_t failed = 0;
  for (const auto& [name, hash] : hashes) {
    auto scene = opened.value()->LoadScene(name, &diagnostic);
    if (!scene.has_value()) {
      ++failed;
      EXPECT_EQ(scene.error().code, ErrorCode::kCorruptData) << diagnostic;
      EXPECT_NE(diagnostic.find(name), std::string::npos) << diagnostic;
      continue;
    }
    EXPECT_EQ(scene->rows, 800u) << name << " loaded in part";
    EXPECT_EQ(ReplayHash({scene->dcl}), hash) << name;
  }
  EXPECT_GT(failed, 0u) << "the garbage hit no scene's rows";
  auto all = opened.value()->LoadAll(&diagnostic);
  EXPECT_FALSE(all.has_value()) << "LoadAll returned a partial database";
}

TEST(StorageCorruptionTest, AJoinToAnUnreadableSceneClosesAsStorageUnavailable) {
  TempDir dir;
  const auto hashes = Populate(dir.path());
  // Started while sound; then garbage lands under the running server. A join whose scene no
  // longer reads is refused with a fatal Error carrying the storage code, and the close is
  // counted as storage_unavailable (the server's trouble), never as protocol_violation.
  TestServer server(TestServer::Config(), dir.path());
  const std::string db = DbPath(dir.path());
  WriteGarbage(db, fs::file_size(db) / 2, 64u << 10);
  std::size_t failed = 0;
  for (const auto& [name, hash] : hashes) {
    client::ClientOptions o;
    o.url = server.tcp_url();
    o.scene = name;
    client::Client c(o);
    ASSERT_TRUE(c.Start().has_value());
    ASSERT_TRUE(c.PollUntil([&] { return c.state_ready() || c.closed(); }, 30s)) << name;
    if (c.state_ready()) continue;
    ++failed;
    const auto refusals = c.TakeRefusals();
    ASSERT_EQ(refusals.size(), 1u) << name;
    const ErrorCode code = refusals[0].code;
    EXPECT_TRUE(refusals[0].fatal);
    EXPECT_TRUE(code == ErrorCode::kCorruptData || code == ErrorCode::kIo ||
                code == ErrorCode::kStorageUnavailable)
        << name << ": " << ErrorCodeName(code) << " " << refusals[0].text;
  }
  ASSERT_GT(failed, 0u) << "the garbage hit no scene's rows";
  const std::string expected = std::to_string(failed) + "\n";
  ASSERT_TRUE(WaitUntil([&] {
    return server.get().metrics().RenderPrometheus().find(
               "scenecrdt_session_closes_total{reason=\"storage_unavailable\"} " + expected) !=
           std::string::npos;
  })) << server.get().metrics().RenderPrometheus();
  const std::string metrics = server.get().metrics().RenderPrometheus();
  EXPECT_NE(metrics.find("scenecrdt_drops_total{reason=\"storage_unavailable\"} " + expected),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("scenecrdt_session_closes_total{reason=\"protocol_violation\"} 0\n"),
            std::string::npos)
      << metrics;
}

TEST(StorageCorruptionTest, ZeroByteAndForeignFilesAreRefused) {
  TempDir dir;
  {
    TestServer server(TestServer::Config(), dir.path());
    auto c = Join(server.tcp_url(), "kept");
    std::vector<uint8_t> dcl;
    AppendPut(dcl, 700, 1, 1.0f);
    c->SendCrdt(dcl);
    ASSERT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 20s));
  }
  const std::string db = DbPath(dir.path());
  for (const char* suffix : {"-wal", "-shm"}) fs::remove(db + suffix);
  fs::resize_file(db, 0);
  std::string diagnostic;
  auto started = StartOn(dir.path(), &diagnostic);
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kCorruptData);
  EXPECT_NE(diagnostic.find("0 bytes"), std::string::npos) << diagnostic;
  EXPECT_EQ(fs::file_size(db), 0u) << "a refused file is left as it was";
  if (!Binary().empty()) {
    const auto serve =
        RunCommand(Binary() + " serve --tcp 127.0.0.1:0 --http off --data " + dir.path() + " 2>&1");
    EXPECT_EQ(serve.status, 2) << serve.output;
    EXPECT_NE(serve.output.find("truncated"), std::string::npos) << serve.output;
  }

  // A valid SQLite file that is not ours (no meta row) is refused too.
  fs::remove(db);
  sqlite3* foreign = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &foreign), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(foreign, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(foreign);
  started = StartOn(dir.path(), &diagnostic);
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kCorruptData);
  EXPECT_NE(diagnostic.find("incarnation"), std::string::npos) << diagnostic;
}

TEST(StorageFullTest, FullDatabaseIsLoggedOnceToldToWritersAndRecovers) {
  Lines log;
  auto config = TestServer::Config();
  config.max_db_bytes = 256u << 10;  // SQLITE_FULL for real past ~64 pages
  config.log_sink = log.Sink();
  TestServer server(config);
  const uint16_t http = server.get().http_port();
  EXPECT_NE(HttpGet(http, "/healthz").find("200 OK"), std::string::npos);
  auto c = Join(server.tcp_url(), "big");
  // 8 KiB components, 10 per frame: the fourth frame cannot fit.
  uint32_t entity = 600;
  bool told = false;
  for (int frame = 0; frame < 8 && !told; ++frame) {
    std::vector<uint8_t> dcl;
    for (int i = 0; i < 10; ++i) AppendOpaque(dcl, entity++, 1, 8u << 10, 7);
    c->SendCrdt(dcl);
    c->PollUntil(
        [&] {
          for (const auto& r : c->TakeRefusals()) {
            EXPECT_EQ(r.code, ErrorCode::kStorageUnavailable) << r.text;
            EXPECT_FALSE(r.fatal);
            told |= r.code == ErrorCode::kStorageUnavailable;
          }
          return told || c->pending_frames() == 0;
        },
        20s);
  }
  ASSERT_TRUE(told) << log.All();
  EXPECT_FALSE(c->closed());
  EXPECT_GT(c->pending_frames(), 0u) << "nothing unacked is claimed";
  // Retries keep failing (every 200 ms); the cause is logged once, with SQLite's own words.
  ASSERT_TRUE(WaitUntil([&] { return server.get().metrics().commit_failures.load() >= 4; }));
  EXPECT_EQ(log.Count("storage_unavailable error="), 1u) << log.All();
  EXPECT_NE(log.All().find("full"), std::string::npos) << log.All();
  const std::string health = HttpGet(http, "/healthz");
  EXPECT_NE(health.find("503"), std::string::npos) << health;
  EXPECT_NE(health.find("storage_unavailable"), std::string::npos) << health;
  EXPECT_NE(server.get().metrics().RenderPrometheus().find("scenecrdt_storage_unavailable 1"),
            std::string::npos);

  // Deleting the entities shrinks what must be written: the commit succeeds, everything is
  // acked, health comes back, and the recovery is logged once.
  std::vector<uint8_t> deletes;
  for (uint32_t e = 600; e < entity; ++e) {
    protocol::CrdtMessage del;
    del.type = protocol::MessageType::kDeleteEntity;
    del.entity = e;
    protocol::AppendMessage(del, deletes);
  }
  c->SendCrdt(deletes);
  ASSERT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 30s)) << log.All();
  EXPECT_EQ(log.Count("storage_recovered"), 1u) << log.All();
  EXPECT_NE(HttpGet(http, "/healthz").find("200 OK"), std::string::npos);
  EXPECT_NE(server.get().metrics().RenderPrometheus().find("scenecrdt_storage_unavailable 0"),
            std::string::npos);
  c->Stop();
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace scenecrdt::testing
