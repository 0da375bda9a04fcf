// Planning: executor choice, workers, subscriber groups, warp partition, start order.
#include "framework/plan/plan.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

#include "framework/core/errors.hpp"
#include "framework/core/units.hpp"
#include "framework/files/page_moves.hpp"
#include "framework/model/spec_validation.hpp"
#include "framework/plan/kernel_limits.hpp"

namespace xf {
namespace {

/// The topic whose frames a kernel operator works through: its input, or a file source's output.
std::size_t frame_topic(const planned_operator& po) {
  return po.inputs.empty() ? po.outputs.at(0) : po.inputs[0];
}

/// Whether the kernel runs the operator's frames whole (one block a frame): a map that says so, and
/// every file reader (its stages read and compute over the frame as one item).
bool runs_whole_frames(const planned_operator& po) {
  return po.entry->info.whole_frames || po.entry->info.reads_files;
}

/// How a frame of the operator's input splits into work items: for one that shares whole frames, enough
/// shares that `blocks` blocks all have an item while the topic holds only `capacity` frames (at most
/// max_frame_shares); for one that computes over any part, parts of `part_size` bytes, or by default of
/// kernel_part_bytes; else the whole frame. (Splitting further while few frames are in flight, so that
/// every block has a part, made the unloaded latency worse on the H100: C(G)1C scale's p50 at 64 KiB was
/// 34 µs in one part with Linux's timer slack, 104 µs in 16 parts of 4 KiB with a 1 µs slack, where
/// RAID-6, whose frames are never split, gained from the slack alone: 130 → 82 µs.)
void split_frames(planned_operator& po, const topic_spec& in, std::uint32_t blocks, std::uint64_t part_size) {
  po.parts = 1;
  po.part_bytes = 0;
  if (po.entry->info.shares_frames) {
    po.parts = std::clamp<std::uint32_t>((blocks + in.capacity - 1) / in.capacity, 1, max_frame_shares);
    return;
  }
  if (runs_whole_frames(po)) return;
  const std::uint64_t frame = in.frame_bytes;
  std::uint64_t part = part_size;
  if (part == 0) {
    const std::uint64_t wanted = (frame + kernel_part_bytes - 1) / kernel_part_bytes;
    part = ((frame + wanted - 1) / wanted + part_size_multiple - 1) / part_size_multiple * part_size_multiple;
  }
  const std::uint64_t parts = (frame + part - 1) / part;
  if (parts <= 1) return;
  po.parts = static_cast<std::uint32_t>(parts);
  po.part_bytes = part;
}

/// A ranked run's part: drops the topics and shared objects none of this rank's operators touch (the
/// operators of the other ranks were never added) and renumbers what is left.
void keep_this_ranks_part(plan& p) {
  constexpr std::size_t dropped = ~std::size_t{0};
  std::vector<std::size_t> topic_at(p.topics.size(), dropped), object_at(p.objects.size(), dropped);
  for (const planned_operator& po : p.operators) {
    for (std::size_t t : po.inputs) topic_at[t] = 0;
    for (std::size_t t : po.outputs) topic_at[t] = 0;
    for (std::size_t o : po.objects)
      if (o != no_object) object_at[o] = 0;
  }
  std::vector<planned_topic> topics;
  for (std::size_t t = 0; t < p.topics.size(); ++t)
    if (topic_at[t] != dropped) {
      topic_at[t] = topics.size();
      topics.push_back(std::move(p.topics[t]));
    }
  std::vector<planned_object> objects;
  for (std::size_t o = 0; o < p.objects.size(); ++o)
    if (object_at[o] != dropped) {
      object_at[o] = objects.size();
      objects.push_back(std::move(p.objects[o]));
    }
  p.topics = std::move(topics);
  p.objects = std::move(objects);
  for (planned_operator& po : p.operators) {
    for (std::size_t& t : po.inputs) t = topic_at[t];
    for (std::size_t& t : po.outputs) t = topic_at[t];
    for (std::size_t& o : po.objects)
      if (o != no_object) o = object_at[o];
  }
}

/// A ranked run's bridges at this rank: a topic published on another rank is fed here by a bridge (one
/// publisher worker); a topic published here gets a bridge to every other rank with subscribers.
void plan_bridges(plan& p, const topology_spec& spec) {
  for (const bridge_route& route : bridge_routes(spec)) {
    const topic_spec* spec_topic = &spec.topics[route.topic];
    const auto t = std::find_if(p.topics.begin(), p.topics.end(),
                                [&](const planned_topic& pt) { return pt.spec == spec_topic; });
    if (t == p.topics.end()) continue;  // neither end is this rank's
    if (route.to == p.rank) {
      t->bridge_from = route.from;
      t->publisher_workers = 1;
    } else if (route.from == p.rank) {
      t->bridge_to.push_back(route.to);
    }
  }
}

}  // namespace

std::vector<bridge_route> bridge_routes(const topology_spec& spec) {
  std::vector<bridge_route> routes;
  for (std::size_t t = 0; t < spec.topics.size(); ++t) {
    const std::string& name = spec.topics[t].name;
    auto touches = [&](const std::vector<std::string>& names) {
      return std::find(names.begin(), names.end(), name) != names.end();
    };
    const auto writer = std::find_if(spec.operators.begin(), spec.operators.end(),
                                     [&](const operator_spec& o) { return touches(o.outputs); });
    if (writer == spec.operators.end()) continue;
    std::vector<std::uint32_t> readers;
    for (const operator_spec& o : spec.operators)
      if (touches(o.inputs) && o.rank != writer->rank) readers.push_back(o.rank);
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    for (std::uint32_t r : readers) routes.push_back({t, writer->rank, r});
  }
  return routes;
}

plan make_plan(const topology_spec& spec, const operator_registry& registry, const plan_options& options) {
  plan p;
  std::map<std::string, std::size_t, std::less<>> topic_index;
  for (const auto& t : spec.topics) {
    topic_index.emplace(t.name, p.topics.size());
    planned_topic pt;
    pt.spec = &t;
    p.topics.push_back(std::move(pt));
  }

  std::map<std::string, std::size_t, std::less<>> object_index;
  for (const auto& o : spec.objects) {
    object_index.emplace(o.name, p.objects.size());
    p.objects.push_back(planned_object{&o, std::nullopt, {}});
  }

  const std::uint32_t cores =
      options.host_cores ? options.host_cores : std::max(1u, std::thread::hardware_concurrency());
  p.warps_per_block = spec.runtime.warps_per_block;
  p.partition = spec.runtime.partition;
  p.watchdog_ms = spec.runtime.watchdog_ms;
  p.index_rest = spec.runtime.index_rest;
  p.spread_warps = spec.runtime.spread_warps;

  if (options.part) {
    const rank_part& part = *options.part;
    XF_EXPECTS(part.ranks > 0 && part.rank < part.ranks, "a rank among the run's ranks");
    p.rank = part.rank;
    p.ranks = part.ranks;
    for (const auto& o : spec.operators)
      if (o.rank >= part.ranks)
        throw config_error(spec.position_of_field("operators." + o.name, "rank"),
                           "operator '" + o.name + "' is placed on rank " + std::to_string(o.rank) +
                               ", but this run has " + std::to_string(part.ranks) +
                               (part.ranks == 1 ? " rank" : " ranks") + " (0 to " +
                               std::to_string(part.ranks - 1) + "; mpirun -n sets how many)");
  }

  for (const auto& o : spec.operators) {
    if (options.part && o.rank != options.part->rank) continue;
    planned_operator po;
    po.spec = &o;
    po.entry = registry.find(o.class_name);
    XF_EXPECTS(po.entry != nullptr, "operator class '" + o.class_name + "' (validate the spec first)");
    po.in_kernel = o.on == placement::gpu;
    po.output = po.entry->info.output_share_for(o.params);
    for (const auto& name : o.inputs) {
      auto it = topic_index.find(name);
      XF_EXPECTS(it != topic_index.end(), "topic '" + name + "' (validate the spec first)");
      po.inputs.push_back(it->second);
    }
    for (const auto& name : o.outputs) {
      auto it = topic_index.find(name);
      XF_EXPECTS(it != topic_index.end(), "topic '" + name + "' (validate the spec first)");
      po.outputs.push_back(it->second);
    }
    for (const object_slot_decl& slot : po.entry->info.objects) {
      const auto bound = o.shared.find(slot.name);
      if (bound == o.shared.end() && slot.optional) {
        po.objects.push_back(no_object);
        continue;
      }
      XF_EXPECTS(bound != o.shared.end(), "slot '" + slot.name + "' bound (validate the spec first)");
      const auto it = object_index.find(bound->second);
      XF_EXPECTS(it != object_index.end(), "shared object '" + bound->second + "' (validate the spec first)");
      po.objects.push_back(it->second);
      planned_object& object = p.objects[it->second];
      if (slot.access == object_access::write)
        object.writer = p.operators.size();
      else
        object.readers.push_back(p.operators.size());
    }
    // Optional slots all unbound: the operator takes no object.
    if (std::all_of(po.objects.begin(), po.objects.end(), [](std::size_t j) { return j == no_object; }))
      po.objects.clear();
    if (po.in_kernel && po.objects.size() > max_operator_objects)
      throw config_error(
          spec.position_of("operators." + o.name + ".shared"),
          "a GPU operator takes at most " + std::to_string(max_operator_objects) + " shared objects");
    p.operators.push_back(std::move(po));
  }

  if (options.part) keep_this_ranks_part(p);

  // Executor: the device when a GPU is usable, the launcher has a kernel with every GPU operator of the
  // topology compiled in, and nothing forces the host.
  const device_capabilities& dev = options.device;
  p.device = dev.ordinal;
  bool any_kernel_op = false;
  std::string missing;  // a GPU operator whose class the launcher's kernel lacks
  std::size_t missing_op = 0;
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    const planned_operator& po = p.operators[i];
    if (!po.in_kernel) continue;
    any_kernel_op = true;
    if (missing.empty() && dev.compiled_in &&
        (!po.entry->gpu_type || !dev.compiled_in(*po.entry->gpu_type))) {
      missing = po.spec->class_name;
      missing_op = i;
    }
  }
  std::string device_refusal;  // why the device cannot run this topology; empty: it can
  if (!dev.usable)
    device_refusal = "no usable GPU (" + dev.reason + ")";
  else if (!dev.blocks_per_sm || !dev.compiled_in)
    device_refusal = "this launcher was built without a GPU kernel";
  else if (!missing.empty())
    device_refusal = "class '" + missing + "' (operator '" + p.operators[missing_op].spec->name +
                     "') is not compiled into this launcher's GPU kernel";
  if (spec.runtime.executor == executor_kind::device && !options.force_host) {
    if (!missing.empty() && dev.usable)
      throw config_error(spec.position_of("operators." + p.operators[missing_op].spec->name + ".class"),
                         "runtime.executor is 'device' but " + device_refusal +
                             " (add its type to the launcher's gpu_operator_list)");
    if (!device_refusal.empty())
      throw config_error(spec.position_of("runtime.executor"),
                         "runtime.executor is 'device' but " + device_refusal);
  }
  if (options.force_host) {
    p.executor = resolved_executor::host;
    p.executor_reason =
        spec.runtime.executor == executor_kind::host ? "runtime.executor: host" : "--host given";
  } else if (!any_kernel_op) {
    p.executor = resolved_executor::host;
    p.executor_reason = "no GPU operators";
  } else if (!device_refusal.empty()) {
    p.executor = resolved_executor::host;
    p.executor_reason = device_refusal;
  } else {
    p.executor = resolved_executor::device;
    p.executor_reason = "GPU " + std::to_string(options.device.ordinal);
  }

