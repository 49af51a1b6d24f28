// The CUDA driver (libcuda.so.1), loaded with dlopen on first need so kiln links
// and runs its CPU-side work on machines without a GPU. cuda.h supplies the
// types only; each entry point is resolved by the exact symbol cuda.h's macros
// map its name to (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime ->
// cuEventElapsedTime_v2 in CUDA 13, ...), using the legacy-default-stream
// variants (not _ptds / _ptsz).
//
//   Driver& d = driver();                  // CudaError when no driver / no GPU
//   check(d.ctx_synchronize(), "cuCtxSynchronize");
//
// The verbs the facade, tools and tests use (load_module, launch_kernel,
// DeviceMemory, ...) are declared in runtime/device.h and built on this file
// in runtime/device.cpp.
//
// $KILN_CUDA_DRIVER_LIB replaces libcuda.so.1 (tests).
#pragma once

#include <cuda.h>

#include <string>

#include "kiln/kiln.h"

namespace kiln {

struct Driver {
  void* handle = nullptr;
  std::string library_path;
  int version = 0;   // cuDriverGetVersion, e.g. 13000

  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;   // _v2
  decltype(&::cuCtxDestroy) ctx_destroy = nullptr;                        // _v2
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuMemAlloc) mem_alloc = nullptr;               // _v2
  decltype(&::cuMemFree) mem_free = nullptr;                 // _v2
  decltype(&::cuMemAllocAsync) mem_alloc_async = nullptr;
  decltype(&::cuMemFreeAsync) mem_free_async = nullptr;
  decltype(&::cuMemGetInfo) mem_get_info = nullptr;          // _v2
  decltype(&::cuMemcpyHtoD) memcpy_htod = nullptr;           // _v2
  decltype(&::cuMemcpyDtoH) memcpy_dtoh = nullptr;           // _v2
  decltype(&::cuMemcpyDtoD) memcpy_dtod = nullptr;           // _v2
  decltype(&::cuMemsetD8) memset_d8 = nullptr;               // _v2
  decltype(&::cuMemsetD32) memset_d32 = nullptr;             // _v2
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;     // _v2
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;       // _v2
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;   // _v2 (CUDA 13), else the unversioned one
};

// Loads the driver and calls cuInit once per process; throws kiln::CudaError
// (call "dlopen" / "cuInit" / ...) when the library or a GPU is missing. A
// failure is remembered: later calls throw the same error without retrying.
Driver& driver();

// Throws CudaError("kiln: <call> failed: <NAME>: <description>", call, code, NAME)
// unless result is CUDA_SUCCESS.
void check(CUresult result, const char* call);

// The caller's current context if it has one, else device 0's primary context,
// retained once per process and made current. *device (if given) gets its ordinal.
CUcontext current_context(int* device);

void unload_module(CUmodule module) noexcept;

}  // namespace kiln
