// SPDX-License-Identifier: Apache-2.0
// Owns ReceiveStamped (internal: not installed): one non-blocking recvmsg that also reads the
// kernel's receive time of the bytes (SO_TIMESTAMPNS, enabled on the socket by the caller),
// for the load generator's latency figures (docs/CLIENT.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>

namespace scenecrdt::client {

// Reads what `fd` holds into `buffer` without blocking: the byte count (0: the peer closed),
// or -1 with errno set (EAGAIN: nothing yet). `receive_time_ns`: the kernel's CLOCK_REALTIME
// receive time of the bytes, 0 when the socket did not report one.
ssize_t ReceiveStamped(int fd, std::span<uint8_t> buffer, int64_t& receive_time_ns);

}  // namespace scenecrdt::client
