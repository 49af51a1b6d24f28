// The CUDA driver (libcuda.so.1), loaded with dlopen on first need so kiln links
// and runs its CPU-side work on machines without a GPU. cuda.h supplies the
// types only; each entry point is resolved by the exact symbol cuda.h's macros
// map its name to (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime ->
// cuEventElapsedTime_v2 in CUDA 13, ...), using the legacy-default-stream
// variants (not _ptds / _ptsz).
//
//   Driver& d = driver();                  // CudaError when no driver / no GPU
//   int device; CUcontext ctx = current_context(&device);
//   CUmodule m = load_module(cubin);
//   CUfunction f = get_function(m, "kiln_relu");
//   set_dynamic_shared(f, 96 * 1024);      // over 48 KB must be opted into
//   launch(f, grid, block, smem, stream, args);
//
// $KILN_CUDA_DRIVER_LIB replaces libcuda.so.1 (tests).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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
  decltype(&::cuMemFreeAsync) mem_free_async = nullptr;      // stream-ordered scratch
  decltype(&::cuMemPoolCreate) mem_pool_create = nullptr;                   // kiln's scratch pool per device
  decltype(&::cuMemPoolSetAttribute) mem_pool_set_attribute = nullptr;
  decltype(&::cuMemAllocFromPoolAsync) mem_alloc_from_pool_async = nullptr;
  decltype(&::cuMemGetInfo) mem_get_info = nullptr;          // _v2
  decltype(&::cuMemcpyHtoD) memcpy_htod = nullptr;           // _v2
  decltype(&::cuMemcpyDtoH) memcpy_dtoh = nullptr;           // _v2
  decltype(&::cuMemcpyDtoD) memcpy_dtod = nullptr;           // _v2
  decltype(&::cuMemsetD8) memset_d8 = nullptr;               // _v2
  decltype(&::cuMemsetD32) memset_d32 = nullptr;             // _v2
  decltype(&::cuMemsetD32Async) memset_d32_async = nullptr;  // zeroed workspaces, stream-ordered
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;     // _v2
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;       // _v2
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;   // _v2 (CUDA 13), else the unversioned one
  // Optional: drivers before CUDA 12.0 lack it, and then it stays null (runtime/tensor_map.h says so
  // when a kernel needs a TMA tensor map); cuda.h maps the name to no versioned symbol.
  decltype(&::cuTensorMapEncodeTiled) tensor_map_encode_tiled = nullptr;
  decltype(&::cuTensorMapEncodeIm2col) tensor_map_encode_im2col = nullptr;   // likewise
  decltype(&::cuOccupancyMaxActiveClusters) occupancy_max_active_clusters = nullptr;   // likewise
};

// Loads the driver and calls cuInit once per process; throws kiln::CudaError
// (call "dlopen" / "cuInit" / ...) when the library or a GPU is missing. A
// failure is remembered: later calls throw the same error without retrying.
Driver& driver();

// Never throws: false with the reason in *why when there is no usable driver or
// no GPU (GPU tests skip with it).
bool gpu_available(std::string* why = nullptr);

// Throws CudaError("kiln: <call> failed: <NAME>: <description>", call, code, NAME)
// unless result is CUDA_SUCCESS.
void check(CUresult result, const char* call);

// The caller's current context if it has one, else device 0's primary context,
// made current. *device gets its ordinal.
CUcontext current_context(int* device = nullptr);

// Device `device`'s primary context (the CUDA runtime's, so PyTorch's), retained once per
// process. ArgumentError naming the range for an ordinal out of it; CudaError without a GPU.
CUcontext primary_context(int device);

// Whether a cubin built for `code_arch` runs on a device of `device_arch` (both "sm_XY" or
// "sm_XYa", as device_arch returns them): the same major version at the same or a later minor;
// arch-specific code ("sm_90a") only on exactly its compute capability.
bool arch_runs_on(std::string_view code_arch, std::string_view device_arch);

// "sm_80", "sm_86", ... from the device's compute capability; "sm_90a" for 9.0 (H100/H200):
// code for it runs only on 9.0, which is this device, and may use wgmma. Options::arch or
// KILN_ARCH = sm_90 asks for the portable sm_90 paths instead.
std::string device_arch(int device);
std::string device_name(int device);

// Loads a cubin into the current context.
CUmodule load_module(const std::vector<char>& cubin);
void unload_module(CUmodule module) noexcept;
// CudaError naming the kernel when the module lacks it.
CUfunction get_function(CUmodule module, const std::string& name);

// The `call` of the CudaError a launch step throws where the driver refuses it (the tuner tells
// those from faults: tuner_skips_launch_error in tuner.h).
inline constexpr const char* kCallLaunchKernel = "cuLaunchKernel";
inline constexpr const char* kCallSetDynamicShared = "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)";
inline constexpr const char* kCallMaxActiveClusters = "cuOccupancyMaxActiveClusters";

// Kernels start with a limit of 48 KB of shared memory, static and dynamic together; one that
// needs more must raise its dynamic limit (up to the device's opt-in maximum). No-op where
// `bytes` and the kernel's static shared memory fit 48 KB.
void set_dynamic_shared(CUfunction function, unsigned bytes);

// The grid to launch `function` with. A kernel compiled with a cluster size (__cluster_dims__) is
// persistent by kiln's contract (the TMA engine's CTAs walk their work units in a grid-stride
// loop): it gets at most as many clusters as the device runs at once (cuOccupancyMaxActiveClusters),
// since a cluster that must wait for a free pair of SMs would run its share of the units after
// the others finish theirs. Any other kernel gets `grid` as is. Asks the driver: call it when the
// function is loaded, not per launch.
Dim3 resident_grid(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes);

void launch_kernel(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** args);

// Device memory owned by the object (tests, `kiln run`, benchmarks).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  void* data() const { return reinterpret_cast<void*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  void memset8(unsigned char value);                 // every byte
  void memset32(unsigned value);                     // every 4-byte word (bytes() % 4 == 0)

  template <class T>
  void upload(const std::vector<T>& host) { upload(host.data(), host.size() * sizeof(T)); }
  template <class T>
  std::vector<T> download_as() const {
    std::vector<T> out(bytes_ / sizeof(T));
    download(out.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

// Times work on a stream with a pair of events.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(CUstream stream = nullptr);
  void stop(CUstream stream = nullptr);
  float elapsed_ms();   // waits for the stop event

 private:
  CUevent start_ = nullptr, stop_ = nullptr;
};

}  // namespace kiln
