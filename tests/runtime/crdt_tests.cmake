# SPDX-License-Identifier: Apache-2.0
# CRDT-side tests of runtime_tests.
target_sources(runtime_tests PRIVATE
  crdt_admission_test.cc
  crdt_store_property_test.cc
  crdt_store_test.cc
  runtime_test.cc
  sha256_test.cc
)
