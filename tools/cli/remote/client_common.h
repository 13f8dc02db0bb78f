// SPDX-License-Identifier: Apache-2.0
// Owns what the network commands (send, pull, watch, load) share: the --server/--scene/
// --token flags and joining a scene with errors that say what to do next.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/client/url.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

struct ClientFlags {
  std::string server;                   // the URL (or comma-separated URL list) as given
  client::ServerUrl url;                // the first URL, parsed
  std::vector<client::ServerUrl> urls;  // every URL of the list, parsed
  std::string scene;                    // --scene, or the scene the URL names
  std::string token;
  uint64_t timeout_ms = 10000;
  std::string ca_file;  // --ca: CA certificates for tls:// and wss:// (empty: system store)
  std::optional<client::Interest> interest;  // --interest / --interest-follow
};

// The client flags as parsed (DeclareClientFlags, DeclareInterestFlags fill them).
struct ClientFlagValues {
  std::optional<std::string> server, scene, token, ca, interest, interest_follow;
  std::optional<double> timeout;
};

// Declares --server, --scene, --token, --ca and --timeout (seconds) on `app`.
void DeclareClientFlags(CliApp& app, ClientFlagValues& values);
// Declares --interest X,Y,Z,R and --interest-follow E,R (docs/INTEREST.md).
void DeclareInterestFlags(CliApp& app, ClientFlagValues& values);

// Reads --interest and --interest-follow into out.interest. Prints what is wrong (a NaN,
// infinite or negative value, a malformed list, both flags) and returns false (the command
// exits 2).
bool ReadInterestFlags(const ClientFlagValues& values, std::string_view command, ClientFlags& out);

// Reads --server, --scene, --token, --ca, --timeout. The scene is --scene or the one a
// ws://HOST:PORT/scene/NAME URL names (both: they must agree). Prints what is wrong or
// missing and returns false (the command exits 2).
bool ReadClientFlags(const ClientFlagValues& values, std::string_view command, ClientFlags& out);

// True when every URL names a loopback host (127.0.0.1, localhost or ::1); otherwise prints
// that `command` runs against loopback only and returns false (the command exits 2).
bool RequireLoopback(const std::vector<client::ServerUrl>& urls, std::string_view command);

struct JoinOptions {
  // After the join, reconnect with backoff and resume when the connection is lost.
  bool reconnect = false;
  // Connection events (losses, reconnects, resumes, resends): ClientOptions::log.
  std::function<void(std::string_view line)> log;
  // Called before the client starts (to install hooks such as on_crdt).
  std::function<void(client::Client&)> before_start;
};

// Starts a client on its own thread and waits until the scene's state is applied (or a
// refusal, or the timeout). Prints the reason and returns nullptr on failure.
std::unique_ptr<client::Client> JoinScene(std::string_view command, const ClientFlags& flags,
                                          const char* client_name, const JoinOptions& join = {});

// Why a closed client's connection ended, for "the connection ended: ..." lines: the server's
// code and words when it closed us with an Error frame (e.g. "scene_deleted: an operator
// deleted the scene (admin API); ..."), else the transport's reason.
std::string ConnectionEndReason(const client::Client& c);

// "unauthorized: token not granted for this scene" etc., with a hint for common codes.
std::string DescribeRefusal(const client::Refusal& r);

}  // namespace scenecrdt::cli
