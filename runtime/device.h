// The device layer the facade, the tools and the tests use: a few verbs over
// the dlopen'ed driver (runtime/driver.h), each checking its CUresult.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <cuda.h>

#include "kiln/kiln.h"

namespace kiln {

bool gpu_available(std::string* why);                  // never throws
int current_device();                                   // the current context's device, else 0; -1 when none
std::string device_arch(int device);                    // "sm_90"
int device_sm_count(int device);
std::string device_name(int device);
void* current_context();                                // the caller's, else device 0's primary (made current)
CUmodule load_module(const std::vector<char>& cubin);
CUfunction get_function(CUmodule module, const std::string& name);
void set_max_dynamic_shared(CUfunction f, unsigned bytes);
void launch_kernel(CUfunction f, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** params);
unsigned long long allocate_async(std::size_t bytes, CUstream stream);   // CudaError naming the size on failure
void free_async(unsigned long long ptr, CUstream stream) noexcept;
std::string disassemble(const std::vector<char>& cubin);  // cuobjdump -sass, or a sentence saying it is absent
void synchronize();                                     // the current context

// Device memory owned by the caller (tools, tests, benchmarks).
class DeviceMemory {
 public:
  explicit DeviceMemory(std::size_t bytes);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  DeviceMemory(DeviceMemory&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = 0; o.bytes_ = 0; }

  void* data() const { return reinterpret_cast<void*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  void upload(const std::vector<char>& host);
  std::vector<char> download() const;
  void fill(unsigned char byte);   // e.g. 0xFF poisons f32 with NaN

 private:
  unsigned long long ptr_ = 0;
  std::size_t bytes_ = 0;
};

// Device-side timing on the legacy stream or a given one.
class DeviceTimer {
 public:
  DeviceTimer();
  ~DeviceTimer();
  void start(CUstream stream = nullptr);
  double stop_ms(CUstream stream = nullptr);   // synchronizes on the stop event

 private:
  CUevent start_ = nullptr, stop_ = nullptr;
};

}  // namespace kiln
