// SPDX-License-Identifier: Apache-2.0
// Owns Connection (internal: not installed): one client transport (framed TCP or WebSocket
// /scene/<name>, each with or without TLS) on a strand of the caller's io_context: connect,
// read frames (verified with ReadFrame), write queued frames in gather writes (over WebSocket,
// one message each, under the server's frame limit); it offers compression (permessage-deflate
// on ws://) and follows a Welcome that switches a TCP stream to zstd and tells the frame limit.
// It knows nothing about scenes or replicas: Client and the load generator build on it.
// Callbacks run on the connection's strand.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/client/client_options.h"
#include "scenecrdt/client/url.h"
#include "scenecrdt/net/net.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/protocol/session/zstd_records.h"
#include "scenecrdt/protocol/session/zstd_stream.h"

namespace scenecrdt::client {

struct ConnectionStreams;

// Sets what `hello` offers to read compressed over `url`: on tcp:// (and tls://) with
// options.zstd, the zstd stream (Hello.compression) and, with options.zstd_frames, zstd frames.
void OfferCompression(const ServerUrl& url, const ConnectionOptions& options,
                      session::Hello& hello);

// After a failed write, how long the read side may take to reach the end of the stream (the
// server's goodbye, then its FIN) before the connection fails with the write's error.
inline constexpr int kWriteFailureGraceMs = 2000;

struct ConnectionHandlers {
  std::function<void()> on_open;  // transport ready: send Hello now
  // A verified frame; views (Crdt::data) are valid during the call only. `raw` is the whole
  // frame (size prefix included).
  std::function<void(const session::Frame& frame, std::span<const uint8_t> raw)> on_frame;
  // Once, when the connection ends (error or Close). kOk after a clean close.
  std::function<void(const Error& error)> on_closed;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(net::asio::io_context& ioc, ServerUrl url, std::string scene,
             ConnectionOptions options, ConnectionHandlers handlers);
  ~Connection();

  // Resolves, connects (and upgrades to WebSocket). Thread-safe.
  void Start();
  // Queues one size-prefixed frame. Thread-safe. False when over max_queued_bytes or closed.
  bool Send(std::vector<uint8_t> frame);
  // Pauses or resumes reading (the consumer's backpressure). Thread-safe.
  void SetReading(bool on);
  // Closes now (pending writes are dropped). Thread-safe.
  void Close();
  // Writes what is queued and then `last` (a goodbye), then closes; closes anyway after
  // `limit`. Closes at once when the transport is not open. Thread-safe.
  void CloseAfter(std::vector<uint8_t> last, std::chrono::milliseconds limit);

  std::size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }
  uint64_t bytes_received() const { return bytes_received_.load(std::memory_order_relaxed); }
  uint64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }
  // With kernel_receive_timestamps: the kernel's receive time (CLOCK_REALTIME, ns) of the
  // read that completed the frame being delivered; 0 when the kernel gave none. On the strand.
  int64_t receive_time_ns() const { return receive_time_ns_; }

 private:
  // With options_.local_address: bind, then connect to the first address of its family.
  void ConnectFrom(const net::tcp::resolver::results_type& results);
  void OnTcpConnected(const net::error_code& ec);  // then TLS, the upgrade or OnConnected
  void TlsHandshake();                             // tls:// and wss://, after the TCP connect
  void Upgrade();                                  // ws:// and wss://, then OnConnected
  void OnConnected();
  void Read();
  void OnBytes(std::size_t n);
  // Read() with SO_TIMESTAMPNS: wait for readability, then recvmsg with its control data.
  void ReadStamped();
  void Deliver(std::span<const uint8_t> frame);
  // Compressed modes (after a Welcome with compression = zstd or zstd frames): decompress,
  // frame, deliver.
  void FeedCompressed(std::span<const uint8_t> bytes);
  void WriteNext();
  void Fail(const Error& error);
  void ArmKeepalive();
  void Queue(std::vector<uint8_t> frame);
  void OnWriteFailed();

  net::Strand strand_;
  ServerUrl url_;
  std::string scene_;
  ConnectionOptions options_;
  ConnectionHandlers handlers_;
  std::unique_ptr<ConnectionStreams> streams_;  // connection_streams.h
  std::vector<uint8_t> in_;     // receive buffer (TCP); only grows, never re-zeroed per read
  std::size_t in_used_ = 0;     // bytes of in_ received and not yet framed
  std::vector<uint8_t> frame_;  // aligned copy of one frame
  // Set by a Welcome with compression = zstd (TCP): every later byte goes through it.
  std::unique_ptr<session::ZstdFrameReader> zstd_;
  // Set by a Welcome with compression = zstd frames (TCP): every later byte is a record.
  std::unique_ptr<session::ZstdRecordReader> records_;
  std::deque<std::vector<uint8_t>> out_;
  std::vector<std::vector<uint8_t>> in_flight_;
  std::vector<net::asio::const_buffer> buffers_;
  // The server's frame limit, which bounds one WebSocket message of gathered frames: the
  // Welcome's, the documented default before it.
  uint32_t send_limit_bytes_ = session::kDefaultServerMaxFrameBytes;
  bool writing_ = false;
  // A write failed while a read was in flight: nothing more is written, and the read side
  // ends the connection (it may still hold the server's goodbye), or the deadline after
  // kWriteFailureGraceMs does.
  bool write_failed_ = false;
  bool reading_ = true;
  bool read_pending_ = false;
  bool open_ = false;
  bool closed_ = false;
  bool closing_ = false;              // CloseAfter: close once the queue is written
  std::optional<Error> setup_error_;  // the TLS context could not be built (Start reports it)
  uint64_t ping_nonce_ = 0;
  int64_t receive_time_ns_ = 0;
  std::chrono::steady_clock::time_point last_pong_{};
  std::atomic<std::size_t> queued_bytes_{0};
  std::atomic<uint64_t> bytes_received_{0};
  std::atomic<uint64_t> bytes_sent_{0};
};

}  // namespace scenecrdt::client