  // Blocks: the host executor's play the kernel's role on CPU threads; the device's must all be resident.
  const std::uint32_t threads_per_block = p.warps_per_block * 32;
  if (p.executor == resolved_executor::device) {
    const auto per_sm =
        static_cast<std::uint32_t>(std::max(0, dev.blocks_per_sm(static_cast<int>(threads_per_block))));
    const std::uint32_t sharers = std::max(1u, dev.sharers);
    const std::uint32_t resident = per_sm * dev.sm_count / sharers;
    const std::string shared =
        sharers > 1 ? ", shared under MPS by " + std::to_string(sharers) + " kernels of this node's ranks"
                    : "";
    if (resident == 0)
      throw config_error(spec.position_of("runtime.warps_per_block"),
                         "the GPU kernel cannot run blocks of " + std::to_string(p.warps_per_block) +
                             " warps on this GPU (no block fits on an SM" + shared + ")");
    if (spec.runtime.blocks > resident)
      throw config_error(spec.position_of("runtime.blocks"),
                         "runtime.blocks is " + std::to_string(spec.runtime.blocks) + ", but at most " +
                             std::to_string(resident) + " blocks of " + std::to_string(p.warps_per_block) +
                             " warps can be resident at once on this GPU (" + std::to_string(dev.sm_count) +
                             " SMs x " + std::to_string(per_sm) + shared +
                             "); every block of the persistent kernel must run at the same time");
    // By default no more blocks than there are work items in flight: a block beyond that only holds
    // offsets that cannot be published yet and polls for them, which costs PCIe reads and no progress.
    const std::uint32_t full =
        spec.runtime.blocks ? spec.runtime.blocks
                            : std::max(1u, dev.sm_count * std::min(per_sm, default_blocks_per_sm) / sharers);
    std::uint64_t items_in_flight = 1;
    for (planned_operator& po : p.operators) {
      if (!po.in_kernel) continue;
      const topic_spec& in = *p.topics[frame_topic(po)].spec;
      split_frames(po, in, full, spec.runtime.part_bytes);
      items_in_flight = std::max<std::uint64_t>(items_in_flight, std::uint64_t{in.capacity} * po.parts);
    }
    p.blocks = spec.runtime.blocks
                   ? spec.runtime.blocks
                   : static_cast<std::uint32_t>(std::min<std::uint64_t>(full, items_in_flight));
  } else {
    // The host's blocks copy nothing over PCIe: only shared frames are split (so that every block has work).
    p.blocks = spec.runtime.blocks ? spec.runtime.blocks : cores;
    for (planned_operator& po : p.operators)
      if (po.in_kernel && po.entry->info.shares_frames)
        split_frames(po, *p.topics[frame_topic(po)].spec, p.blocks, 0);
  }

