// SPDX-License-Identifier: Apache-2.0
// `scenecrdt record` as a user runs it (the built binary, SCENECRDT_CLI_PATH) against an
// in-process server: recording a scene while clients write, then `replay FILE` and `pull`
// print the server's stateHash; the index locates every frame; --duration and Ctrl-C stop it
// cleanly; usage errors exit 2. Processes are waited for with deadlines (pidfd + poll).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/client/test_server.h"

extern char** environ;

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;

// A child process with stdout and stderr in files.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::filesystem::path& out,
        const std::filesystem::path& err)
      : out_(out), err_(err) {
    std::vector<std::string> argv_storage;
    argv_storage.push_back(SCENECRDT_CLI_PATH);
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    if (pid_ > 0) pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  }
  ~Child() {
    if (pid_ > 0 && exit_code_ == kRunning) {
      kill(pid_, SIGKILL);
      Wait(10s);
    }
    if (pidfd_ >= 0) close(pidfd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0 && pidfd_ >= 0; }
  void Signal(int sig) const { kill(pid_, sig); }
  // The exit status, or -1 (killed by a signal, or still running at the deadline).
  int Wait(std::chrono::milliseconds timeout) {
    if (exit_code_ != kRunning) return exit_code_;
    pollfd p{pidfd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return -1;
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }
  std::string out() const { return Read(out_); }
  std::string err() const { return Read(err_); }
  static std::string Read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  static constexpr int kRunning = -2;
  std::filesystem::path out_;
  std::filesystem::path err_;
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int exit_code_ = kRunning;
};

std::vector<uint8_t> ReadBytes(const std::filesystem::path& p) {
  const std::string s = Child::Read(p);
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The value of "key":NUMBER in a JSON line (the index lines are flat objects).
uint64_t Field(const std::string& line, const std::string& key) {
  const auto at = line.find("\"" + key + "\":");
  if (at == std::string::npos) return ~uint64_t{0};
  return std::stoull(line.substr(at + key.size() + 3));
}

std::string StateHashOf(const std::string& json) {
  const auto at = json.find("\"stateHash\":\"");
  return at == std::string::npos ? "" : json.substr(at + 13, 64);
}

protocol::Transform At(float x) {
  protocol::Transform t;
  t.position = {x, 0.0f, 0.0f};
  return t;
}

class RecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    dir_ = std::filesystem::temp_directory_path() /
           ("scenecrdt-record-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Runs the binary to completion.
  int Run(const std::vector<std::string>& args, std::string* out = nullptr,
          std::string* err = nullptr) {
    Child c(args, dir_ / "run.out", dir_ / "run.err");
    EXPECT_TRUE(c.started());
    const int code = c.Wait(60s);
    if (out) *out = c.out();
    if (err) *err = c.err();
    return code;
  }

  TestServer server_;
  std::filesystem::path dir_;
};

TEST_F(RecordTest, RecordingALiveSceneReplaysToTheServersStateHash) {
  ClientOptions o;
  o.url = server_.tcp_url();
  o.scene = "live";
  Client writer(o);
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.synced(); }, 20s));
  // Some state before the recorder joins: it arrives as the snapshot.
  for (uint32_t e = 0; e < 30; ++e)
    ASSERT_TRUE(writer.WriteTransform(600 + e, At(1.0f)).has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.pending_frames() == 0; }, 20s));

  const auto file = dir_ / "live.dcl";
  const auto index = dir_ / "live.dcl.index.jsonl";
  Child rec({"record", "--server", server_.tcp_url(), "--scene", "live", "-o", file.string()},
            dir_ / "rec.out", dir_ / "rec.err");
  ASSERT_TRUE(rec.started());
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  const auto wait_for = [&](const std::function<bool()>& done) {
    while (!done()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      writer.Poll();
      writer.WaitForInput(10ms);
    }
    return true;
  };
  ASSERT_TRUE(wait_for([&] { return !Child::Read(index).empty(); })) << rec.err();
  // Live changes in many frames, overwriting and adding entities.
  for (uint32_t round = 0; round < 20; ++round) {
    for (uint32_t e = 0; e < 10; ++e) {
      ASSERT_TRUE(writer.WriteTransform(600 + (round * 3 + e) % 50, At(static_cast<float>(round)))
                      .has_value());
    }
    writer.Flush();
    ASSERT_TRUE(wait_for([&] { return writer.pending_frames() == 0; }));
  }
  const std::string expected = server_.SceneHash("live");
  // The recording catches up (it flushes after every poll).
  ASSERT_TRUE(wait_for([&] {
    runtime::CrdtStore store;  // the file may end inside a frame being written: no EXPECT
    return store.MergeStream(ReadBytes(file)).has_value() && store.StateHashHex() == expected;
  })) << rec.err();
  rec.Signal(SIGINT);
  ASSERT_EQ(rec.Wait(20s), 0) << rec.err();
  EXPECT_NE(rec.err().find("scenecrdt record: "), std::string::npos);

  std::string out;
  ASSERT_EQ(Run({"replay", file.string()}, &out), 0);
  EXPECT_EQ(StateHashOf(out), expected);
  ASSERT_EQ(Run({"pull", "--server", server_.tcp_url(), "--scene", "live"}, &out), 0);
  EXPECT_EQ(StateHashOf(out), expected);

  // The index: one line per frame, contiguous offsets covering the file, the snapshot first.
  const auto bytes = ReadBytes(file);
  const auto lines = Lines(Child::Read(index));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[0].find("\"kind\":\"snapshot\""), std::string::npos) << lines[0];
  EXPECT_EQ(Field(lines[0], "length"), 30u * 68u);
  EXPECT_EQ(Field(lines[0], "stateFramesLeft"), 0u);
  uint64_t offset = 0;
  uint64_t last_mono = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(Field(lines[i], "frame"), i + 1);
    EXPECT_EQ(Field(lines[i], "offset"), offset);
    EXPECT_GE(Field(lines[i], "monoUs"), last_mono);
    EXPECT_GT(Field(lines[i], "wallUs"), 1600000000000000u);  // after 2020
    last_mono = Field(lines[i], "monoUs");
    offset += Field(lines[i], "length");
    if (i > 0) {
      EXPECT_NE(lines[i].find("\"kind\":\"live\""), std::string::npos) << lines[i];
    }
  }
  EXPECT_EQ(offset, bytes.size());
  // The recorded stream converges under reordering too.
  ASSERT_EQ(Run({"converge", file.string(), "--trials", "50"}, &out), 0) << out;
}

