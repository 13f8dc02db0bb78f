// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt record`: join a scene and append every Crdt frame received (the snapshot's
// or resume delta's state frames, then the live frames) to one DCL stream file, with a JSON
// lines index of receive times. Replaying the file gives the scene's state when the recording
// ended, because each frame is the server's coalesced export of what changed (LWW values).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "scenecrdt/protocol/crdt_codec.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/progress.h"
#include "tools/cli/remote/client_common.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Joins a scene and records every change it receives as one DCL CRDT stream in FILE: first the
state the server sends on joining (the snapshot), then every live frame, as received (the
bytes are the server's own, never re-encoded). 'scenecrdt replay FILE' then gives the scene's
state at the end of the recording (its stateHash is the one 'scenecrdt pull' printed then);
'scenecrdt converge FILE' checks that any delivery order converges on it. When the connection
is lost the recorder reconnects with backoff and resumes: the resume delta (only the changed
registers) is recorded like any other frame.

Next to FILE, FILE.index.jsonl gets one JSON line per received frame:
  {"frame":N,"connection":C,"kind":"snapshot"|"resume"|"live","offset":O,"length":L,
   "messages":M,"sceneSequence":S,"monoUs":T,"wallUs":W}
offset/length locate the frame's DCL bytes in FILE; sceneSequence is the scene's sequence
after it (server incarnation << 40 | change number); monoUs is the receive time on a steady
clock, in microseconds since the recording started; wallUs the receive time as Unix time in
microseconds. State frames also carry "stateFramesLeft" (0 for the last one of a join) and,
after a server restart (snapshot instead of resume), "resync":true.
)";
constexpr const char* kFooter =
    R"(A progress line is redrawn on stderr when it is a terminal (with SCENECRDT_PROGRESS=1 on a
pipe or file: a plain line every 5 s), and a summary is printed at the end.

exit status: 0 recorded until --duration, Ctrl-C or SIGTERM; 1 refused, the connection
failed (or was lost with --no-reconnect), or FILE could not be written; 2 bad usage.
)";

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

int64_t MicrosSince(std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t - start).count();
}

class Recorder {
 public:
  Recorder(std::FILE* stream, std::FILE* index, std::chrono::steady_clock::time_point start)
      : stream_(stream), index_(index), start_(start) {}

  // Called from Client::Poll for every Crdt frame (the caller's thread).
  void OnCrdt(const client::CrdtEvent& e) {
    if (failed_) return;
    uint64_t messages = 0;
    (void)protocol::DecodeStream(e.data, {}, [&](const protocol::CrdtMessage&) { ++messages; });
    if (!e.data.empty() && std::fwrite(e.data.data(), 1, e.data.size(), stream_) != e.data.size()) {
      failed_ = true;
      return;
    }
    const char* kind = !e.is_state ? "live" : (e.resumed ? "resume" : "snapshot");
    nlohmann::ordered_json line;
    line["frame"] = frames_ + 1;
    line["connection"] = e.connection;
    line["kind"] = kind;
    line["offset"] = offset_;
    line["length"] = e.data.size();
    line["messages"] = messages;
    line["sceneSequence"] = e.scene_sequence;
    line["monoUs"] = MicrosSince(start_, e.received);
    line["wallUs"] =
        std::chrono::duration_cast<std::chrono::microseconds>(e.received_wall.time_since_epoch())
            .count();
    if (e.is_state) {
      line["stateFramesLeft"] = e.state_frames_left;
      if (e.resync) line["resync"] = true;
    }
    const std::string out = line.dump() + '\n';
    if (std::fwrite(out.data(), 1, out.size(), index_) != out.size()) {
      failed_ = true;
      return;
    }
    ++frames_;
    messages_ += messages;
    offset_ += e.data.size();
    if (e.is_state) state_bytes_ += e.data.size();
  }

  bool Flush() {
    if (std::fflush(stream_) != 0 || std::fflush(index_) != 0) failed_ = true;
    return !failed_;
  }

  bool failed() const { return failed_; }
  uint64_t frames() const { return frames_; }
  uint64_t messages() const { return messages_; }
  uint64_t bytes() const { return offset_; }
  uint64_t state_bytes() const { return state_bytes_; }

 private:
  std::FILE* stream_;
  std::FILE* index_;
  std::chrono::steady_clock::time_point start_;
  uint64_t frames_ = 0;
  uint64_t messages_ = 0;
  uint64_t offset_ = 0;
  uint64_t state_bytes_ = 0;
  bool failed_ = false;
};

}  // namespace

