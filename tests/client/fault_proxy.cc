// SPDX-License-Identifier: Apache-2.0
// Owns the fault proxy's forwarding: one Link per accepted connection, two Pipes per Link
// (client -> server, server -> client), each a bounded queue of timed chunks.
#include "tests/client/fault_proxy.h"

#include <chrono>
#include <deque>
#include <future>
#include <vector>

namespace scenecrdt::client::test {

namespace {
constexpr std::size_t kReadChunk = 16 * 1024;
constexpr std::size_t kMaxBufferedBytes = 1u << 20;
using Clock = std::chrono::steady_clock;
}  // namespace

struct FaultProxy::Pipe {
  struct Chunk {
    Clock::time_point release;
    std::vector<uint8_t> bytes;
  };
  std::vector<uint8_t> buffer = std::vector<uint8_t>(kReadChunk);
  std::deque<Chunk> queue;
  std::size_t queued_bytes = 0;
  Clock::time_point last_release{};
  bool reading = false;
  bool writing = false;
};

struct FaultProxy::Link {
  explicit Link(net::asio::io_context& ioc)
      : down(ioc), up(ioc), timers{net::asio::steady_timer(ioc), net::asio::steady_timer(ioc)} {}
  net::tcp::socket down;  // the client's side
  net::tcp::socket up;    // the server's side
  net::asio::steady_timer timers[2];
  Pipe pipes[2];  // by Direction: kToServer reads `down`, kToClient reads `up`
  bool open = false;
  bool cut = false;

  net::tcp::socket& source(int dir) { return dir == 0 ? down : up; }
  net::tcp::socket& sink(int dir) { return dir == 0 ? up : down; }
};

FaultProxy::FaultProxy(uint16_t upstream_port, uint64_t seed)
    : acceptor_(ioc_), upstream_port_(upstream_port), random_(seed) {
  net::error_code ec;
  const net::tcp::endpoint endpoint(net::asio::ip::make_address("127.0.0.1", ec), 0);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::asio::socket_base::max_listen_connections, ec);
  if (!ec) port_ = acceptor_.local_endpoint(ec).port();
  if (ec) port_ = 0;  // the tests check port() before using the proxy
  work_.emplace(ioc_.get_executor());
  if (port_ != 0) Accept();
  thread_ = std::thread([this] { ioc_.run(); });
}

FaultProxy::~FaultProxy() {
  net::asio::post(ioc_, [this] {
    net::error_code ignored;
    acceptor_.close(ignored);
    while (!links_.empty()) Cut(*links_.begin());
  });
  work_.reset();
  thread_.join();
}

double FaultProxy::Unit() { return static_cast<double>(random_() >> 11) * 0x1.0p-53; }

void FaultProxy::Accept() {
  acceptor_.async_accept([this](const net::error_code& ec, net::tcp::socket socket) {
    if (ec == net::asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      if (!accepting_) {
        net::error_code ignored;
        socket.close(ignored);
        links_refused_.fetch_add(1);
      } else {
        auto link = std::make_shared<Link>(ioc_);
        link->down = std::move(socket);
        links_.insert(link);
        StartLink(link);
      }
    }
    Accept();
  });
}

void FaultProxy::StartLink(std::shared_ptr<Link> link) {
  const net::tcp::endpoint upstream(net::asio::ip::address_v4::loopback(), upstream_port_);
  link->up.async_connect(upstream, [this, link](const net::error_code& ec) {
    if (link->cut) return;
    if (ec) {
      Cut(link);
      return;
    }
    net::error_code ignored;
    link->up.set_option(net::tcp::no_delay(true), ignored);
    link->down.set_option(net::tcp::no_delay(true), ignored);
    link->open = true;
    links_accepted_.fetch_add(1);
    Read(link, 0);
    Read(link, 1);
  });
}

void FaultProxy::Read(const std::shared_ptr<Link>& link, int dir) {
  Pipe& pipe = link->pipes[dir];
  if (link->cut || pipe.reading || pipe.queued_bytes >= kMaxBufferedBytes) return;
  pipe.reading = true;
  link->source(dir).async_read_some(
      net::asio::buffer(pipe.buffer), [this, link, dir](const net::error_code& ec, std::size_t n) {
        Pipe& p = link->pipes[dir];
        p.reading = false;
        if (link->cut) return;
        if (ec) {  // either side closing ends the link, as a cut would
          Cut(link);
          return;
        }
        if (faults_.cut_probability > 0.0 && Unit() < faults_.cut_probability) {
          random_cuts_.fetch_add(1);
          Cut(link);
          return;
        }
        // Commanded drops take the chunk's first bytes; a random drop takes 1..3 bytes at a
        // random place. Never a whole frame (a frame is at least 8 bytes): a stream missing
        // whole frames is not something TCP produces, and nothing above it could tell.
        std::vector<uint8_t> bytes(p.buffer.begin(), p.buffer.begin() + n);
        std::size_t dropped = std::min(drop_next_[dir], bytes.size());
        drop_next_[dir] -= dropped;
        bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(dropped));
        if (faults_.drop_probability > 0.0 && !bytes.empty() && Unit() < faults_.drop_probability) {
          const std::size_t k = std::min<std::size_t>(bytes.size(), 1 + random_() % 3);
          const std::size_t at = random_() % (bytes.size() - k + 1);
          bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                      bytes.begin() + static_cast<std::ptrdiff_t>(at + k));
          dropped += k;
        }
        if (dropped > 0) {
          chunks_dropped_.fetch_add(1);
          bytes_dropped_.fetch_add(dropped);
        }
        if (!bytes.empty()) {
          uint32_t delay_ms = faults_.min_delay_ms;
          if (faults_.max_delay_ms > faults_.min_delay_ms) {
            delay_ms += static_cast<uint32_t>(
                Unit() * static_cast<double>(faults_.max_delay_ms - faults_.min_delay_ms + 1));
          }
          // Never before the previous chunk: a delay reorders nothing (TCP keeps order).
          const auto release =
              std::max(p.last_release, Clock::now() + std::chrono::milliseconds(delay_ms));
          p.last_release = release;
          p.queued_bytes += bytes.size();
          p.queue.push_back({release, std::move(bytes)});
        }
        Pump(link, dir);
        Read(link, dir);
      });
}

