// SPDX-License-Identifier: Apache-2.0
// Owns the WebSocket permessage-deflate settings (RFC 7692) of the server and the C++ client:
// Beast's deflate with context takeover, a small window and memory level, so one session's
// compression state stays bounded (docs/SERVER.md, "Compression"). Negotiated only when the
// client offers it; a peer that does not gets plain messages.
#pragma once

#include "scenecrdt/net/net.h"

namespace scenecrdt::net {

// The sender's LZ77 window: 2^13 = 8 KiB, about one tick of 100 moving Transforms, so each
// message finds the previous tick's headers and unchanged fields. zlib's deflate state is
// about 2^(bits+2) + 2^(memLevel+9) bytes = 32 KiB + 8 KiB; the inflate side holds a window
// of at most 2^15 (the peer's choice within what it offered) = 32 KiB plus ~7 KiB.
inline constexpr int kDeflateWindowBits = 13;
inline constexpr int kDeflateMemLevel = 4;
// Level 1: the fastest; the Transform stream compresses about as well at higher levels.
inline constexpr int kDeflateLevel = 1;

// Options for the server side of an accepted stream (`enable` false: never negotiated).
inline beast::websocket::permessage_deflate ServerDeflate(bool enable) {
  beast::websocket::permessage_deflate pmd;
  pmd.server_enable = enable;
  pmd.server_max_window_bits = kDeflateWindowBits;
  pmd.client_max_window_bits = 15;
  pmd.compLevel = kDeflateLevel;
  pmd.memLevel = kDeflateMemLevel;
  return pmd;
}

// Options for the client side: offers the extension (`enable`) and compresses its own
// messages with the same bounded settings.
inline beast::websocket::permessage_deflate ClientDeflate(bool enable) {
  beast::websocket::permessage_deflate pmd;
  pmd.client_enable = enable;
  pmd.server_max_window_bits = 15;
  pmd.client_max_window_bits = kDeflateWindowBits;
  pmd.compLevel = kDeflateLevel;
  pmd.memLevel = kDeflateMemLevel;
  return pmd;
}

}  // namespace scenecrdt::net
