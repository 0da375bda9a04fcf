// xeflow's operator contract, for operators written outside the framework: CPU operators (classes with
// virtual hooks, run on host threads), GPU operators (structs with a `__host__ __device__` compute over a
// frame, run in the virtualised kernel or on the host executor), their declared parameters
// (`describe`), file readers (`files` / `reads`), the element-wise loop GPU maps use (`xf::map_elements`),
// and the registry a launcher adds them to (`registry.add<my_op>("my_op")`).
#pragma once

#include "framework/files/path_text.hpp"
#include "framework/model/operator.hpp"
#include "framework/model/operator_schema.hpp"
#include "framework/model/registry.hpp"
#include "operators/transforms/element_map.hpp"
