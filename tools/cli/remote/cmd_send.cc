// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt send`: DCL stream files -> Crdt frames to a scene, each under the server's
// frame limit (docs/PROTOCOL.md section 2, "Frame limit") and acknowledged once durable;
// rate-limit refusals are retried after a back-off, other refusals fail.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>

#include "scenecrdt/protocol/session/crdt_split.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/progress.h"
#include "tools/cli/remote/client_common.h"
#include "tools/cli/stream/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Sends the DCL CRDT messages of FILE... ('-' for stdin) to a scene, as they are (their own
timestamps: the server merges them with the @dcl/ecs rules), and waits until the server has
acknowledged every frame, which it does once the changes are durable.
)";
constexpr const char* kFooter =
    R"(exit status: 0 every frame acknowledged; 1 refused (the Error's text on stderr), a message
larger than the server's frame limit (said before anything is sent) or the connection failed;
2 bad usage or a malformed FILE.
)";

struct Chunk {
  std::span<const uint8_t> bytes;
  uint64_t messages;
};

}  // namespace

int RunSend(Args args) {
  CliApp app("send", kAbout, kFooter);
  ClientFlagValues client;
  std::optional<uint64_t> frame_messages_given, window_given;
  std::vector<std::string> files;
  DeclareClientFlags(app, client);
  app.U64("--frame-messages", "N",
          "messages per Crdt frame at most (default 500); frames are also cut\n"
          "under the server's frame limit (its Welcome says it; 1 MiB by default)",
          &frame_messages_given);
  app.U64("--window", "N", "frames in flight before waiting for acks (default 8)", &window_given);
  app.Positionals("FILE", "the DCL streams to send, in order ('-' for stdin)", &files);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  if (!ReadClientFlags(client, "send", flags)) return kExitBadInput;
  const uint64_t frame_messages = std::max<uint64_t>(1, frame_messages_given.value_or(500));
  const uint64_t window = std::max<uint64_t>(1, window_given.value_or(8));
  if (files.empty()) {
    PrintMessage("send", "needs at least one FILE; see 'scenecrdt send --help'");
    return kExitBadInput;
  }
  LoadError load_error;
  auto loaded = LoadStreams(files, &load_error);
  if (!loaded.has_value()) {
    PrintLoadError("send", load_error);
    return kExitBadInput;
  }
  const uint64_t total_messages = loaded->messages.size();

  auto c = JoinScene("send", flags, "scenecrdt-send");
  if (!c) return kExitCheckFailed;
  if (!c->welcome()->can_write) {
    PrintMessage("send", "this token may not write to scene '" + flags.scene +
                             "' (role \"read\"); use a token with role \"write\"");
    return kExitCheckFailed;
  }
  // Cut each file's bytes at message boundaries, keeping the original bytes: at most
  // --frame-messages messages and what one frame carries under the server's frame limit (a
  // larger frame is a fatal refusal there).
  const std::size_t max_bytes = c->max_crdt_bytes();
  std::vector<Chunk> chunks;
  for (std::size_t f = 0; f < loaded->buffers.size(); ++f) {
    const std::vector<uint8_t>& buffer = loaded->buffers[f];
    auto parts = session::SplitCrdtStream(buffer, max_bytes, frame_messages);
    if (!parts.has_value()) {
      // The files decoded cleanly: only a message that no frame can carry stops here.
      const Error& e = parts.error();
      char text[512];
      std::snprintf(text, sizeof(text),
                    "%s: the message at byte offset %llu is %u bytes, more than one frame "
                    "carries to this server (frame limit %u bytes, %zu DCL bytes per frame; "
                    "serve --max-frame-bytes); nothing sent",
                    files[f].c_str(), static_cast<unsigned long long>(e.offset),
                    session::MessageLengthAt(buffer, e.offset), c->welcome()->max_frame_bytes,
                    max_bytes);
      PrintMessage("send", text);
      return kExitCheckFailed;
    }
    for (const session::CrdtPart& part : parts.value()) {
      chunks.push_back(
          {std::span<const uint8_t>(buffer).subspan(part.offset, part.bytes), part.messages});
    }
  }
  std::deque<std::size_t> to_send;
  for (std::size_t i = 0; i < chunks.size(); ++i) to_send.push_back(i);
  std::map<uint64_t, std::size_t> in_flight;  // frame sequence -> chunk
  uint64_t done_messages = 0;
  auto backoff = std::chrono::milliseconds(50);
  auto resume_at = std::chrono::steady_clock::now();
  auto last_progress = std::chrono::steady_clock::now();
  bool storage_unavailable = false;  // the server said its commits fail: acks wait for them
  Progress progress("send: messages acknowledged");
  while (!to_send.empty() || !in_flight.empty()) {
    const auto now = std::chrono::steady_clock::now();
    while (in_flight.size() < window && !to_send.empty() && now >= resume_at) {
      const std::size_t index = to_send.front();
      const uint64_t fs = c->SendCrdt(chunks[index].bytes);
      if (fs == 0) break;  // send queue full: wait for acks
      to_send.pop_front();
      in_flight.emplace(fs, index);
    }
    c->Poll();
    for (const client::Refusal& r : c->TakeRefusals()) {
      auto it = in_flight.find(r.frame_sequence);
      if (r.code == ErrorCode::kRateLimited && it != in_flight.end() && !r.fatal) {
        to_send.push_front(it->second);  // refused whole: nothing merged, send it again
        in_flight.erase(it);
        resume_at = std::chrono::steady_clock::now() + backoff;
        backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
        continue;
      }
      if (r.code == ErrorCode::kStorageUnavailable && !r.fatal) {
        // Merged but not durable yet: keep waiting (up to --timeout) for the acks.
        if (!storage_unavailable) {
          PrintMessage("send", "the server cannot commit (" + DescribeRefusal(r) +
                                   "); waiting for its storage to recover");
        }
        storage_unavailable = true;
        continue;
      }
      progress.Done();
      PrintMessage("send", "refused by the server: " + DescribeRefusal(r));
      return kExitCheckFailed;
    }
    const uint64_t acked = c->acked_frame_sequence();
    for (auto it = in_flight.begin(); it != in_flight.end() && it->first <= acked;) {
      done_messages += chunks[it->second].messages;
      it = in_flight.erase(it);
      last_progress = std::chrono::steady_clock::now();
      backoff = std::chrono::milliseconds(50);
    }
    progress.Update(done_messages, total_messages);
    if (c->closed()) {
      progress.Done();
      PrintMessage("send", std::string("the connection ended before every frame was "
                                       "acknowledged: ") +
                               ConnectionEndReason(*c));
      return kExitCheckFailed;
    }
    if (std::chrono::steady_clock::now() - last_progress >
        std::chrono::milliseconds(flags.timeout_ms)) {
      progress.Done();
      PrintMessage("send", storage_unavailable
                               ? "no acknowledgement within --timeout: the server's storage is "
                                 "unavailable (disk full or I/O error; see its log and /healthz)"
                               : "no acknowledgement within --timeout; the server may be "
                                 "overloaded");
      return kExitCheckFailed;
    }
    if (!in_flight.empty() || std::chrono::steady_clock::now() < resume_at) {
      c->WaitForInput(std::chrono::milliseconds(20));
    }
  }
  progress.Done();
  std::fprintf(stderr, "scenecrdt send: %llu messages in %zu frames acknowledged by %s (%s)\n",
               static_cast<unsigned long long>(total_messages), chunks.size(),
               c->servers()[c->current_server()].c_str(), flags.scene.c_str());
  return kExitOk;
}

}  // namespace scenecrdt::cli
