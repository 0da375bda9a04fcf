// The built-in operators' registration: the CPU ones one line each, the GPU ones by their list.
#include "operators/builtin.hpp"

#include "operators/builtin_gpu.hpp"

#include "operators/sinks/file_sink.hpp"
#include "operators/sinks/null_sink.hpp"
#include "operators/sinks/prefetch_writeback.hpp"
#include "operators/sinks/table_versions.hpp"
#include "operators/sinks/verify_sink.hpp"
#include "operators/sources/dataset_source.hpp"
#include "operators/sources/file_source.hpp"
#include "operators/sources/prefetch_ranges.hpp"
#include "operators/sources/prefetch_source.hpp"
#include "operators/sources/prefetch_varlen_source.hpp"
#include "operators/sources/random_source.hpp"
#include "operators/sources/sequence_source.hpp"
#include "operators/sources/table_source.hpp"
#include "operators/sources/text_source.hpp"
#include "operators/transforms/prefetch_assembler.hpp"

namespace xf {

void register_builtin_cpu_operators(operator_registry& registry) {
  registry.add<sequence_source>("sequence_source");
  registry.add<random_source>("random_source");
  registry.add<dataset_source>("dataset_source");
  registry.add<file_source>("file_source");
  registry.add<prefetch_source>("prefetch_source");
  registry.add<prefetch_varlen_source>("prefetch_varlen_source");
  registry.add<prefetch_ranges>("prefetch_ranges");
  registry.add<text_source>("text_source");
  registry.add<table_source>("table_source");
  registry.add<prefetch_assembler>("prefetch_assembler");
  registry.add<verify_sink>("verify_sink");
  registry.add<null_sink>("null_sink");
  registry.add<file_sink>("file_sink");
  registry.add<prefetch_writeback>("prefetch_writeback");
  registry.add<table_writer>("table_writer");
  registry.add<table_check>("table_check");
}

void register_builtin_gpu_operators(operator_registry& registry) {
  registry.add_gpu_operators<builtin_gpu_operators>();
}

void register_builtin_operators(operator_registry& registry) {
  register_builtin_cpu_operators(registry);
  register_builtin_gpu_operators(registry);
}

}  // namespace xf
