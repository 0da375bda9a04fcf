// Planning: executor choice, workers, subscriber groups, warp partition, start order.
#include "framework/plan.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

#include "framework/errors.hpp"

namespace xf {

plan make_plan(const topology_spec& spec, const operator_registry& registry, const plan_options& options) {
  plan p;
  std::map<std::string, std::size_t, std::less<>> topic_index;
  for (const auto& t : spec.topics) {
    topic_index.emplace(t.name, p.topics.size());
    p.topics.push_back(planned_topic{&t, {}, {}, 0});
  }

  // Executor: the device when usable and not forced off. The GPU executor is not part of this build yet,
  // so kernel operators run on the host executor's blocks either way; the reason says which and why.
  const std::uint32_t cores =
      options.host_cores ? options.host_cores : std::max(1u, std::thread::hardware_concurrency());
  if (spec.runtime.executor == executor_kind::device && !options.device_usable)
    throw config_error(spec.position_of("runtime.executor"),
                       "runtime.executor is 'device' but no GPU is usable: " + options.device_reason);
  if (spec.runtime.executor == executor_kind::device)
    throw config_error(spec.position_of("runtime.executor"),
                       "runtime.executor 'device': the GPU executor is not in this version yet; use 'auto' or "
                       "'host' to run GPU operators on the host executor");
  p.executor = resolved_executor::host;
  if (options.force_host) p.executor_reason = "--host given";
  else if (spec.runtime.executor == executor_kind::host) p.executor_reason = "runtime.executor: host";
  else if (!options.device_usable) p.executor_reason = "no usable GPU (" + options.device_reason + ")";
  else p.executor_reason = "the GPU executor is not in this version yet";

  p.warps_per_block = spec.runtime.warps_per_block;
  p.blocks = spec.runtime.blocks ? spec.runtime.blocks : cores;

  for (const auto& o : spec.operators) {
    planned_operator po;
    po.spec = &o;
    po.entry = registry.find(o.class_name);
    XF_EXPECTS(po.entry != nullptr, "operator class '" + o.class_name + "' (validate the spec first)");
    po.in_kernel = o.on == placement::gpu;
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
    p.operators.push_back(std::move(po));
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
                       std::to_string(kernel_ops) + " GPU operators need at least " + std::to_string(kernel_ops) +
                           " warps per block, not " + std::to_string(p.warps_per_block));
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
  XF_EXPECTS(p.start_order.size() == p.operators.size(), "the operator graph has a cycle (validate the spec first)");
  return p;
}

std::string plan::describe() const {
  std::ostringstream out;
  out << "executor: " << (executor == resolved_executor::host ? "host" : "device") << " (" << executor_reason
      << ")";
  if (!kernel_operators.empty()) out << "; kernel: " << blocks << " blocks x " << warps_per_block << " warps";
  for (std::size_t i : start_order) {
    const planned_operator& po = operators[i];
    out << "\n  " << po.spec->name << " (" << po.spec->class_name << ", " << name_of(po.spec->on) << "): ";
    if (po.in_kernel) out << po.warps << " warps in each of " << po.workers << " blocks";
    else out << po.workers << (po.workers == 1 ? " thread" : " threads");
  }
  return out.str();
}

}  // namespace xf
