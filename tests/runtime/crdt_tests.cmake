# SPDX-License-Identifier: Apache-2.0
# CRDT-side tests of runtime_tests.
target_sources(runtime_tests PRIVATE
  sha256_test.cc
)
