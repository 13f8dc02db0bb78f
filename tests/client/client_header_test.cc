// SPDX-License-Identifier: Apache-2.0
// Tests that what a renderer includes for the network client keeps the network side out of
// its build: this translation unit includes only scenecrdt/client/client.h and fails to
// compile when Boost (Asio, Beast) or flatbuffers come with it (client_header_check.cmake
// checks the whole include list), and drives a Client through that header alone.
#include "scenecrdt/client/client.h"

#if defined(BOOST_VERSION) || defined(BOOST_ASIO_VERSION) || defined(BOOST_BEAST_VERSION)
#error "scenecrdt/client/client.h includes Boost (the network side leaks)"
#endif
#if defined(FLATBUFFERS_VERSION_MAJOR)
#error "scenecrdt/client/client.h includes flatbuffers (the session envelope leaks)"
#endif

#include <gtest/gtest.h>

namespace scenecrdt::client {
namespace {

template <class T>
constexpr bool kIsComplete = requires {
  sizeof(T);
};
static_assert(!kIsComplete<Client::Impl>, "Client must hold its network side behind a pointer");

TEST(ClientHeaderTest, ClientHeaderAloneDrivesAClient) {
  ClientOptions options;
  options.url = "tcp://127.0.0.1:1";  // nothing listens there
  options.scene = "header";
  Client c(options);
  // Writes before the first snapshot are held; the replica is read-only from outside.
  protocol::Transform t;
  t.position = {1.0f, 2.0f, 3.0f};
  ASSERT_TRUE(c.WriteTransform(600, t).has_value());
  EXPECT_EQ(c.unsent_writes(), 1u);
  const runtime::Runtime& replica = c.runtime();
  EXPECT_EQ(replica.store().num_entities(), 0u);
  auto joined = c.Join(std::chrono::seconds(20));
  ASSERT_FALSE(joined.has_value());
  EXPECT_EQ(joined.error().code, ErrorCode::kIo);
  EXPECT_TRUE(c.closed());
}

}  // namespace
}  // namespace scenecrdt::client
