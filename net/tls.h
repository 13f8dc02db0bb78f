// SPDX-License-Identifier: Apache-2.0
// Owns the one way server/, client/ and their tests include Asio's and Beast's TLS streams
// (over Debian's OpenSSL 3): kept apart from net.h so code without TLS does not parse them.
#pragma once

// clang-format off
#include "scenecrdt/net/net.h"
#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/ssl.hpp>
// clang-format on

namespace scenecrdt::net {

namespace ssl = boost::asio::ssl;

}  // namespace scenecrdt::net
