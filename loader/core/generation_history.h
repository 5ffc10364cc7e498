// Which configuration generations the daemon remembers, and how.
//
// Every `ctl set` starts a generation. The BPF side counts the newest
// LOEHLE_GEN_SLOTS of them in place; the loader keeps the final counters of
// a generation whose slot is recycled. Kept forever, that grew without
// bound (2,600 switches: a stats reply past 1 MB, which the control socket
// then refused to send, and the daemon's RSS from 16 to 62 MB). So only the
// newest `keep` generations are kept one by one; older ones are folded into
// one running total (FoldedGenerations), which keeps every count, the
// event drops among them, but not which generation it came from.

#ifndef LOEHLE_LOADER_CORE_GENERATION_HISTORY_H_
#define LOEHLE_LOADER_CORE_GENERATION_HISTORY_H_

#include <cstdint>
#include <map>
#include <vector>

#include "loader/core/settings.h"
#include "loader/core/stats.h"

namespace loehle {

// Generations kept one by one unless --keep-generations says otherwise.
// Each kept generation adds about 1.4 kB to every full stats reply and its
// counters to every /metrics scrape: at 64 a reply was 90 kB and cost the
// daemon about 20 ms of CPU in a TCG guest, at 16 25 kB and about 8 ms,
// and beside a saturating load a CLI request waits behind other clients'
// replies (Documentation/stats.md).
inline constexpr uint32_t kDefaultKeptGenerations = 16;
inline constexpr uint32_t kMaxKeptGenerations = 4096;

class GenerationHistory {
 public:
  // `keep` >= 1.
  explicit GenerationHistory(uint32_t keep) : keep_(keep < 1 ? 1 : keep) {}

  // A new generation, newer than every one before.
  void Begin(uint32_t generation, const Settings& settings);
  // The final counters of a kept generation whose BPF slot is recycled.
  void Retire(const GenerationStats& stats);
  // Kept generations beyond `keep`, oldest first: the caller reads each
  // one's counters and hands them to Fold().
  std::vector<uint32_t> Overflow() const;
  // Folds a kept generation into the running total and forgets it.
  void Fold(const GenerationStats& stats);

  uint32_t keep() const { return keep_; }
  // The kept generations with their settings, oldest first.
  const std::map<uint32_t, Settings>& settings() const { return settings_; }
  // A kept generation's final counters, once its slot was recycled.
  const GenerationStats* Retired(uint32_t generation) const;
  const FoldedGenerations& older() const { return older_; }

 private:
  uint32_t keep_;
  std::map<uint32_t, Settings> settings_;
  std::map<uint32_t, GenerationStats> retired_;
  FoldedGenerations older_;
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_GENERATION_HISTORY_H_
