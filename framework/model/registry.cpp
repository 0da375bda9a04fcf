// The operator registry.
#include "framework/model/registry.hpp"

#include <sys/mman.h>

#include <new>

#include "framework/core/errors.hpp"

namespace xf {

void operator_registry::insert(std::unique_ptr<operator_entry> entry) {
  const std::string name = entry->info.class_name;
  XF_EXPECTS(!name.empty(), "an operator class needs a name");
  XF_EXPECTS(!entries_.contains(name), "operator class '" + name + "' is registered twice");
  entries_.emplace(name, std::move(entry));
}

const operator_entry* operator_registry::find(std::string_view class_name) const {
  auto it = entries_.find(class_name);
  return it == entries_.end() ? nullptr : it->second.get();
}

std::vector<std::string> operator_registry::class_names() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) names.push_back(name);
  return names;
}

std::vector<const operator_entry*> operator_registry::entries() const {
  std::vector<const operator_entry*> list;
  for (const auto& [name, entry] : entries_) list.push_back(entry.get());
  return list;
}

}  // namespace xf

namespace xf {

detail::host_accumulator::host_accumulator(std::uint64_t bytes) : bytes_(bytes) {
  if (bytes >= mapped_from) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<std::byte*>(p);  // page-aligned, and zero
  } else {
    data_ = new (std::align_val_t{alignment}) std::byte[bytes]();
  }
}

detail::host_accumulator::~host_accumulator() {
  if (bytes_ >= mapped_from)
    ::munmap(data_, bytes_);
  else
    ::operator delete[](data_, std::align_val_t{alignment});
}

}  // namespace xf
