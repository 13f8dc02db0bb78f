// SPDX-License-Identifier: Apache-2.0
// Owns MakeTlsContext (internal: not installed): the TLS context of tls:// and wss:// clients.
#pragma once

#include <memory>
#include <string>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::client {

// The client's TLS context: TLS 1.2 or later, the server's certificate verified against
// `ca_file` (or the system store). Errors name the file.
Result<std::shared_ptr<net::ssl::context>> MakeTlsContext(const std::string& ca_file);

}  // namespace scenecrdt::client
