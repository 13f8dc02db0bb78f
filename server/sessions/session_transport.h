// SPDX-License-Identifier: Apache-2.0
// Owns Transport and TransportEvents: the two halves of the line between a session and the
// connection under it. A Transport (framed TCP, WebSocket: ../transport/) owns the socket and
// moves bytes: it starts (its handshake), reads one message at a time, writes gather buffers
// and closes; it knows nothing of what the bytes mean. It reports back through
// TransportEvents (the Session implements it). Everything runs on the session's strand. The
// interface lives here, in sessions/, so that the session holds its transport without
// including the room above it (server/README.md "Rooms"); the transports implement it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/net/net.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

// What a transport reports, on the session's strand. A transport holds it weakly and keeps
// the session alive (its shared_ptr) for as long as one of its operations is in flight.
class TransportEvents {
 public:
  // The handshake completed (none: at once): the session starts reading.
  virtual void OnOpened() = 0;
  // One message: a framed-TCP frame, or a WebSocket message (`text`: a text message). The
  // bytes stay valid until the next Read.
  virtual void OnMessage(std::span<const uint8_t> message, bool text) = 0;
  // What the peer sent broke the transport's own framing (a frame above the limit, an empty
  // frame, an HTTP request on the framed port): a fatal `code` for the protocol to say.
  virtual void OnTransportFatal(ErrorCode code, std::string_view text) = 0;
  // The read side ended (peer gone, timeout, a failed handshake): nothing more arrives.
  virtual void OnReadError(const net::error_code& ec) = 0;
  // The write started by Write completed (`bytes` written) or failed.
  virtual void OnWriteDone(const net::error_code& ec, std::size_t bytes) = 0;
  // The socket is closed; every Close ends here (once).
  virtual void OnClosed() = 0;

 protected:
  ~TransportEvents() = default;
};

// The WebSocket close status a transport sends when it closes (RFC 6455 section 7.4.1;
// transports without one ignore it). `text`: at most 123 bytes.
struct CloseStatus {
  uint16_t code = 1000;
  std::string text;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Fixed at construction: the strand every handler runs on, and the peer's address.
  virtual const net::Strand& strand() const = 0;
  virtual const net::tcp::endpoint& peer() const = 0;
  // The handshake if any, then events.OnOpened() (or OnReadError). `events` owns the
  // transport: every later report goes to it.
  virtual void Start(std::weak_ptr<TransportEvents> events) = 0;
  // Reads one message (OnMessage or OnReadError). At most one read is in flight.
  virtual void Read() = 0;
  // Writes `buffers` (valid until OnWriteDone) as one write; at most one is in flight.
  virtual void Write(const std::vector<net::asio::const_buffer>& buffers) = 0;
  // Closes gracefully when it can (a WebSocket close with `status`, a TLS close_notify, a
  // lingering FIN); a second call, or a call with a write in flight, cuts the socket. Always
  // ends in OnClosed.
  virtual void Close(const CloseStatus& status) = 0;

  // Whether the transport can compress the server -> client stream (framed TCP: zstd). When
  // the Hello offered it, StartStreamCompression names the last plain frame (the Welcome):
  // everything written after it goes through the stream.
  virtual bool CanCompressStream() const { return false; }
  virtual void StartStreamCompression(const SharedFrame& last_plain) { (void)last_plain; }
  // The goodbye in the peer's own language when the peer spoke another one (the framed TCP
  // port answers an HTTP request with HTTP 400): sent instead of the protocol's goodbye.
  // nullptr: the protocol's.
  virtual SharedFrame ForeignGoodbye(ErrorCode code, std::string_view text) {
    (void)code;
    (void)text;
    return nullptr;
  }
};

}  // namespace scenecrdt::server
