// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt decode`: a DCL CRDT stream (file or stdin, read in chunks) to JSON lines.
#include <algorithm>
#include <cstdio>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/replay/message_json.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/stream/stream_files.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Reads a DCL SDK7 CRDT byte stream (a plain concatenation of messages; FILE or stdin when
FILE is '-' or absent) and prints one JSON object per message, one per line:
  {"type":"put","entity":512,"number":512,"version":0,"component":1,"timestamp":1,
   "dataHex":"...","transform":{"position":[x,y,z],"rotation":[x,y,z,w],"scale":[x,y,z],
   "parent":0}}
Fields a type does not carry are omitted. Floats are printed in the shortest form that reads
back to the same float; NaN/Infinity are strings (see docs/CLI.md). Unknown message types are
printed as {"type":"unknown","typeCode":N,"bodyHex":"..."}; `scenecrdt encode` turns the output
back into the same bytes.
)";
constexpr const char* kFooter =
    R"(exit status: 0 ok; 2 malformed input (messages before the fault are printed, then the error
with its byte offset on stderr; JSON given by mistake is named as such) or bad usage.
)";
}  // namespace

int RunDecode(Args args) {
  CliApp app("decode", kAbout, kFooter);
  std::optional<uint64_t> max;
  bool reject_unknown = false;
  std::vector<std::string> files;
  app.U64("--max-message-bytes", "N", "refuse messages longer than N bytes (default 1048576)",
          &max);
  app.Flag("--reject-unknown", "refuse unknown message types instead of skipping them",
           &reject_unknown);
  app.Positionals("FILE|-", "the stream (default: stdin)", &files);
  if (auto status = app.Parse(args)) return *status;
  protocol::DecodeOptions options;
  if (max) options.max_message_bytes = static_cast<uint32_t>(std::min<uint64_t>(*max, 0xFFFFFFFFu));
  options.reject_unknown_types = reject_unknown;
  if (files.size() > 1) {
    PrintMessage("decode", "takes one FILE (or '-'); see 'scenecrdt decode --help'");
    return kExitBadInput;
  }
  const std::string path = files.empty() ? "-" : files[0];
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) {
    PrintMessage("decode", "cannot open '" + path + "': check the path and permissions");
    return kExitBadInput;
  }
  StdoutBuffer out;
  protocol::CrdtStreamDecoder decoder(options);
  auto emit = [&](const protocol::CrdtMessage& m) {
    replay::AppendMessageJson(m, out.buffer());
    out.buffer() += '\n';
    out.MaybeFlush();
  };
  std::vector<uint8_t> chunk(1 << 16);
  std::vector<uint8_t> head;  // the first bytes, to tell JSON given by mistake
  Result<void> status;
  while (true) {
    const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f);
    if (head.size() < 256) {
      head.insert(head.end(), chunk.begin(),
                  chunk.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(n, 256)));
    }
    if (n > 0) {
      status = decoder.Feed(std::span<const uint8_t>(chunk.data(), n), emit);
      if (!status.has_value()) break;
    }
    if (n < chunk.size()) break;
  }
  const bool read_failed = std::ferror(f) != 0;
  if (f != stdin) std::fclose(f);
  out.Flush();
  if (!status.has_value()) {
    PrintError("decode", "malformed stream", status.error());
    if (LooksLikeJsonText(head)) PrintJsonLinesHint("decode");
    return kExitBadInput;
  }
  if (read_failed) {
    PrintMessage("decode", "error while reading '" + path + "'");
    return kExitBadInput;
  }
  if (decoder.pending_bytes() > 0) {
    PrintError("decode", "malformed stream",
               MakeError(ErrorCode::kTruncated,
                         "the input ends inside a message (a message was cut short)",
                         decoder.consumed_bytes()));
    if (LooksLikeJsonText(head)) PrintJsonLinesHint("decode");
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace scenecrdt::cli