void FaultProxy::Pump(const std::shared_ptr<Link>& link, int dir) {
  Pipe& pipe = link->pipes[dir];
  if (link->cut || pipe.writing || pipe.queue.empty() || stalled_[dir]) return;
  const Clock::time_point release = pipe.queue.front().release;
  pipe.writing = true;
  if (release > Clock::now()) {
    link->timers[dir].expires_at(release);
    link->timers[dir].async_wait([this, link, dir](const net::error_code&) {
      link->pipes[dir].writing = false;
      Pump(link, dir);
    });
    return;
  }
  net::asio::async_write(link->sink(dir), net::asio::buffer(pipe.queue.front().bytes),
                         [this, link, dir](const net::error_code& ec, std::size_t n) {
                           Pipe& p = link->pipes[dir];
                           p.writing = false;
                           if (link->cut) return;
                           if (ec) {
                             Cut(link);
                             return;
                           }
                           bytes_forwarded_[dir].fetch_add(n);
                           p.queued_bytes -= p.queue.front().bytes.size();
                           p.queue.pop_front();
                           Read(link, dir);  // resumes a read paused at the bound
                           Pump(link, dir);
                         });
}

void FaultProxy::Cut(const std::shared_ptr<Link>& ref) {
  const std::shared_ptr<Link> link = ref;  // `ref` may be the set's own element
  if (link->cut) return;
  link->cut = true;
  cuts_.fetch_add(1);
  net::error_code ignored;
  for (net::tcp::socket* s : {&link->down, &link->up}) {
    s->shutdown(net::tcp::socket::shutdown_both, ignored);
    s->close(ignored);
  }
  for (auto& t : link->timers) t.cancel();
  for (auto& p : link->pipes) {
    p.queue.clear();
    p.queued_bytes = 0;
  }
  links_.erase(link);
}

void FaultProxy::SetUpstream(uint16_t port) {
  net::asio::post(ioc_, [this, port] { upstream_port_ = port; });
}

void FaultProxy::CutAll() {
  net::asio::post(ioc_, [this] {
    while (!links_.empty()) Cut(*links_.begin());
  });
}

void FaultProxy::SetAccepting(bool on) {
  net::asio::post(ioc_, [this, on] { accepting_ = on; });
}

void FaultProxy::Stall(Direction direction, bool on) {
  net::asio::post(ioc_, [this, dir = static_cast<int>(direction), on] {
    stalled_[dir] = on;
    if (!on) {
      const std::vector<std::shared_ptr<Link>> links(links_.begin(), links_.end());
      for (const auto& link : links) Pump(link, dir);
    }
  });
}

void FaultProxy::DropNext(Direction direction, std::size_t bytes) {
  net::asio::post(ioc_,
                  [this, dir = static_cast<int>(direction), bytes] { drop_next_[dir] += bytes; });
}

void FaultProxy::SetRandomFaults(const RandomFaults& faults) {
  net::asio::post(ioc_, [this, faults] { faults_ = faults; });
}

FaultProxyStats FaultProxy::stats() const {
  FaultProxyStats s;
  s.links_accepted = links_accepted_.load();
  s.links_refused = links_refused_.load();
  s.cuts = cuts_.load();
  s.random_cuts = random_cuts_.load();
  s.chunks_dropped = chunks_dropped_.load();
  s.bytes_dropped = bytes_dropped_.load();
  s.bytes_forwarded[0] = bytes_forwarded_[0].load();
  s.bytes_forwarded[1] = bytes_forwarded_[1].load();
  return s;
}

std::size_t FaultProxy::live_links() {
  std::promise<std::size_t> answer;
  auto future = answer.get_future();
  net::asio::post(ioc_, [this, &answer] { answer.set_value(links_.size()); });
  return future.get();
}

}  // namespace scenecrdt::client::test
