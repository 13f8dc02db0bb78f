// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt own`: an admin gives an entity of a scene to a principal
// (TransferOwnership, docs/AUTHORITY.md).
#include <cstdio>
#include <string>

#include "scenecrdt/protocol/entity_id.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/remote/client_common.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Gives entity number E of a scene served with --authority owner to PRINCIPAL (a JWT sub or an
--auth entry's name; "" releases it: the next creator owns it). Only an admin token may
(docs/AUTHORITY.md); the server's answer is printed.
)";
constexpr const char* kFooter =
    R"(exit status: 0 transferred; 1 refused (not_admin, ...) or the connection failed; 2 bad usage.
)";
}  // namespace

int RunOwn(Args args) {
  CliApp app("own", kAbout, kFooter);
  ClientFlagValues client;
  std::optional<uint64_t> entity;
  std::optional<std::string> to;
  DeclareClientFlags(app, client);
  app.U64("--entity", "E", "the entity number (or a full entity id: its number is used)", &entity);
  app.Value("--to", "PRINCIPAL", "the new owner (\"\" releases the entity)", &to);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  if (!ReadClientFlags(client, "own", flags)) return kExitBadInput;
  if (!entity || *entity > 0xFFFFFFFFu || !to) {
    PrintMessage("own", "needs --entity E (an entity number) and --to PRINCIPAL");
    return kExitBadInput;
  }
  auto c = JoinScene("own", flags, "scenecrdt-own");
  if (!c) return kExitCheckFailed;
  const auto id = static_cast<protocol::EntityId>(*entity);
  if (auto sent = c->TransferOwnership(id, *to); !sent.has_value()) {
    PrintMessage("own", std::string("cannot send the request: ") + sent.error().detail);
    return kExitCheckFailed;
  }
  std::vector<client::Refusal> refusals;
  const bool answered = c->PollUntil(
      [&] {
        for (client::Refusal& r : c->TakeRefusals()) refusals.push_back(std::move(r));
        return c->stats().ownership_transfers > 0 || !refusals.empty();
      },
      std::chrono::milliseconds(flags.timeout_ms));
  c->Stop();
  if (!refusals.empty()) {
    PrintMessage("own", "refused: " + DescribeRefusal(refusals.front()));
    return kExitCheckFailed;
  }
  if (!answered) {
    PrintMessage("own", "no answer from the server within --timeout");
    return kExitCheckFailed;
  }
  std::printf("entity %u of scene %s now belongs to \"%s\"\n", protocol::EntityNumber(id),
              flags.scene.c_str(), to->c_str());
  return kExitOk;
}

}  // namespace scenecrdt::cli
