// The auto partitions' state machine (see partition_tuner.hpp).
#include "framework/plan/partition_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace xf {

double partition_window::measured_round() const {
  double round = 0;
  for (std::size_t i = 0; i < cost.size(); ++i)
    if (items[i] != 0) round = std::max(round, cost[i]);
  return round;
}

partition_tuner::partition_tuner(tuner_settings settings) : s_(std::move(settings)) {
  if (!is_tuned(s_.policy)) throw std::invalid_argument("the tuner runs the auto partitions only");
  if (s_.min_warps.empty() || s_.min_warps.size() != s_.initial.size())
    throw std::invalid_argument("one minimum and one initial warp count per operator");
  std::uint64_t minimums = 0;
  for (std::uint32_t m : s_.min_warps) minimums += std::max<std::uint32_t>(m, 1);
  if (minimums > s_.block_warps)
    throw std::invalid_argument(std::to_string(s_.min_warps.size()) + " operators need " +
                                std::to_string(minimums) + " warps, the block has " +
                                std::to_string(s_.block_warps));
  schedule_ = make_schedule(s_);
  partition_ = s_.initial;
}

std::vector<std::vector<std::uint32_t>> partition_tuner::make_schedule(const tuner_settings& s) {
  const std::size_t n = s.min_warps.size();
  std::vector<std::vector<std::uint32_t>> out;
  if (n < 2) return out;
  std::vector<partition_operator> ops;
  for (std::uint32_t m : s.min_warps) ops.push_back({{}, std::max<std::uint32_t>(m, 1)});
  std::uint32_t minimums = 0;
  for (const auto& op : ops) minimums += op.min_warps;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t lo = ops[i].min_warps, hi = s.block_warps - minimums + ops[i].min_warps;
    const std::uint32_t levels = std::max<std::uint32_t>(1, std::min(s.levels, hi - lo + 1));
    for (std::uint32_t k = 0; k < levels; ++k) {
      const auto v = static_cast<std::uint32_t>(
          levels == 1 ? lo : std::lround(lo + double(k) * (hi - lo) / double(levels - 1)));
      // The others share what is left equally (each at least its minimum).
      std::vector<partition_operator> others;
      std::vector<double> shares;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i) {
          others.push_back(ops[j]);
          shares.push_back(double(s.block_warps - v) / double(n - 1));
        }
      const std::vector<std::uint32_t> rest = round_partition(shares, others, s.block_warps - v);
      std::vector<std::uint32_t> warps;
      for (std::size_t j = 0, r = 0; j < n; ++j) warps.push_back(j == i ? v : rest[r++]);
      if (std::find(out.begin(), out.end(), warps) == out.end()) out.push_back(std::move(warps));
    }
  }
  return out;
}

std::optional<std::vector<std::uint32_t>> partition_tuner::request(std::vector<std::uint32_t> warps) {
  partition_ = warps;
  window_.open = false;
  return warps;
}

std::uint64_t partition_tuner::window_items(const std::vector<cost_total>& totals) const {
  std::uint64_t items = 0;
  for (std::size_t i = 0; i < totals.size(); ++i) items += totals[i].items - window_.totals[i].items;
  return items;
}

partition_window partition_tuner::close_window(double now_ms, const std::vector<cost_total>& totals) const {
  partition_window w;
  w.warps = partition_;
  w.start_ms = window_.ms;
  w.duration_ms = now_ms - window_.ms;
  for (std::size_t i = 0; i < totals.size(); ++i) {
    const std::uint64_t items = totals[i].items - window_.totals[i].items;
    const std::uint64_t cycles = totals[i].cycles - window_.totals[i].cycles;
    w.items.push_back(items);
    w.cost.push_back(items ? double(cycles) / double(items) : 0.0);
  }
  return w;
}

double partition_tuner::spread(const partition_window& w) const {
  double lo = HUGE_VAL, hi = 0;
  int measured = 0;
  for (std::size_t i = 0; i < w.cost.size(); ++i)
    if (w.items[i] != 0 && w.cost[i] > 0) {
      lo = std::min(lo, w.cost[i]);
      hi = std::max(hi, w.cost[i]);
      ++measured;
    }
  return measured == static_cast<int>(w.cost.size()) && measured >= 2 ? hi / lo : 0;
}

std::optional<std::vector<std::uint32_t>> partition_tuner::begin_tuning(double now_ms, std::string reason) {
  tuning_record r;
  r.start_ms = now_ms;
  r.reason = std::move(reason);
  history_.push_back(std::move(r));
  state_ = state::sampling;
  next_sample_ = 0;
  drift_since_ms_.reset();
  return request(schedule_[0]);
}

std::uint32_t partition_tuner::radius() const noexcept {
  return s_.local_radius != 0 ? s_.local_radius : std::max<std::uint32_t>(2, (s_.block_warps + 9) / 10);
}

