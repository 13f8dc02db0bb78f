# SPDX-License-Identifier: Apache-2.0
# Tests of the CRDT side (runtime_crdt_tests: scenecrdt::crdt alone).
target_sources(runtime_crdt_tests PRIVATE
  crdt_admission_test.cc
  crdt_parts_test.cc
  crdt_store_entity_test.cc
  crdt_store_property_test.cc
  crdt_store_test.cc
  sha256_test.cc
)
