// SPDX-License-Identifier: Apache-2.0
// Owns the bounded list of a scene's recent abnormal ends.
#include "scenecrdt/server/scene/departures.h"

#include <algorithm>

namespace scenecrdt::server {

void Departures::Note(const net::asio::ip::address& address, SessionKind kind, int64_t now_ms) {
  if (departures_.size() >= kMaxDepartures) departures_.pop_front();
  departures_.push_back({address, kind, now_ms});
}

bool Departures::Take(const net::asio::ip::address& address, SessionKind kind, int64_t now_ms) {
  while (!departures_.empty() && now_ms - departures_.front().left_ms > kReconnectWindowMs) {
    departures_.pop_front();
  }
  auto departed = std::find_if(departures_.begin(), departures_.end(), [&](const Departure& d) {
    return d.kind == kind && d.address == address;
  });
  if (departed == departures_.end()) return false;
  departures_.erase(departed);
  return true;
}

}  // namespace scenecrdt::server
