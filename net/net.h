// SPDX-License-Identifier: Apache-2.0
// Owns the one way server/, client/ and their tests include Boost.Asio and Beast. Boost 1.74's
// Asio uses std::exchange without including <utility>, which g++ 12 no longer pulls in
// transitively: include <utility> first. Never include <boost/asio.hpp> anywhere else.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
// clang-format on

namespace scenecrdt::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = boost::asio::ip::tcp;
using error_code = boost::system::error_code;
using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

}  // namespace scenecrdt::net