  // The file cache: each block reuses a share of it of its own (LRA), so each needs at least one page.
  if (std::any_of(p.operators.begin(), p.operators.end(),
                  [](const planned_operator& po) { return po.in_kernel && po.entry->info.reads_files; })) {
    const file_cache_spec cache = spec.runtime.file_cache.value_or(file_cache_spec{});
    const std::uint64_t pages = cache.size / cache.page_bytes;
    if (pages < p.blocks)
      throw config_error(spec.position_of("runtime.file_cache.size"),
                         "runtime.file_cache.size holds " + std::to_string(pages) + " pages of " +
                             format_bytes(cache.page_bytes) + ", fewer than the kernel's " +
                             std::to_string(p.blocks) +
                             " blocks: each block reads through a share of at least one page (at least " +
                             format_bytes(std::uint64_t{p.blocks} * cache.page_bytes) + ")");
    // The kernel queues a request's page copies for the block's threads (deferred_moves): all at once.
    if (p.executor == resolved_executor::device &&
        cache.max_request / cache.page_bytes + 1 > deferred_moves::capacity)
      throw config_error(spec.position_of("runtime.file_cache.max_request"),
                         "runtime.file_cache.max_request is " + format_bytes(cache.max_request) + ": " +
                             std::to_string(cache.max_request / cache.page_bytes) + " pages of " +
                             format_bytes(cache.page_bytes) + ", more than the kernel moves at once (" +
                             std::to_string(deferred_moves::capacity - 1) + "): at most " +
                             format_bytes(std::uint64_t{deferred_moves::capacity - 1} * cache.page_bytes));
  }