int RunRecord(Args args) {
  CliApp app("record", kAbout, kFooter);
  ClientFlagValues client;
  std::optional<std::string> output, index_flag;
  std::optional<double> duration;
  bool no_reconnect = false;
  std::vector<std::string> positionals;
  DeclareClientFlags(app, client);
  app.Value("--output,-o", "FILE", "the stream to write (replaced)", &output);
  app.Value("--index", "FILE", "the index path (default FILE.index.jsonl)", &index_flag);
  app.Double("--duration", "SEC", "stop after SEC (default: until Ctrl-C or SIGTERM)", &duration);
  app.Flag("--no-reconnect", "stop (exit 1) when the connection is lost instead of reconnecting",
           &no_reconnect);
  app.HiddenPositionals(&positionals);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  if (!ReadClientFlags(client, "record", flags)) return kExitBadInput;
  if (!output || output->empty() || *output == "-") {
    PrintMessage("record", "needs -o FILE (a file path); see 'scenecrdt record --help'");
    return kExitBadInput;
  }
  if (!positionals.empty()) {
    PrintMessage("record", "takes no positional arguments; see 'scenecrdt record --help'");
    return kExitBadInput;
  }
  if (duration && !(*duration >= 0.0)) {
    PrintMessage("record", "--duration takes a number of seconds >= 0");
    return kExitBadInput;
  }
  const std::string index_path = index_flag ? *index_flag : *output + ".index.jsonl";
  std::FILE* stream = std::fopen(output->c_str(), "wb");
  if (!stream) {
    PrintMessage("record", "cannot open '" + *output + "' for writing");
    return kExitCheckFailed;
  }
  std::FILE* index = std::fopen(index_path.c_str(), "wb");
  if (!index) {
    std::fclose(stream);
    PrintMessage("record", "cannot open '" + index_path + "' for writing");
    return kExitCheckFailed;
  }

  StatusLine progress;
  const auto end_line = [&] { progress.End(); };
  const auto start = std::chrono::steady_clock::now();
  Recorder recorder(stream, index, start);
  g_stop.store(false);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  JoinOptions join;
  join.reconnect = !no_reconnect;
  join.log = [&](std::string_view line) {
    end_line();
    PrintMessage("record", line);
  };
  join.before_start = [&](client::Client& c) {
    c.on_crdt = [&](const client::CrdtEvent& e) { recorder.OnCrdt(e); };
  };
  auto c = JoinScene("record", flags, "scenecrdt-record", join);
  int status = kExitOk;
  if (!c) {
    status = kExitCheckFailed;
  } else {
    while (!g_stop.load()) {
      c->Poll();
      if (!recorder.Flush()) break;
      const auto now = std::chrono::steady_clock::now();
      const double elapsed = std::chrono::duration<double>(now - start).count();
      if (c->closed()) {
        end_line();
        PrintMessage("record", "the connection ended: " + ConnectionEndReason(*c));
        status = kExitCheckFailed;
        break;
      }
      if (duration && elapsed >= *duration) break;
      if (progress.enabled()) {
        const client::ClientStats s = c->stats();
        char text[256];
        std::snprintf(text, sizeof text,
                      "record: %.1f s  %llu frames  %llu messages  %llu bytes  %llu reconnects%s",
                      elapsed, static_cast<unsigned long long>(recorder.frames()),
                      static_cast<unsigned long long>(recorder.messages()),
                      static_cast<unsigned long long>(recorder.bytes()),
                      static_cast<unsigned long long>(s.reconnects),
                      c->synced() ? "" : "  (reconnecting)");
        progress.Show(text);
      }
      auto wait = std::chrono::milliseconds(50);
      if (duration) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(*duration - elapsed));
        wait = std::clamp(left, std::chrono::milliseconds(0), wait);
      }
      c->WaitForInput(wait);
    }
    // Whatever already arrived is part of the recording.
    c->Poll();
    c->Stop();
    c->Poll();
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const bool written = recorder.Flush() && !recorder.failed();
  const bool closed_ok = std::fclose(stream) == 0 && std::fclose(index) == 0;
  end_line();
  if (!written || !closed_ok) {
    PrintMessage("record", "error while writing '" + *output + "' or its index");
    return kExitCheckFailed;
  }
  if (c) {
    const client::ClientStats s = c->stats();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char summary[512];
    std::snprintf(summary, sizeof summary,
                  "%llu frames (%llu messages, %llu bytes; %llu bytes of state) in %.1f s to "
                  "%s, index %s; %llu reconnects (%llu resumes, %llu snapshots)",
                  static_cast<unsigned long long>(recorder.frames()),
                  static_cast<unsigned long long>(recorder.messages()),
                  static_cast<unsigned long long>(recorder.bytes()),
                  static_cast<unsigned long long>(recorder.state_bytes()), elapsed, output->c_str(),
                  index_path.c_str(), static_cast<unsigned long long>(s.reconnects),
                  static_cast<unsigned long long>(s.resumes),
                  static_cast<unsigned long long>(s.snapshots));
    PrintMessage("record", summary);
  }
  return status;
}

}  // namespace scenecrdt::cli
