// SPDX-License-Identifier: Apache-2.0
// Owns printing an endpoint as "IP:PORT" for logs.
#include "scenecrdt/server/observability/endpoint_text.h"

#include <arpa/inet.h>

namespace scenecrdt::server {

std::string EndpointText(const net::tcp::endpoint& endpoint) {
  char text[64] = "?";
  const net::asio::ip::address address = endpoint.address();
  if (address.is_v4()) {
    const auto bytes = address.to_v4().to_bytes();
    inet_ntop(AF_INET, bytes.data(), text, sizeof text);
    return std::string(text) + ':' + std::to_string(endpoint.port());
  }
  const auto bytes = address.to_v6().to_bytes();
  inet_ntop(AF_INET6, bytes.data(), text, sizeof text);
  return '[' + std::string(text) + "]:" + std::to_string(endpoint.port());
}

}  // namespace scenecrdt::server