  // Kernel operators and the warp partition of a block.
  for (std::size_t i = 0; i < p.operators.size(); ++i)
    if (p.operators[i].in_kernel) {
      p.operators[i].kernel_index = static_cast<std::uint32_t>(p.kernel_operators.size());
      p.kernel_operators.push_back(i);
    }
  const auto kernel_ops = static_cast<std::uint32_t>(p.kernel_operators.size());
  if (kernel_ops > p.warps_per_block)
    throw config_error(spec.position_of("runtime.warps_per_block"),
                       std::to_string(kernel_ops) + " GPU operators need at least " +
                           std::to_string(kernel_ops) + " warps per block, not " +
                           std::to_string(p.warps_per_block));
  for (std::size_t k = 0; k < p.kernel_operators.size(); ++k) {
    planned_operator& po = p.operators[p.kernel_operators[k]];
    if (spec.runtime.partition == partition_policy::explicit_warps) {
      po.warps = po.spec->warps;
    } else {  // uniform: the remainder goes to the first operators
      po.warps = p.warps_per_block / kernel_ops + (k < p.warps_per_block % kernel_ops ? 1 : 0);
    }
    po.workers = p.blocks;
  }
  for (auto& po : p.operators)
    if (!po.in_kernel) po.workers = po.spec->threads;

