// CUPTI unified-memory counters, attributed to address ranges.
#include "framework/gpu/um_counters.hpp"

#if defined(XF_HAVE_CUPTI)
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#endif

namespace xf {

#if defined(XF_HAVE_CUPTI)
namespace {

// CUPTI delivers records in buffers from its own threads; they are parsed under one lock into a list
// that stop() attributes. One collector per process (CUPTI's activity API is process-wide).
struct um_record {
  CUpti_ActivityUnifiedMemoryCounterKind kind;
  std::uint64_t address;
  std::uint64_t value;
};
std::mutex g_mutex;
std::vector<um_record>* g_records = nullptr;
std::atomic<bool> g_active{false};

constexpr std::size_t buffer_bytes = 8 << 20;
constexpr std::size_t buffer_alignment = 8;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(buffer_alignment, buffer_bytes));
  *size = *buffer ? buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard lock(g_mutex);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER || !g_records) continue;
      const auto* um = reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record);
      g_records->push_back({um->counterKind, um->address, um->value});
    }
  }
  std::free(buffer);
}

std::string cupti_message(CUptiResult r) {
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return text ? text : "unknown CUPTI error";
}

}  // namespace

um_counters::um_counters(int device) {
  if (g_active.exchange(true)) {
    why_ = "another run is collecting unified-memory counters";
    return;
  }
  {
    std::lock_guard lock(g_mutex);
    g_records = new std::vector<um_record>();
  }
  CUpti_ActivityUnifiedMemoryCounterConfig config[4]{};
  const CUpti_ActivityUnifiedMemoryCounterKind kinds[4] = {
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
      CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT};
  for (int i = 0; i < 4; ++i) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config[i].kind = kinds[i];
    config[i].deviceId = static_cast<std::uint32_t>(device);
    config[i].enable = 1;
  }
  CUptiResult r = cuptiActivityConfigureUnifiedMemoryCounter(config, 4);
  if (r == CUPTI_SUCCESS) r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r == CUPTI_SUCCESS) r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  if (r != CUPTI_SUCCESS) {
    why_ = "CUPTI unified-memory counters unavailable: " + cupti_message(r);
    std::lock_guard lock(g_mutex);
    delete g_records;
    g_records = nullptr;
    g_active.store(false);
    return;
  }
  available_ = true;
}

um_counters::~um_counters() {
  if (available_ && !stopped_) stop(0);
}

void um_counters::add_range(std::uintptr_t begin, std::uint64_t bytes, std::size_t owner) {
  ranges_.push_back({begin, begin + bytes, owner});
}

std::vector<um_traffic> um_counters::stop(std::size_t owners) {
  std::vector<um_traffic> traffic(owners + 1);
  if (!available_ || stopped_) return traffic;
  stopped_ = true;
  cuptiActivityFlushAll(1);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  std::vector<um_record> records;
  {
    std::lock_guard lock(g_mutex);
    records.swap(*g_records);
    delete g_records;
    g_records = nullptr;
  }
  g_active.store(false);
  std::sort(ranges_.begin(), ranges_.end(), [](const range& a, const range& b) { return a.begin < b.begin; });
  for (const um_record& r : records) {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), r.address,
                               [](std::uint64_t a, const range& x) { return a < x.begin; });
    std::size_t owner = owners;  // outside every registered range
    if (it != ranges_.begin() && r.address < std::prev(it)->end && std::prev(it)->owner < owners)
      owner = std::prev(it)->owner;
    um_traffic& t = traffic[owner];
    switch (r.kind) {
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
        t.bytes_to_device += r.value;
        break;
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
        t.bytes_to_host += r.value;
        break;
      // One record per CPU fault (its value is the faulting instruction's address); a GPU fault record's
      // value is the number of fault groups for its page.
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
        t.cpu_page_faults += 1;
        break;
      case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
        t.gpu_page_faults += r.value;
        break;
      default:
        break;
    }
  }
  return traffic;
}

#else  // no CUPTI in this build

um_counters::um_counters(int) : why_("built without CUPTI") {}
um_counters::~um_counters() = default;
void um_counters::add_range(std::uintptr_t, std::uint64_t, std::size_t) {}
std::vector<um_traffic> um_counters::stop(std::size_t owners) {
  return std::vector<um_traffic>(owners + 1);
}

#endif

}  // namespace xf
