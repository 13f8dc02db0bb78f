// SPDX-License-Identifier: Apache-2.0
// Owns ShrinkSchedule: delta debugging (Zeller's ddmin) over a delivery schedule, used by
// `converge` to turn a diverging schedule into a minimal one that still diverges.
#pragma once

#include <cstddef>
#include <vector>

namespace scenecrdt::cli {

// Returns a subsequence of `schedule` for which still_fails(subsequence) holds and from which
// no single element can be removed without losing that property (1-minimal). `still_fails`
// must hold for `schedule` itself.
template <class T, class Pred>
std::vector<T> ShrinkSchedule(std::vector<T> schedule, Pred&& still_fails) {
  std::size_t granularity = 2;
  while (schedule.size() >= 2) {
    const std::size_t chunk = (schedule.size() + granularity - 1) / granularity;
    bool reduced = false;
    for (std::size_t start = 0; start < schedule.size(); start += chunk) {
      std::vector<T> complement;
      complement.reserve(schedule.size());
      for (std::size_t i = 0; i < schedule.size(); ++i) {
        if (i < start || i >= start + chunk) complement.push_back(schedule[i]);
      }
      if (!complement.empty() && still_fails(complement)) {
        schedule = std::move(complement);
        granularity = granularity > 2 ? granularity - 1 : 2;
        reduced = true;
        break;
      }
    }
    if (reduced) continue;
    if (granularity >= schedule.size()) break;  // single elements tried: 1-minimal
    granularity = granularity * 2 < schedule.size() ? granularity * 2 : schedule.size();
  }
  return schedule;
}

}  // namespace scenecrdt::cli