std::vector<std::vector<std::uint32_t>> partition_tuner::make_local_schedule(
    const tuner_settings& s, const std::vector<std::uint32_t>& center) {
  const std::size_t n = center.size();
  const std::uint32_t r =
      s.local_radius != 0 ? s.local_radius : std::max<std::uint32_t>(2, (s.block_warps + 9) / 10);
  auto lo = [&](std::size_t j) {
    const std::uint32_t m = std::max<std::uint32_t>(s.min_warps[j], 1);
    return center[j] > m + r ? center[j] - r : m;
  };
  auto hi = [&](std::size_t j) { return std::min(center[j] + r, s.block_warps); };
  std::vector<std::vector<std::uint32_t>> out{center};
  for (std::size_t i = 0; i < n && n >= 2; ++i)
    for (std::int64_t d = -std::int64_t{r}; d <= std::int64_t{r}; ++d) {
      if (d == 0) continue;
      const std::int64_t v = std::int64_t{center[i]} + d;
      if (v < lo(i) || v > hi(i)) continue;
      std::vector<std::uint32_t> warps = center;
      warps[i] = static_cast<std::uint32_t>(v);
      // The others absorb −d a warp at a time, in turn, within their own ranges.
      std::int64_t left = -d;
      for (std::size_t guard = 0; left != 0 && guard < 64 * n; ++guard) {
        const std::size_t j = (i + 1 + guard % (n - 1)) % n;
        if (j == i) continue;
        if (left > 0 && warps[j] < hi(j)) {
          ++warps[j];
          --left;
        } else if (left < 0 && warps[j] > lo(j)) {
          --warps[j];
          ++left;
        }
      }
      if (left == 0 && std::find(out.begin(), out.end(), warps) == out.end()) out.push_back(std::move(warps));
    }
  return out;
}

void partition_tuner::fit_and_choose(std::span<const partition_window> windows, std::vector<cost_fit>& fits,
                                     partition_choice& choice,
                                     const std::vector<std::uint32_t>* center) const {
  const std::size_t n = s_.min_warps.size();
  const std::uint32_t r = radius();
  std::vector<partition_operator> ops;
  double cost_sum = 0, weight_sum = 0;
  fits.clear();
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<cost_sample> samples;
    for (const partition_window& w : windows)
      if (w.items[i] != 0) {
        samples.push_back({double(w.warps[i]), w.cost[i], double(w.items[i])});
        cost_sum += w.cost[i] * double(w.items[i]);
        weight_sum += double(w.items[i]);
      }
    cost_fit fit;
    if (samples.empty())
      fit.model = {NAN, NAN, NAN};  // nothing measured: choose_partition does not starve it
    else
      fit = fit_cost_model(samples);
    fits.push_back(fit);
    partition_operator op{fit.model, std::max<std::uint32_t>(s_.min_warps[i], 1), 0};
    if (center) {
      op.min_warps = std::max(op.min_warps, (*center)[i] > r ? (*center)[i] - r : 0u);
      op.max_warps = (*center)[i] + r;
    }
    ops.push_back(op);
  }
  const double f0 = weight_sum > 0 ? cost_sum / weight_sum : 0;  // the mean of the sampled costs
  choice = choose_partition(ops, f0, s_.block_warps);
}

bool partition_tuner::start_local(const std::vector<std::uint32_t>& center) {
  tuning_record& r = history_.back();
  local_center_ = center;
  ++r.local_rounds;
  local_schedule_.clear();
  for (auto& warps : make_local_schedule(s_, center)) {
    const bool measured = std::any_of(r.samples.begin(), r.samples.end(),
                                      [&](const partition_window& w) { return w.warps == warps; });
    if (!measured) local_schedule_.push_back(std::move(warps));
  }
  next_sample_ = 0;
  return !local_schedule_.empty();
}

bool partition_tuner::refine() {
  tuning_record& r = history_.back();
  const std::uint32_t rad = radius();
  std::vector<partition_window> inside;
  for (const partition_window& w : r.samples) {
    bool in = true;
    for (std::size_t i = 0; i < w.warps.size(); ++i)
      in = in && w.warps[i] + rad >= local_center_[i] && w.warps[i] <= local_center_[i] + rad;
    if (in) inside.push_back(w);
  }
  fit_and_choose(inside, r.fits, r.choice, &local_center_);
  // On the edge: a bound of the local range (not the operator's own minimum) is binding.
  for (std::size_t i = 0; i < local_center_.size(); ++i) {
    const std::uint32_t m = std::max<std::uint32_t>(s_.min_warps[i], 1);
    const std::uint32_t lo = local_center_[i] > m + rad ? local_center_[i] - rad : m;
    if ((r.choice.warps[i] == lo && lo > m) || r.choice.warps[i] == local_center_[i] + rad) return true;
  }
  return false;
}

void partition_tuner::finish_tuning(double now_ms, const std::vector<cost_total>& totals,
                                    const partition_window& measured) {
  history_.back().end_ms = now_ms;
  tuned_spread_ = spread(measured);
  state_ = s_.policy == partition_policy::auto_online ? state::watching : state::done;
  window_ = {now_ms, totals, true};
}