  // Groups and publishers.
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    planned_operator& po = p.operators[i];
    for (std::size_t t : po.inputs) {
      po.input_groups.push_back(static_cast<std::uint32_t>(p.topics[t].subscribers.size()));
      p.topics[t].subscribers.push_back(i);
    }
    for (std::size_t t : po.outputs) {
      p.topics[t].publishers.push_back(i);
      p.topics[t].publisher_workers += po.workers;
    }
  }

  if (options.part) plan_bridges(p, spec);

  // Start order: Kahn's algorithm over operator → topic → operator edges (validation rejected cycles).
  std::vector<std::size_t> pending_inputs(p.operators.size());
  for (std::size_t i = 0; i < p.operators.size(); ++i) {
    for (std::size_t t : p.operators[i].inputs) pending_inputs[i] += p.topics[t].publishers.size();
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < p.operators.size(); ++i)
    if (pending_inputs[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    std::size_t i = ready.front();
    ready.erase(ready.begin());
    p.start_order.push_back(i);
    for (std::size_t t : p.operators[i].outputs)
      for (std::size_t s : p.topics[t].subscribers)
        if (--pending_inputs[s] == 0) ready.push_back(s);
  }
  XF_EXPECTS(p.start_order.size() == p.operators.size(),
             "the operator graph has a cycle (validate the spec first)");

  // Device work items (their parts set with the blocks above): inputs read and outputs written over PCIe
  // staged in block scratch.
  if (p.executor == resolved_executor::device) {
    auto on_gpu = [&](std::size_t op) { return p.operators[op].in_kernel; };
    // `transfer: auto` keeps frames below 1 MiB mapped when a CPU operator relays frames between GPU
    // operators (it subscribes and publishes, and one of its topics is a GPU operator's: C(GC)n). Such a
    // pipeline is bound by its CPU stages, and the copy bridge's thread takes a core from them: measured
    // on the H100 at 64 KiB (one instance, 2026-11-23), C(GC)2 12.6 / 11.9 GB/s with the copy engines
    // against 14.1 / 14.3 mapped, C(GC)3 9.2 / 9.4 against 11.1 / 10.8 — while C(G)1C gained (38.9 / 39.9
    // against 37.4 / 38.8 at 64 / 256 KiB). Mixing both paths in one stream is slower than either (27–29).
    auto touches_gpu = [&](const planned_topic& t) {
      return std::any_of(t.publishers.begin(), t.publishers.end(), on_gpu) ||
             std::any_of(t.subscribers.begin(), t.subscribers.end(), on_gpu);
    };
    // A bridge's ends are CPU threads: the receiving end a CPU publisher, the sending ends CPU subscribers.
    auto gpu_publishers_only = [&](const planned_topic& t) {
      return !t.bridge_from && std::all_of(t.publishers.begin(), t.publishers.end(), on_gpu);
    };
    auto gpu_subscribers_only = [&](const planned_topic& t) {
      return t.bridge_to.empty() && std::all_of(t.subscribers.begin(), t.subscribers.end(), on_gpu);
    };
    const bool cpu_relay =
        std::any_of(p.operators.begin(), p.operators.end(), [&](const planned_operator& po) {
          if (po.in_kernel || po.inputs.empty() || po.outputs.empty()) return false;
          auto gpu_topic = [&](std::size_t t) { return touches_gpu(p.topics[t]); };
          return std::any_of(po.inputs.begin(), po.inputs.end(), gpu_topic) ||
                 std::any_of(po.outputs.begin(), po.outputs.end(), gpu_topic);
        });
    // Topics the copy engines carry across PCIe: every publisher on one side and some subscriber group on
    // the other, frames placed by the coherence policy (the `naive` frames layer is the ablation's
    // baseline: plain managed memory, nothing else), and transfer dma, or auto as above.
    for (planned_topic& t : p.topics) {
      if (t.publishers.empty() && !t.bridge_from) continue;
      const bool gpu_publishers = gpu_publishers_only(t);
      const bool cpu_publishers = std::none_of(t.publishers.begin(), t.publishers.end(), on_gpu);
      const bool crosses = gpu_publishers ? !gpu_subscribers_only(t)
                                          : std::any_of(t.subscribers.begin(), t.subscribers.end(), on_gpu);
      const transfer_mode mode = t.spec->transfer;
      t.dma = (gpu_publishers || cpu_publishers) && crosses &&
              spec.runtime.coherence.frames == frames_policy::placed &&
              (mode == transfer_mode::dma ||
               (mode == transfer_mode::automatic &&
                transfer_auto_uses_dma(t.spec->frame_bytes, t.spec->capacity, cpu_relay)));
      t.dma_to_device = t.dma && cpu_publishers;
    }
    for (std::size_t k : p.kernel_operators) {
      planned_operator& po = p.operators[k];
      const planned_topic& in = p.topics[frame_topic(po)];
      // Where the kernel finds the frames: device memory for GPU-only topics and the copy engines' replica.
      auto in_device_memory = [&](const planned_topic& t) {
        return t.dma || (gpu_publishers_only(t) && gpu_subscribers_only(t));
      };
      // A file reader's item spans rounds (its stages), over which the block's scratch would have to hold
      // its frames: it reads and writes the topics in place.
      const bool reader = po.entry->info.reads_files;
      // A columnar reader reads its frames in place too: it touches only the index and the pages the
      // index keeps, and what it never touches never crosses PCIe (staging would copy the whole frame).
      // An item sharing a frame does its share of it: staging would copy the whole frame in (or out, over
      // the other shares' results).
      const bool whole_views = reader || (po.entry->info.shares_frames && po.parts > 1);
      po.stage =
          !whole_views && !po.entry->info.reads_columnar && !po.inputs.empty() && !in_device_memory(in);
      po.stage_output = !whole_views && !po.outputs.empty() && !in_device_memory(p.topics[po.outputs[0]]);
    }
    // Items per round: enough whole frames for kernel_round_bytes, a divisor of the operator's warps (so
    // every item gets the same warps), and over all blocks at most a quarter of what the input topic
    // holds in flight. Items the blocks hold are offsets the publisher has to be ahead of: measured on the
    // H100 (16 KiB frames, 264 blocks), two items per block streamed 39.2 GB/s with capacity 4096 and
    // 24.5 with capacity 1024, where one item streamed 36. One leader-warp lane per item:
    // max_block_items in all, at least one per operator.
    std::uint32_t lanes_left = max_block_items;
    for (std::size_t n = 0; n < p.kernel_operators.size(); ++n) {
      planned_operator& po = p.operators[p.kernel_operators[n]];
      const topic_spec& in = *p.topics[frame_topic(po)].spec;
      const auto ops_after = static_cast<std::uint32_t>(p.kernel_operators.size() - n - 1);
      // A file reader: one item a block (its lane owns the block's file cache share while it fetches).
      std::uint64_t want = po.parts > 1 || po.entry->info.reads_files
                               ? 1
                               : (kernel_round_bytes + in.frame_bytes - 1) / in.frame_bytes;
      want = std::min<std::uint64_t>(want, std::uint64_t{in.capacity} / (4 * std::uint64_t{p.blocks}));
      want = std::min<std::uint64_t>(want, lanes_left - ops_after);
      std::uint32_t items = 1;
      for (std::uint32_t d = 1; d <= po.warps; ++d)
        if (po.warps % d == 0 && d <= want) items = d;
      po.items = items;
      lanes_left -= items;
    }
  }
  return p;
}

