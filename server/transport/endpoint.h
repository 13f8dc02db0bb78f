// SPDX-License-Identifier: Apache-2.0
// Owns the endpoint helpers the listeners and sessions share: the strand-bound socket type,
// "HOST:PORT" parsing and a socket's peer address.
#pragma once

#include <string>

#include "scenecrdt/net/net.h"
#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

// An accepted connection whose handlers run on its own strand.
using StrandSocket = net::asio::basic_stream_socket<net::tcp, net::Strand>;
// The same connection inside TLS (--tls-cert): tls://, https://, wss://.
using TlsSocket = net::ssl::stream<StrandSocket>;

// "HOST:PORT" (IPv4, IPv6 in brackets, or "localhost") -> endpoint; an empty host is 0.0.0.0.
Result<net::tcp::endpoint> ParseEndpoint(const std::string& host_port);
// The peer of a connected socket (a default endpoint once it is gone).
net::tcp::endpoint RemoteEndpoint(const StrandSocket& socket);

}  // namespace scenecrdt::server
