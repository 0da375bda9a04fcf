// Execution-space macros shared by host-only (g++) and CUDA (nvcc) translation units.
// Code that must run on both sides marks its functions XF_HOST_DEVICE; outside nvcc the macros are empty,
// so every `.hpp` of the project still compiles with a plain C++ compiler.
#pragma once

#if defined(__CUDACC__)
#define XF_HOST_DEVICE __host__ __device__
#define XF_DEVICE __device__
#define XF_FORCE_INLINE __forceinline__
#else
#define XF_HOST_DEVICE
#define XF_DEVICE
#define XF_FORCE_INLINE inline __attribute__((always_inline))
#endif

#if defined(__CUDA_ARCH__)
#define XF_DEVICE_PASS 1  // compiling the device side of a .cu file
#else
#define XF_DEVICE_PASS 0
#endif

// Unrolls the loop that follows where the compiler understands the request: nvcc's device pass and clang
// (`#pragma unroll`) and g++ (`#pragma GCC unroll`); element-wise maps rely on it to keep a thread's elements
// in registers. Nothing in nvcc's host pass: its front end warns on `GCC unroll` and hands `unroll` to g++,
// which warns on it (the host executor's operators are compiled from .cpp files by g++ itself).
#if defined(__CUDA_ARCH__) || defined(__clang__)
#define XF_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define XF_UNROLL
#elif defined(__GNUC__)
#define XF_UNROLL _Pragma("GCC unroll 16")
#else
#define XF_UNROLL
#endif

// Before a template that is __host__ __device__ but may be instantiated with a type whose members exist on
// one side only (a device dispatcher of the fused kernel, a host dispatcher of the host executor): nvcc
// then checks the calls only where the instantiation is used.
#if defined(__CUDACC__)
#define XF_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define XF_EXEC_CHECK_DISABLE
#endif
