# SPDX-License-Identifier: Apache-2.0
# CRDT side of scenecrdt::runtime (store, Lamport writes, snapshots, state hash) and the
# Runtime facade joining it to the transform side.
target_sources(scenecrdt_runtime PRIVATE
  bench_streams.cc
  crdt_admission.cc
  crdt_local_writes.cc
  crdt_state_hash.cc
  crdt_store.cc
  runtime.cc
  sha256.cc
)
