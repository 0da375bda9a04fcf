// kmeans_assign: the assignment step of K-means (the BigKernel paper's K-means) as a GPU operator over the
// frames a prefetch_source gathers from particle records: each particle goes to its nearest centre.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "framework/core/exec_space.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "operators/transforms/element_math.hpp"

namespace xf {

/// Squared distance from (x, y, z) to a centre, rounded the same way on every side: dz·dz, then two fused
/// multiply-adds (host and device compilers contract `a*b + c` differently unless told exactly).
XF_HOST_DEVICE XF_FORCE_INLINE float squared_distance(float x, float y, float z, float cx, float cy,
                                                      float cz) {
  const float dx = x - cx, dy = y - cy, dz = z - cz;
  return element_math::fused_mul_add(dx, dx, element_math::fused_mul_add(dy, dy, dz * dz));
}

/// The nearest of `k` centres (xyz triples at `centres`) to (x, y, z): the smallest squared_distance, ties
/// to the lower index.
XF_HOST_DEVICE XF_FORCE_INLINE std::uint32_t nearest_centre(float x, float y, float z, const float* centres,
                                                            std::uint32_t k) {
  std::uint32_t nearest = 0;
  float best = squared_distance(x, y, z, centres[0], centres[1], centres[2]);
  for (std::uint32_t c = 1; c < k; ++c) {
    const float d = squared_distance(x, y, z, centres[3 * c], centres[3 * c + 1], centres[3 * c + 2]);
    if (d < best) best = d, nearest = c;
  }
  return nearest;
}

/// Input: an f32 frame of n particles field by field — x[0..n), y[0..n), z[0..n) (prefetch_source with
/// fields '0:12', item_bytes 4). Output, a third of the input (n elements, operator.hpp's
/// output_numerator): element r holds particle r's nearest centre as u32 bits (prefetch_writeback stores it
/// into the record's cluster field) — 4 bytes back across PCIe per 12 bytes in. Frames are computed whole
/// (never split over blocks: the three arrays span the frame). A frame whose length is not a multiple of 3
/// elements, or a topic of another element type, fails the frame with code `bad_frame`.
///
/// The centres come from the `centres` parameter, or — for centres that move while the stream runs (Lloyd's
/// iterations in one run) — from a shared object bound to the `centres` slot: `clusters` xyz triples of
/// f32, the version the frame's offset asks for.
struct kmeans_assign_op {
  static constexpr char class_name[] = "kmeans_assign";
  static constexpr element_set elements{element_type::f32};
  static constexpr std::uint32_t max_centres = 32;
  static constexpr std::uint32_t bad_frame = 1;
  static constexpr std::uint32_t output_numerator = 1;
  static constexpr std::uint32_t output_denominator = 3;

  struct params {
    float centres[3 * max_centres] = {};
    std::uint32_t centre_values = 0;  ///< 3 per centre
    std::uint32_t clusters = 0;       ///< centres in the shared object, when one is bound
  };

  static const char* failure_reason(std::uint32_t code) {
    return code == bad_frame ? "not an f32 frame of whole particles (x, y, z field by field), or no centres"
                             : nullptr;
  }

  static void describe(operator_schema<params>& s) {
    s.describe(
         "K-means assignment step: each particle (x, y, z field by field, from a prefetch_source) gets the "
         "index "
         "of its nearest centre, as u32 bits in element r of the output (for a prefetch_writeback)")
        .whole_frames();
    s.reals(&params::centres, &params::centre_values, "centres",
            "the centres, 'x y z' each (commas, semicolons or spaces between numbers), 1 to 32 of them, "
            "unless the centres slot is bound",
            "", 0, 3);
    s.param(&params::clusters, "clusters", "with the centres slot bound: the centres the object holds", 0, 0,
            max_centres);
    s.shared("centres", object_access::read,
             "centres that move while the stream runs: 'clusters' xyz triples of f32 (instead of the centres "
             "parameter)",
             element_set{element_type::f32})
        .optional()
        .check_object([](const params& p, std::uint64_t bytes) -> std::string {
          if (p.clusters == 0) return "set 'clusters', the centres the shared object holds";
          if (bytes < 3 * sizeof(float) * p.clusters)
            return "the shared object holds " + std::to_string(bytes) + " bytes, not " +
                   std::to_string(p.clusters) + " centres of 12";
          return {};
        });
    s.check_params([](const params& p) -> std::string {
      if (p.centre_values == 0 && p.clusters == 0)
        return "give the centres: the centres parameter, or a shared object in the centres slot with "
               "clusters";
      return {};
    });
  }

  template <class T>
  XF_HOST_DEVICE static void compute(const params& p, const frame_task<T>& task) {
    if constexpr (!std::is_same_v<T, float>) {
      task.fail(bad_frame);
    } else {
      const float* shared_centres = task.template object<float>(0);
      const float* centres = shared_centres != nullptr ? shared_centres : p.centres;
      const std::uint32_t k = shared_centres != nullptr ? p.clusters : p.centre_values / 3;
      if (task.count % 3 != 0 || k == 0) {
        task.fail(bad_frame);
        return;
      }
      const std::uint64_t n = task.count / 3;
      for (std::uint64_t r = task.thread_id; r < n; r += task.thread_count) {
        const std::uint32_t c = nearest_centre(task.in[r], task.in[n + r], task.in[2 * n + r], centres, k);
#if XF_DEVICE_PASS
        task.out[r] = __uint_as_float(c);
#else
        task.out[r] = std::bit_cast<float>(c);
#endif
      }
    }
  }
};

}  // namespace xf
