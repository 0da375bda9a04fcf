// Host memory for topics.
#include "topics/topic_memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace xf {

void* host_topic_memory::allocate(std::size_t bytes, topic_layer, memory_side) {
  constexpr std::size_t page = 4096;
  const std::size_t rounded = (bytes + page - 1) / page * page;
  void* p = std::aligned_alloc(page, rounded == 0 ? page : rounded);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, rounded == 0 ? page : rounded);
  return p;
}

void host_topic_memory::deallocate(void* p, std::size_t, topic_layer) noexcept {
  std::free(p);
}

}  // namespace xf