std::optional<std::vector<std::uint32_t>> partition_tuner::step(double now_ms,
                                                                const std::vector<cost_total>& totals,
                                                                bool adopted) {
  if (totals.size() != s_.min_warps.size()) throw std::invalid_argument("one cost total per operator");
  if (state_ == state::done) return std::nullopt;
  if (state_ == state::start) {
    if (s_.min_warps.size() == 1) {  // one operator: it gets every warp, nothing to learn
      state_ = state::done;
      if (partition_[0] != s_.block_warps) return request({s_.block_warps});
      return std::nullopt;
    }
    return begin_tuning(now_ms, "start");
  }
  if (!adopted) return std::nullopt;  // some block still runs the previous partition
  if (!window_.open) {
    window_ = {now_ms, totals, true};
    return std::nullopt;
  }
  const double elapsed = now_ms - window_.ms;
  const std::uint64_t items = window_items(totals);
  const std::size_t windows = std::max<std::size_t>(schedule_.size(), 1);
  const std::uint64_t wanted = (s_.tuning.samples + windows - 1) / windows;
  tuning_record* r = history_.empty() ? nullptr : &history_.back();

  switch (state_) {
    case state::sampling:
    case state::refining: {
      if (!((elapsed >= s_.min_window_ms && items >= wanted) || elapsed >= s_.max_window_ms))
        return std::nullopt;
      r->samples.push_back(close_window(now_ms, totals));
      r->sample_items += items;
      ++next_sample_;
      const auto& schedule = state_ == state::sampling ? schedule_ : local_schedule_;
      if (next_sample_ < schedule.size()) return request(schedule[next_sample_]);
      const auto t0 = std::chrono::steady_clock::now();
      bool more = false;
      if (state_ == state::sampling) {
        r->coarse_windows = r->samples.size();
        fit_and_choose(r->samples, r->coarse_fits, r->coarse_choice, nullptr);
        state_ = state::refining;
        more = start_local(r->coarse_choice.warps);
      }
      // Refine until a choice lies inside its range (or the rounds run out); a range whose partitions
      // were all measured already is fitted at once.
      while (!more) {
        if (!refine() || r->local_rounds >= s_.local_rounds) {
          state_ = state::measuring;
          break;
        }
        more = start_local(r->choice.warps);
      }
      r->fit_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      return request(state_ == state::refining ? local_schedule_[0] : r->choice.warps);
    }
    case state::measuring: {
      if (!((elapsed >= std::max(s_.min_window_ms, s_.watch_window_ms) && items >= wanted) ||
            elapsed >= s_.max_window_ms))
        return std::nullopt;
      const partition_window w = close_window(now_ms, totals);
      if (!r->chosen) {
        r->chosen = w;
        // A sampled partition that measured a clearly shorter round than the choice replaces it.
        const partition_window* best = nullptr;
        for (const partition_window& sample : r->samples)
          if (sample.measured_round() > 0 && (!best || sample.measured_round() < best->measured_round()))
            best = &sample;
        if (best && w.measured_round() > 0 &&
            best->measured_round() < (1 - s_.fallback_margin) * w.measured_round() &&
            best->warps != w.warps) {
          r->fallback = *best;
          return request(best->warps);
        }
      }
      // The candidate is in place: it still has to beat the starting partition, measured now for as long.
      if (r->candidate().warps != s_.initial) {
        candidate_window_ = w;  // the candidate's own window, just measured in place
        state_ = state::checking;
        return request(s_.initial);
      }
      finish_tuning(now_ms, totals, w);
      return std::nullopt;
    }
    case state::checking: {
      if (!((elapsed >= std::max(s_.min_window_ms, s_.watch_window_ms) && items >= wanted) ||
            elapsed >= s_.max_window_ms))
        return std::nullopt;
      const partition_window w = close_window(now_ms, totals);
      r->initial = w;
      const double candidate = candidate_window_.measured_round(), initial = w.measured_round();
      if (candidate > 0 && initial > 0 && candidate < (1 - s_.fallback_margin) * initial) {
        finish_tuning(now_ms, totals, candidate_window_);
        return request(candidate_window_.warps);  // watching starts once the blocks are back on it
      }
      r->kept_initial = true;
      finish_tuning(now_ms, totals, w);
      return std::nullopt;
    }
    case state::watching: {
      if (elapsed < s_.watch_window_ms) return std::nullopt;
      const partition_window w = close_window(now_ms, totals);
      window_ = {now_ms, totals, true};
      const double now_spread = spread(w);
      if (now_spread == 0) return std::nullopt;  // some operator ran nothing: no reading
      if (tuned_spread_ == 0) {
        tuned_spread_ = now_spread;
        return std::nullopt;
      }
      const double moved = std::abs(now_spread / tuned_spread_ - 1);
      if (moved * 100 <= s_.tuning.retune_spread_percent) {
        drift_since_ms_.reset();
        return std::nullopt;
      }
      if (!drift_since_ms_) drift_since_ms_ = now_ms;  // seen at the end of this window
      if (now_ms - *drift_since_ms_ < s_.tuning.retune_hold_ms) return std::nullopt;
      std::ostringstream why;
      why.precision(3);
      why << "the spread of the round times moved from " << tuned_spread_ << " to " << now_spread;
      return begin_tuning(now_ms, why.str());
    }
    case state::start:
    case state::done:
      break;
  }
  return std::nullopt;
}

}  // namespace xf
