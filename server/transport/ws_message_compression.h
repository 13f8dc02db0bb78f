// SPDX-License-Identifier: Apache-2.0
// Owns the per-message permessage-deflate switch of the server's WebSocket streams: with
// deflate negotiated, a message larger than kMaxDeflatedMessageBytes goes uncompressed (RSV1
// clear, legal in RFC 7692 section 6: the sender chooses per message). A snapshot or a large
// catch-up is sent to each joiner, and Beast compresses every message with the session's own
// context, so deflating it costs each joiner a whole pass over the scene (issue 23 item 5,
// docs/SERVER.md "Compression"); uncompressed it costs one gather write of the shared bytes.
#pragma once

#include <cstddef>

#include "scenecrdt/server/transport/endpoint.h"

namespace scenecrdt::server {

// Messages up to this size are deflated (when negotiated); larger ones go as they are. 64 KiB:
// a tick of ~2 000 moving Transforms; deflating it takes ~1-3 ms per member (Beast's deflate,
// level 1), so the per-member cost of any message is bounded by that.
inline constexpr std::size_t kMaxDeflatedMessageBytes = 64 * 1024;

// Whether the next message written on `ws` is compressed (when deflate was negotiated; no
// effect otherwise). Read by Beast when a message starts, so call it before each async_write.
// Boost 1.74's stream has the switch (impl_type::wr_compress_opt) but no member function for
// it; ws_message_compression.cc reaches it for the two stream types the server uses.
void SetMessageCompression(net::beast::websocket::stream<StrandSocket>& ws, bool on);
void SetMessageCompression(net::beast::websocket::stream<TlsSocket>& ws, bool on);

}  // namespace scenecrdt::server
