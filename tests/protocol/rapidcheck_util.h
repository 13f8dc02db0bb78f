// SPDX-License-Identifier: Apache-2.0
// Generators shared by the protocol property tests.
#pragma once

#include <rapidcheck.h>

namespace scenecrdt::protocol::test {

// A uniform integer in [lo, hi). rapidcheck's inRange scales the range with the test size
// (only `lo` at size 0); choices that must cover the whole range use the nominal size.
template <class T>
rc::Gen<T> Uniform(T lo, T hi) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(lo, hi));
}

// Every bit pattern with equal weight, at any test size.
template <class T>
rc::Gen<T> AnyBits() {
  return rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<T>());
}

}  // namespace scenecrdt::protocol::test
