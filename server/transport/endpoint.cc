// SPDX-License-Identifier: Apache-2.0
// Owns parsing listener endpoints and reading a socket's peer.
#include "scenecrdt/server/transport/endpoint.h"

namespace scenecrdt::server {

Result<net::tcp::endpoint> ParseEndpoint(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon + 1 >= host_port.size()) {
    return MakeError(ErrorCode::kInvalidArgument, "expected HOST:PORT");
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port_text = host_port.substr(colon + 1);
  unsigned long port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') return MakeError(ErrorCode::kInvalidArgument, "bad port number");
    port = port * 10 + static_cast<unsigned long>(c - '0');
    if (port > 65535) return MakeError(ErrorCode::kInvalidArgument, "port above 65535");
  }
  if (host == "localhost") host = "127.0.0.1";
  net::error_code ec;
  const auto address = net::asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) return MakeError(ErrorCode::kInvalidArgument, "HOST must be an IP address");
  return net::tcp::endpoint(address, static_cast<uint16_t>(port));
}

net::tcp::endpoint RemoteEndpoint(const StrandSocket& socket) {
  net::error_code ec;
  net::tcp::endpoint endpoint = socket.remote_endpoint(ec);
  return ec ? net::tcp::endpoint() : endpoint;
}

}  // namespace scenecrdt::server
