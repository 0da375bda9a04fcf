// The one place this launcher's GPU operators meet the virtualised kernel (null when compiled as C++).
#include <xeflow/kernel.hpp>

#include "custom_kernel.hpp"

XF_KERNEL(example::custom_gpu_operators)
