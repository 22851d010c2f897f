// context_probe.hpp — device memory taken by a CUDA context (lazy and eager module loading), by
// extra streams and by cuBLAS / cuBLASLt handles.
//
// CUDA_MODULE_LOADING is read when a context is created, so each setting needs a fresh process:
// the probe starts itself as a child (`--context-child`) with the variable set, the child creates
// its context and says "ready", and the parent — holding its own context — reads the device-wide
// free memory before and after. Streams and handles are measured in-process, before any cuBLAS
// work has loaded the libraries' kernels.
#pragma once

#include <optional>
#include <string>

#include "probe_env.hpp"

namespace vramplan::probe {

struct ContextResult {
  std::optional<Bytes> lazy;   //!< context with CUDA_MODULE_LOADING=LAZY
  std::optional<Bytes> eager;  //!< with CUDA_MODULE_LOADING=EAGER
  Bytes stream_bytes;          //!< per extra stream
  Bytes cublaslt_first_handle; //!< first cublasLtCreate in the process
  Bytes cublas_first_handle;   //!< first cublasCreate (after cuBLASLt is loaded)
};

//! `self` is this program's path (/proc/self/exe), started as the child.
ContextResult probe_context(ProbeEnv& env, const std::string& self);

//! The child side: create a context, print "ready", wait for stdin to close. Returns the exit code.
int run_context_child();

}  // namespace vramplan::probe