TEST_F(RecordTest, DurationStopsTheRecordingAndUsageErrorsExitTwo) {
  const auto file = dir_ / "quiet.dcl";
  std::string out;
  std::string err;
  ASSERT_EQ(Run({"record", "--server", server_.tcp_url(), "--scene", "quiet", "-o", file.string(),
                 "--duration", "0.3"},
                &out, &err),
            0)
      << err;
  EXPECT_TRUE(ReadBytes(file).empty());  // an empty scene: an empty snapshot
  const auto lines = Lines(Child::Read(dir_ / "quiet.dcl.index.jsonl"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"kind\":\"snapshot\""), std::string::npos);
  EXPECT_NE(err.find("1 frames"), std::string::npos) << err;

  ASSERT_EQ(Run({"record", "--help"}, &out), 0);
  EXPECT_NE(out.find("usage: scenecrdt record"), std::string::npos);
  EXPECT_EQ(Run({"record", "--server", server_.tcp_url(), "--scene", "quiet"}, nullptr, &err), 2);
  EXPECT_NE(err.find("-o FILE"), std::string::npos) << err;
  EXPECT_EQ(Run({"record", "--scene", "quiet", "-o", file.string()}), 2);
  // Nobody listening: fails fast with exit 1.
  EXPECT_EQ(Run({"record", "--server", "tcp://127.0.0.1:1", "--scene", "quiet", "-o", file.string(),
                 "--timeout", "5"}),
            1);
}

}  // namespace
}  // namespace scenecrdt::client::test
