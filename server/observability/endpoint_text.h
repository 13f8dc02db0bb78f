// SPDX-License-Identifier: Apache-2.0
// Owns EndpointText: how a peer or listener address is written in log lines and answers
// ("IP:PORT", "[IPv6]:PORT"). Sessions, the viewer's routes and the listeners share it.
#pragma once

#include <string>

#include "scenecrdt/net/net.h"

namespace scenecrdt::server {

// "IP:PORT" ("[IPv6]:PORT") for logs.
std::string EndpointText(const net::tcp::endpoint& endpoint);

}  // namespace scenecrdt::server
