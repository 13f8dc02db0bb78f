// SPDX-License-Identifier: Apache-2.0
// Owns the recvmsg with SCM_TIMESTAMPNS control data.
#include "scenecrdt/client/internal/receive_timestamp.h"

#include <sys/socket.h>

#include <cstring>
#include <ctime>

namespace scenecrdt::client {

ssize_t ReceiveStamped(int fd, std::span<uint8_t> buffer, int64_t& receive_time_ns) {
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
  receive_time_ns = 0;
  if (n <= 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts{};
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      receive_time_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }
  }
  return n;
}

}  // namespace scenecrdt::client
