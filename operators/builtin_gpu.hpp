// The built-in GPU operators as one compile-time list: it registers them (register_builtin_operators) and
// builds xeflow-run's kernel (builtin_kernel.cu); a user's launcher names it in its own list.
#pragma once

#include "framework/model/gpu_operator_list.hpp"
#include "operators/encoding/aes128_ops.hpp"
#include "operators/encoding/raid6_encode.hpp"
#include "operators/encoding/raid6_recover.hpp"
#include "operators/olap/query.hpp"
#include "operators/sinks/affinity.hpp"
#include "operators/sinks/word_count.hpp"
#include "operators/sources/readahead_file_source.hpp"
#include "operators/transforms/address_generators/byte_addresses.hpp"
#include "operators/transforms/address_generators/indexed_addresses.hpp"
#include "operators/transforms/address_generators/record_addresses.hpp"
#include "operators/transforms/datatype_pack.hpp"
#include "operators/transforms/fma.hpp"
#include "operators/transforms/kmeans_assign.hpp"
#include "operators/transforms/pass_through.hpp"
#include "operators/transforms/scale.hpp"
#include "operators/transforms/table_lookup.hpp"

namespace xf {

using builtin_gpu_operators =
    gpu_operator_list<scale_op, fma_op, pass_through_op, kmeans_assign_op, record_addresses_op,
                      byte_addresses_op, indexed_addresses_op, word_count_op, affinity_cards_op,
                      affinity_shared_op, readahead_file_source, query_op, raid6_encode_op, raid6_recover_op,
                      aes128_encrypt_op, aes128_decrypt_op, table_lookup_op, pack_op, unpack_op>;

}  // namespace xf
