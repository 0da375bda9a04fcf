// The built-in operators' registration, one line each.
#include "operators/builtin.hpp"

#include "operators/sinks/affinity.hpp"
#include "operators/sinks/file_sink.hpp"
#include "operators/sinks/null_sink.hpp"
#include "operators/sinks/prefetch_writeback.hpp"
#include "operators/sinks/verify_sink.hpp"
#include "operators/sinks/word_count.hpp"
#include "operators/sources/dataset_source.hpp"
#include "operators/sources/file_source.hpp"
#include "operators/sources/prefetch_ranges.hpp"
#include "operators/sources/prefetch_source.hpp"
#include "operators/sources/prefetch_varlen_source.hpp"
#include "operators/sources/random_source.hpp"
#include "operators/sources/readahead_file_source.hpp"
#include "operators/sources/sequence_source.hpp"
#include "operators/sources/text_source.hpp"
#include "operators/transforms/address_generators/byte_addresses.hpp"
#include "operators/transforms/address_generators/indexed_addresses.hpp"
#include "operators/transforms/address_generators/record_addresses.hpp"
#include "operators/transforms/fma.hpp"
#include "operators/transforms/kmeans_assign.hpp"
#include "operators/transforms/pass_through.hpp"
#include "operators/transforms/prefetch_assembler.hpp"
#include "operators/transforms/scale.hpp"

namespace xf {

void register_builtin_operators(operator_registry& registry) {
  registry.add<sequence_source>("sequence_source");
  registry.add<random_source>("random_source");
  registry.add<dataset_source>("dataset_source");
  registry.add<file_source>("file_source");
  registry.add<prefetch_source>("prefetch_source");
  registry.add<prefetch_varlen_source>("prefetch_varlen_source");
  registry.add<prefetch_ranges>("prefetch_ranges");
  registry.add<readahead_file_source>("readahead_file_source");
  registry.add<text_source>("text_source");
  registry.add<scale_op>("scale");
  registry.add<fma_op>("fma");
  registry.add<pass_through_op>("pass_through");
  registry.add<kmeans_assign_op>("kmeans_assign");
  registry.add<record_addresses_op>("prefetch_addresses_records");
  registry.add<byte_addresses_op>("prefetch_addresses_bytes");
  registry.add<indexed_addresses_op>("prefetch_addresses_indexed");
  registry.add<prefetch_assembler>("prefetch_assembler");
  registry.add<verify_sink>("verify_sink");
  registry.add<null_sink>("null_sink");
  registry.add<file_sink>("file_sink");
  registry.add<prefetch_writeback>("prefetch_writeback");
  registry.add<word_count_op>("word_count");
  registry.add<affinity_cards_op>("affinity_cards");
  registry.add<affinity_shared_op>("affinity_shared");
}

}  // namespace xf
