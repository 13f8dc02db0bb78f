// SPDX-License-Identifier: Apache-2.0
// Owns the accept backoff's doubling.
#include "scenecrdt/server/transport/accept_backoff.h"

#include <algorithm>

namespace scenecrdt::server {

std::chrono::milliseconds AcceptBackoff::Next() {
  const std::chrono::milliseconds delay = next_;
  next_ = std::min(kMax, next_ * 2);
  return delay;
}

}  // namespace scenecrdt::server
