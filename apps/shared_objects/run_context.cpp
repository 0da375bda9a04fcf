// The run's clock, its kernel events and its byte counts (run_context.hpp).
#include "apps/shared_objects/run_context.hpp"

#include <stdexcept>
#include <string>

namespace xf::shared_bench {

kernel_timer::~kernel_timer() {
  for (cudaEvent_t e : events_) cuda_ok(cudaEventDestroy(e));
}

void kernel_timer::begin() {
  // Two events per interval, created the first time a run needs them and reused by later runs.
  while (events_.size() < used_ + 2) {
    cudaEvent_t e = nullptr;
    XF_CUDA_TRY(cudaEventCreate(&e));
    events_.push_back(e);
  }
  XF_CUDA_TRY(cudaEventRecord(events_[used_], nullptr));
  used_ += 2;
}

void kernel_timer::end() {
  XF_CUDA_TRY(cudaEventRecord(events_[used_ - 1], nullptr));
}

double kernel_timer::total_ms() const {
  if (used_ == 0) return 0;
  XF_CUDA_TRY(cudaEventSynchronize(events_[used_ - 1]));
  double total = 0;
  for (std::size_t i = 0; i < used_; i += 2) {
    float ms = 0;
    XF_CUDA_TRY(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
    total += ms;
  }
  return total;
}

run_context::run_context(variant v, shared::object_space* space, kernel_timer& timer, int device)
    : variant_(v), space_(space), timer_(timer), device_(device) {
  if (uses_library(v) != (space != nullptr))
    throw std::logic_error("run_context: an object space is for the library variants only");
  timer_.reset();
}

shared::object_space& run_context::space() const {
  if (space_ == nullptr)
    throw std::logic_error("run_context: variant " + std::string(name_of(variant_)) + " has no object space");
  return *space_;
}

run_context::counter_snapshot run_context::snapshot() const {
  counter_snapshot s;
  if (space_ != nullptr) {
    const shared::object_space_counters c = space_->counters();
    s.bytes = {c.bytes_to_accelerator, c.bytes_to_host};
    s.faults = c.faults;
    s.evictions = c.evictions;
  } else {
    s.bytes = copied_;
  }
  return s;
}

void run_context::start() {
  if (started_) throw std::logic_error("run_context: start() twice");
  started_ = true;
  at_start_ = at_last_ = snapshot();
  begin_ = last_ = clock::now();
}

void run_context::mark(phase p) {
  if (!started_ || stopped_) throw std::logic_error("run_context: mark() outside start() … stop()");
  const clock::time_point now = clock::now();
  const counter_snapshot s = snapshot();
  const auto i = static_cast<std::size_t>(p);
  phase_ms_[i] += std::chrono::duration<double, std::milli>(now - last_).count();
  phase_bytes_[i].to_gpu += s.bytes.to_gpu - at_last_.bytes.to_gpu;
  phase_bytes_[i].to_host += s.bytes.to_host - at_last_.bytes.to_host;
  last_ = now;
  at_last_ = s;
}

void run_context::stop() {
  if (!started_ || stopped_) throw std::logic_error("run_context: stop() without start()");
  end_ = clock::now();
  at_end_ = snapshot();
  stopped_ = true;
}

run_record run_context::record() const {
  if (!stopped_) throw std::logic_error("run_context: record() before stop()");
  run_record r;
  r.ms = std::chrono::duration<double, std::milli>(end_ - begin_).count();
  r.phase_ms = phase_ms_;
  r.kernel_ms = timer_.total_ms();
  if (!uses_managed(variant_)) {
    r.bytes = byte_counts{at_end_.bytes.to_gpu - at_start_.bytes.to_gpu,
                          at_end_.bytes.to_host - at_start_.bytes.to_host};
    r.phase_bytes = phase_bytes_;
  }
  r.faults = at_end_.faults - at_start_.faults;
  r.evictions = at_end_.evictions - at_start_.evictions;
  return r;
}

}  // namespace xf::shared_bench
