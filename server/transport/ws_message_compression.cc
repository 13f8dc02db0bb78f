// SPDX-License-Identifier: Apache-2.0
// Owns reaching Beast's per-message compression switch. websocket::stream keeps its state in a
// private `impl_`; an explicit instantiation may name private members in its template
// arguments (access is not checked there), so the friend defined below gets a member pointer
// to it without a cast (the friend is inline: the exported functions call it here). Checked
// against Boost 1.74 (Debian 12, what the project builds with): another version fails the
// build here until the field is checked again.
#include "scenecrdt/server/transport/ws_message_compression.h"

#include <boost/version.hpp>

static_assert(BOOST_VERSION / 100 == 1074,
              "check that websocket::stream's impl_type::wr_compress_opt still exists and is "
              "read in begin_msg() (boost/beast/websocket/impl/stream_impl.hpp)");

namespace scenecrdt::server {

namespace {

using PlainWs = net::beast::websocket::stream<StrandSocket>;
using TlsWs = net::beast::websocket::stream<TlsSocket>;

// Declared here so that the friend definitions below are these functions (a friend is not
// found by a call otherwise) and have internal linkage.
void SetCompressOption(PlainWs& ws, bool on);
void SetCompressOption(TlsWs& ws, bool on);

template <class Stream, auto kImpl>
struct MessageCompressionSwitch {
  friend void SetCompressOption(Stream& ws, bool on) { (ws.*kImpl)->wr_compress_opt = on; }
};
template struct MessageCompressionSwitch<PlainWs, &PlainWs::impl_>;
template struct MessageCompressionSwitch<TlsWs, &TlsWs::impl_>;

}  // namespace

void SetMessageCompression(PlainWs& ws, bool on) { SetCompressOption(ws, on); }
void SetMessageCompression(TlsWs& ws, bool on) { SetCompressOption(ws, on); }

}  // namespace scenecrdt::server
