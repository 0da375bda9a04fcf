// page_buffer: a page-aligned byte buffer for a frame outside any topic (a verify sink's expected frame,
// a replay's scratch), so that operators see the alignment topic frames have wherever they run (ISA-L's
// vector code, for one, needs 32-byte aligned blocks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace xf {

class page_buffer {
 public:
  static constexpr std::size_t alignment = 4096;

  page_buffer() = default;
  explicit page_buffer(std::uint64_t bytes) { reserve(bytes); }

  /// At least `bytes` bytes; growing drops the contents.
  void reserve(std::uint64_t bytes) {
    if (bytes <= bytes_) return;
    data_.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{alignment})));
    bytes_ = bytes;
  }
  std::byte* data() const noexcept { return data_.get(); }
  std::uint64_t size() const noexcept { return bytes_; }

 private:
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{alignment}); }
  };
  std::unique_ptr<std::byte[], aligned_delete> data_;
  std::uint64_t bytes_ = 0;
};

}  // namespace xf
