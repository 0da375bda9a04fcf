// table_lookup: a GPU map through a lookup table that is a shared object — so the table can change while
// the stream runs, each frame looked up in the version its offset asks for.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"

namespace xf {

/// out[i] = table[in[i] % entries] over u32 elements, `table` the version of the shared object in the
/// `table` slot that the frame's offset asks for (object_port's rule: the latest published at or below it).
struct table_lookup_op {
  static constexpr char class_name[] = "table_lookup";
  static constexpr element_set elements{element_type::u32};

  struct params {
    std::uint32_t entries = 256;
  };

  static void describe(operator_schema<params>& s) {
    s.describe(
        "maps every u32 element x to table[x % entries], the table a shared object that may change "
        "mid-stream (each frame uses the version its offset asks for)");
    s.param(&params::entries, "entries", "entries of the table used (at most the object's u32 elements)",
            params{}.entries, 1);
    s.shared("table", object_access::read, "the lookup table: u32 entries", element_set{element_type::u32})
        .check_object([](const params& p, std::uint64_t bytes) -> std::string {
          if (bytes < std::uint64_t{p.entries} * sizeof(std::uint32_t))
            return "the shared object holds " + std::to_string(bytes / sizeof(std::uint32_t)) +
                   " u32 entries, fewer than entries (" + std::to_string(p.entries) + ")";
          return {};
        });
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    if constexpr (std::is_same_v<T, std::uint32_t>) {
      const std::uint32_t* table = task.template object<std::uint32_t>(0);
      for (std::uint64_t i = task.thread_id; i < task.count; i += task.thread_count)
        task.out[i] = table[task.in[i] % p.entries];
    }
  }
};

}  // namespace xf
