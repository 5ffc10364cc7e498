#include "loader/core/generation_history.h"

#include <cstdint>
#include <vector>

#include "loader/core/settings.h"
#include "loader/core/stats.h"

namespace loehle {

void GenerationHistory::Begin(uint32_t generation, const Settings& settings) {
  settings_[generation] = settings;
}

void GenerationHistory::Retire(const GenerationStats& stats) {
  if (settings_.contains(stats.generation)) retired_[stats.generation] = stats;
}

std::vector<uint32_t> GenerationHistory::Overflow() const {
  std::vector<uint32_t> overflow;
  size_t excess = settings_.size() > keep_ ? settings_.size() - keep_ : 0;
  for (auto it = settings_.begin(); excess > 0; ++it, --excess) {
    overflow.push_back(it->first);
  }
  return overflow;
}

void GenerationHistory::Fold(const GenerationStats& stats) {
  // `stats` may be our own Retired() entry: sum it before erasing it.
  if (!settings_.contains(stats.generation)) return;
  FoldInto(&older_, stats);
  const uint32_t generation = stats.generation;
  settings_.erase(generation);
  retired_.erase(generation);
}

const GenerationStats* GenerationHistory::Retired(uint32_t generation) const {
  const auto it = retired_.find(generation);
  return it != retired_.end() ? &it->second : nullptr;
}

}  // namespace loehle
