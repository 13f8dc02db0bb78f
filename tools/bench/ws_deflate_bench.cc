// SPDX-License-Identifier: Apache-2.0
// The WebSocket transport's cost of a joiner storm over permessage-deflate (issue 23 item 5),
// without the rest of the server: one io thread accepts N Beast streams negotiated with the
// server's deflate settings (net/ws_compression.h) and writes each the same shared snapshot
// of S bytes, as the scene does; N in-process clients (their own thread) offer deflate and
// read it. Mode `deflate`: every message compressed, per session (the old behaviour); mode
// `bounded`: SetMessageCompression as WebSocketTransport::Write does (a message above
// kMaxDeflatedMessageBytes goes as it is). Prints the io thread's CPU time, the slowest
// delivery, the joiners whose write took longer than --slow-consumer-ms's default (5 s, the
// server would cut them) and the worst lateness of a 50 ms timer on the io thread (what a
// /healthz request waits). Figures: docs/SERVER.md "Compression".
// usage: ws_deflate_bench deflate|bounded JOINERS SNAPSHOT_BYTES
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/net/ws_compression.h"
#include "scenecrdt/server/transport/endpoint.h"
#include "scenecrdt/server/transport/ws_message_compression.h"

namespace {

using namespace scenecrdt;
using Clock = std::chrono::steady_clock;
using ServerWs = net::beast::websocket::stream<server::StrandSocket>;
constexpr int64_t kSlowConsumerMs = 5000;

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Text-like bytes (letters and spaces), as in tools/bench/deflate_joiners.js.
std::shared_ptr<const std::vector<uint8_t>> Snapshot(std::size_t bytes) {
  auto out = std::make_shared<std::vector<uint8_t>>(bytes);
  uint32_t seed = 12345;
  const auto next = [&] {
    seed ^= seed << 13;
    seed ^= seed >> 17;
    seed ^= seed << 5;
    return seed;
  };
  for (uint8_t& b : *out) b = static_cast<uint8_t>(next() % 7 == 0 ? 32 : 97 + next() % 26);
  return out;
}

struct Joiner {
  std::unique_ptr<ServerWs> ws;
  Clock::time_point write_start;
  int64_t write_ms = -1;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ws_deflate_bench deflate|bounded JOINERS SNAPSHOT_BYTES\n");
    return 2;
  }
  const bool bounded = std::string(argv[1]) == "bounded";
  const int joiners = std::atoi(argv[2]);
  const auto snapshot = Snapshot(static_cast<std::size_t>(std::atoll(argv[3])));

  net::asio::io_context server_io;
  net::tcp::acceptor acceptor(server_io,
                              net::tcp::endpoint(net::asio::ip::address_v4::loopback(), 0));
  const uint16_t port = acceptor.local_endpoint().port();

  // Clients: connect, offer deflate, read one message each.
  std::atomic<int> received{0};
  std::thread clients([&] {
    net::asio::io_context io;
    std::vector<std::unique_ptr<net::beast::websocket::stream<net::tcp::socket>>> streams;
    std::vector<net::beast::flat_buffer> buffers(static_cast<std::size_t>(joiners));
    for (int i = 0; i < joiners; ++i) {
      auto ws = std::make_unique<net::beast::websocket::stream<net::tcp::socket>>(io);
      net::error_code ec;
      ws->next_layer().connect(net::tcp::endpoint(net::asio::ip::address_v4::loopback(), port), ec);
      ws->set_option(net::ClientDeflate(true));
      ws->read_message_max(256u << 20);
      ws->handshake("127.0.0.1", "/dcl/bench", ec);
      if (ec) std::fprintf(stderr, "handshake: %s\n", ec.message().c_str());
      streams.push_back(std::move(ws));
    }
    for (int i = 0; i < joiners; ++i) {
      streams[static_cast<std::size_t>(i)]->async_read(
          buffers[static_cast<std::size_t>(i)],
          [&](const net::error_code&, std::size_t) { ++received; });
    }
    io.run();
  });

  // Server: accept and upgrade every joiner, then hand each the shared snapshot at once.
  std::vector<Joiner> sessions(static_cast<std::size_t>(joiners));
  for (Joiner& j : sessions) {
    server::StrandSocket socket(net::asio::make_strand(server_io));
    acceptor.accept(socket);
    j.ws = std::make_unique<ServerWs>(std::move(socket));
    j.ws->set_option(net::ServerDeflate(true));
    j.ws->binary(true);
    j.ws->auto_fragment(false);
    j.ws->accept();
  }
  // The io thread's responsiveness: a 50 ms timer, its worst lateness.
  int written = 0;
  int64_t worst_late_ms = 0;
  net::asio::steady_timer tick(server_io);
  std::function<void()> arm = [&] {
    const auto due = Clock::now() + std::chrono::milliseconds(50);
    tick.expires_at(due);
    tick.async_wait([&, due](const net::error_code& ec) {
      // A wait that completed just before the last write's cancel() must not re-arm.
      if (ec || written == joiners) return;
      worst_late_ms = std::max<int64_t>(
          worst_late_ms,
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - due).count());
      arm();
    });
  };
  const double cpu_before = ThreadCpuSeconds();
  const auto started = Clock::now();
  arm();
  for (Joiner& j : sessions) {
    net::asio::post(j.ws->get_executor(), [&, jp = &j] {
      if (bounded) {
        server::SetMessageCompression(*jp->ws,
                                      snapshot->size() <= server::kMaxDeflatedMessageBytes);
      }
      jp->write_start = Clock::now();
      jp->ws->async_write(net::asio::buffer(*snapshot), [&, jp](const net::error_code&,
                                                                std::size_t) {
        jp->write_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - jp->write_start)
                .count();
        if (++written == joiners) tick.cancel();
      });
    });
  }
  server_io.run();
  const double cpu = ThreadCpuSeconds() - cpu_before;
  const auto total_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  clients.join();
  int64_t slowest = 0;
  int cut = 0;
  for (const Joiner& j : sessions) {
    slowest = std::max(slowest, j.write_ms);
    if (j.write_ms > kSlowConsumerMs) ++cut;
  }
  std::printf(
      "mode=%s joiners=%d snapshot_bytes=%zu received=%d io_thread_cpu_s=%.2f wall_ms=%lld "
      "slowest_write_ms=%lld over_slow_consumer_ms=%d worst_timer_lateness_ms=%lld\n",
      bounded ? "bounded" : "deflate", joiners, snapshot->size(), received.load(), cpu,
      static_cast<long long>(total_ms), static_cast<long long>(slowest), cut,
      static_cast<long long>(worst_late_ms));
  return 0;
}