std::string plan::describe() const {
  std::ostringstream out;
  if (ranks > 1) out << "rank " << rank << " of " << ranks << ": ";
  out << "executor: " << (executor == resolved_executor::host ? "host" : "device");
  if (executor == resolved_executor::device && device != 0) out << " (GPU " << device << ")";
  out << " (" << executor_reason << ")";
  if (!kernel_operators.empty()) {
    out << "; kernel: " << blocks << " blocks x " << warps_per_block << " warps, partition "
        << name_of(partition);
    if (is_tuned(partition) && executor == resolved_executor::device)
      out << " (from uniform, tuned as it runs)";
  }
  for (std::size_t i : start_order) {
    const planned_operator& po = operators[i];
    out << "\n  " << po.spec->name << " (" << po.spec->class_name << ", " << name_of(po.spec->on) << "): ";
    if (po.in_kernel) {
      out << po.warps << " warps in each of " << po.workers << " blocks";
      if (po.parts > 1 && po.entry->info.shares_frames)
        out << ", each frame shared by " << po.parts << " items";
      else if (executor == resolved_executor::device && po.parts > 1)
        out << ", frames in " << po.parts << " parts of " << format_bytes(po.part_bytes);
      if (executor == resolved_executor::device && po.items > 1)
        out << ", " << po.items << " frames per round";
      if (executor == resolved_executor::device && po.stage) out << ", input staged";
      if (executor == resolved_executor::device && po.stage_output) out << ", output staged";
    } else
      out << po.workers << (po.workers == 1 ? " thread" : " threads");
  }
  for (const planned_topic& t : topics) {
    if (t.bridge_from) out << "\n  topic " << t.spec->name << ": carried from rank " << *t.bridge_from;
    for (std::uint32_t r : t.bridge_to) out << "\n  topic " << t.spec->name << ": carried to rank " << r;
  }
  for (const planned_topic& t : topics)
    if (t.dma)
      out << "\n  topic " << t.spec->name << ": frames copied to the "
          << (t.dma_to_device ? "device" : "host") << " by the copy engines";
  return out.str();
}

}  // namespace xf
