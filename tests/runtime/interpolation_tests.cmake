# SPDX-License-Identifier: Apache-2.0
# Interpolation tests of runtime_tests (docs/INTERPOLATION.md).
target_sources(runtime_tests PRIVATE
  interpolation_property_test.cc
  interpolation_test.cc
  interpolation_track_test.cc
  playback_timeline_test.cc
)
