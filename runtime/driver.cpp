#include "runtime/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "generator/support/assert.h"

#include "runtime/log.h"

namespace kiln {

namespace {

constexpr unsigned kDefaultSharedLimit = 48 * 1024;

std::string driver_library() {
  if (const char* env = std::getenv("KILN_CUDA_DRIVER_LIB"); env != nullptr && *env != '\0') return env;
  return "libcuda.so.1";
}

// Resolves the first of `names` that the library exports.
template <class Fn>
void resolve(Driver& d, Fn& out, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    out = reinterpret_cast<Fn>(dlsym(d.handle, name));
    if (out != nullptr) return;
  }
  throw CudaError(fmt::format("kiln: the CUDA driver {} lacks {}; it is older than kiln supports (update the "
                              "NVIDIA driver)",
                              d.library_path, *names.begin()),
                  *names.begin(), static_cast<int>(CUDA_ERROR_NOT_FOUND), "CUDA_ERROR_NOT_FOUND");
}

// Resolves an entry point kiln can do without (null when the library lacks it).
template <class Fn>
void resolve_optional(Driver& d, Fn& out, const char* name) {
  out = reinterpret_cast<Fn>(dlsym(d.handle, name));
}

Driver load_driver() {
  Driver d;
  d.library_path = driver_library();
  d.handle = dlopen(d.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (d.handle == nullptr) {
    const char* err = dlerror();
    throw CudaError(fmt::format("kiln: cannot load the CUDA driver {} ({}): no NVIDIA driver is installed here. "
                                "Running kernels needs a GPU; generating and compiling them (kiln gen, kiln build) "
                                "does not.",
                                d.library_path, err != nullptr ? err : "not found"),
                    "dlopen", static_cast<int>(CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
  }
  resolve(d, d.init, {"cuInit"});
  resolve(d, d.mem_free_async, {"cuMemFreeAsync"});
  resolve(d, d.mem_pool_create, {"cuMemPoolCreate"});
  resolve(d, d.mem_pool_set_attribute, {"cuMemPoolSetAttribute"});
  resolve(d, d.mem_alloc_from_pool_async, {"cuMemAllocFromPoolAsync"});
  resolve(d, d.driver_get_version, {"cuDriverGetVersion"});
  resolve(d, d.get_error_name, {"cuGetErrorName"});
  resolve(d, d.get_error_string, {"cuGetErrorString"});
  resolve(d, d.device_get, {"cuDeviceGet"});
  resolve(d, d.device_get_count, {"cuDeviceGetCount"});
  resolve(d, d.device_get_attribute, {"cuDeviceGetAttribute"});
  resolve(d, d.device_get_name, {"cuDeviceGetName"});
  resolve(d, d.primary_ctx_retain, {"cuDevicePrimaryCtxRetain"});
  resolve(d, d.primary_ctx_release, {"cuDevicePrimaryCtxRelease_v2"});
  resolve(d, d.ctx_destroy, {"cuCtxDestroy_v2"});
  resolve(d, d.ctx_set_current, {"cuCtxSetCurrent"});
  resolve(d, d.ctx_get_current, {"cuCtxGetCurrent"});
  resolve(d, d.ctx_get_device, {"cuCtxGetDevice"});
  resolve(d, d.ctx_synchronize, {"cuCtxSynchronize"});
  resolve(d, d.module_load_data, {"cuModuleLoadData"});
  resolve(d, d.module_unload, {"cuModuleUnload"});
  resolve(d, d.module_get_function, {"cuModuleGetFunction"});
  resolve(d, d.func_set_attribute, {"cuFuncSetAttribute"});
  resolve(d, d.func_get_attribute, {"cuFuncGetAttribute"});
  resolve(d, d.launch_kernel, {"cuLaunchKernel"});
  resolve(d, d.mem_alloc, {"cuMemAlloc_v2"});
  resolve(d, d.mem_free, {"cuMemFree_v2"});
  resolve(d, d.mem_get_info, {"cuMemGetInfo_v2"});
  resolve(d, d.memcpy_htod, {"cuMemcpyHtoD_v2"});
  resolve(d, d.memcpy_dtoh, {"cuMemcpyDtoH_v2"});
  resolve(d, d.memcpy_dtod, {"cuMemcpyDtoD_v2"});
  resolve(d, d.memset_d8, {"cuMemsetD8_v2"});
  resolve(d, d.memset_d32, {"cuMemsetD32_v2"});
  resolve(d, d.memset_d32_async, {"cuMemsetD32Async"});
  resolve(d, d.stream_create, {"cuStreamCreate"});
  resolve(d, d.stream_destroy, {"cuStreamDestroy_v2"});
  resolve(d, d.stream_synchronize, {"cuStreamSynchronize"});
  resolve(d, d.event_create, {"cuEventCreate"});
  resolve(d, d.event_destroy, {"cuEventDestroy_v2"});
  resolve(d, d.event_record, {"cuEventRecord"});
  resolve(d, d.event_synchronize, {"cuEventSynchronize"});
  // CUDA 13's cuda.h maps cuEventElapsedTime to _v2; drivers before 12.8 only
  // have the unversioned symbol, which has the same signature.
  resolve(d, d.event_elapsed_time, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  resolve_optional(d, d.tensor_map_encode_tiled, "cuTensorMapEncodeTiled");
  resolve_optional(d, d.tensor_map_encode_im2col, "cuTensorMapEncodeIm2col");
  resolve_optional(d, d.occupancy_max_active_clusters, "cuOccupancyMaxActiveClusters");

  CUresult r = d.init(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    d.get_error_name(r, &name);
    d.get_error_string(r, &text);
    throw CudaError(fmt::format("kiln: cuInit failed: {}: {} (is there a GPU, and is it visible to this process?)",
                                name != nullptr ? name : "?", text != nullptr ? text : "unknown error"),
                    "cuInit", static_cast<int>(r), name != nullptr ? name : "");
  }
  d.driver_get_version(&d.version);
  log_debug(fmt::format("loaded CUDA driver {} (version {})", d.library_path, d.version));
  return d;
}

struct DriverSlot {
  std::once_flag once;
  Driver driver;
  std::exception_ptr failure;
};

DriverSlot& slot() {
  static DriverSlot s;
  return s;
}

}  // namespace

Driver& driver() {
  DriverSlot& s = slot();
  std::call_once(s.once, [&s] {
    try {
      s.driver = load_driver();
    } catch (...) {
      s.failure = std::current_exception();
    }
  });
  if (s.failure) std::rethrow_exception(s.failure);
  return s.driver;
}

bool gpu_available(std::string* why) {
  try {
    Driver& d = driver();
    int count = 0;
    CUresult r = d.device_get_count(&count);
    if (r != CUDA_SUCCESS || count == 0) {
      if (why != nullptr) *why = "the CUDA driver reports no GPU";
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    if (why != nullptr) *why = e.what();
    return false;
  }
}

void check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  Driver& d = driver();
  d.get_error_name(result, &name);
  d.get_error_string(result, &text);
  std::string code_name = name != nullptr ? name : fmt::format("CUresult {}", static_cast<int>(result));
  throw CudaError(fmt::format("kiln: {} failed: {}: {}", call, code_name, text != nullptr ? text : "unknown error"),
                  call, static_cast<int>(result), code_name);
}

int device_count() {   // kiln.h
  if (!gpu_available(nullptr)) return 0;
  int count = 0;
  check(driver().device_get_count(&count), "cuDeviceGetCount");
  return count;
}

CUcontext primary_context(int device) {
  Driver& d = driver();
  int count = 0;
  check(d.device_get_count(&count), "cuDeviceGetCount");
  if (count == 0)
    throw CudaError("kiln: no GPU found", "cuDeviceGetCount", static_cast<int>(CUDA_ERROR_NO_DEVICE),
                    "CUDA_ERROR_NO_DEVICE");
  KILN_CHECK(device >= 0 && device < count, ArgumentError,
             "device {} is out of range: this process sees {} CUDA device{} (0{}){}", device, count,
             count == 1 ? "" : "s", count == 1 ? "" : fmt::format("-{}", count - 1),
             std::getenv("CUDA_VISIBLE_DEVICES") != nullptr
                 ? fmt::format("; CUDA_VISIBLE_DEVICES={}", std::getenv("CUDA_VISIBLE_DEVICES")) : "");
  // Retained once per device for the life of the process: the context the CUDA runtime API (and
  // so PyTorch) uses for the device too.
  static std::mutex mutex;
  static std::vector<CUcontext> primaries;
  std::lock_guard lock(mutex);
  if (primaries.size() < static_cast<std::size_t>(count)) primaries.resize(static_cast<std::size_t>(count), nullptr);
  CUcontext& primary = primaries[static_cast<std::size_t>(device)];
  if (primary == nullptr) {
    CUdevice dev = 0;
    check(d.device_get(&dev, device), "cuDeviceGet");
    check(d.primary_ctx_retain(&primary, dev), "cuDevicePrimaryCtxRetain");
  }
  return primary;
}

CUcontext current_context(int* device) {
  Driver& d = driver();
  CUcontext ctx = nullptr;
  check(d.ctx_get_current(&ctx), "cuCtxGetCurrent");
  if (ctx != nullptr) {
    CUdevice dev = 0;
    check(d.ctx_get_device(&dev), "cuCtxGetDevice");
    if (device != nullptr) *device = static_cast<int>(dev);
    return ctx;
  }
  // No current context: use device 0's primary context (the one the CUDA runtime API would use).
  CUcontext primary = primary_context(0);
  check(d.ctx_set_current(primary), "cuCtxSetCurrent");
  if (device != nullptr) *device = 0;
  return primary;
}

bool arch_runs_on(std::string_view code_arch, std::string_view device_arch) {
  // "sm_XY" or "sm_XYa": cubins run on the same major version at the same or a later minor;
  // arch-specific ("a") code only on exactly its own compute capability.
  auto parse = [](std::string_view arch, int* major, int* minor, bool* specific) {
    if (arch.substr(0, 3) != "sm_" || arch.size() < 5) return false;
    std::string_view digits = arch.substr(3);
    *specific = !digits.empty() && digits.back() == 'a';
    if (*specific) digits.remove_suffix(1);
    if (digits.size() < 2 || digits.find_first_not_of("0123456789") != std::string_view::npos) return false;
    *minor = digits.back() - '0';
    *major = std::stoi(std::string(digits.substr(0, digits.size() - 1)));
    return true;
  };
  int cm = 0, cn = 0, dm = 0, dn = 0;
  bool cs = false, ds = false;
  if (!parse(code_arch, &cm, &cn, &cs) || !parse(device_arch, &dm, &dn, &ds)) return false;
  if (cs) return cm == dm && cn == dn;
  return cm == dm && cn <= dn;
}

std::string device_arch(int device) {
  Driver& d = driver();
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  int major = 0, minor = 0;
  check(d.device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
  check(d.device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
  // Compute capability 9.0 is exactly what sm_90a code runs on, so its arch-specific features
  // (wgmma) are used; a caller wanting portable sm_90 code sets the arch explicitly.
  return fmt::format("sm_{}{}{}", major, minor, major == 9 && minor == 0 ? "a" : "");
}

std::string device_name(int device) {
  Driver& d = driver();
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  char name[256] = {};
  check(d.device_get_name(name, sizeof name, dev), "cuDeviceGetName");
  return name;
}

CUmodule load_module(const std::vector<char>& cubin) {
  CUmodule module = nullptr;
  check(driver().module_load_data(&module, cubin.data()), "cuModuleLoadData");
  return module;
}

void unload_module(CUmodule module) noexcept {
  if (module == nullptr) return;
  try {
    driver().module_unload(module);
  } catch (...) {
  }
}

CUfunction get_function(CUmodule module, const std::string& name) {
  CUfunction f = nullptr;
  CUresult r = driver().module_get_function(&f, module, name.c_str());
  if (r != CUDA_SUCCESS) {
    try {
      check(r, "cuModuleGetFunction");
    } catch (const CudaError& e) {
      throw CudaError(fmt::format("{} (looking up kernel '{}')", e.what(), name), e.call(), e.code(), e.code_name());
    }
  }
  return f;
}

void set_dynamic_shared(CUfunction function, unsigned bytes) {
  if (bytes == 0) return;
  // The default limit is 48 KB less the kernel's static shared memory: a kernel with 48 KB of
  // dynamic and a few bytes of static shared memory must opt in too.
  int static_bytes = 0;
  check(driver().func_get_attribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
        "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  if (bytes + static_cast<unsigned>(static_bytes) <= kDefaultSharedLimit) return;
  check(driver().func_set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)),
        kCallSetDynamicShared);
}

Dim3 resident_grid(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes) {
  int width = 0;
  check(driver().func_get_attribute(&width, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, function),
        "cuFuncGetAttribute(REQUIRED_CLUSTER_WIDTH)");
  if (width <= 1) return grid;
  if (driver().occupancy_max_active_clusters == nullptr)
    throw CudaError("kiln: a kernel runs in thread-block clusters but this CUDA driver lacks "
                    "cuOccupancyMaxActiveClusters (CUDA 12.0 or newer is needed)",
                    kCallMaxActiveClusters, CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED");
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(width);
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = block.x, config.blockDimY = block.y, config.blockDimZ = block.z;
  config.sharedMemBytes = shared_bytes;
  int clusters = 0;
  check(driver().occupancy_max_active_clusters(&clusters, function, &config), kCallMaxActiveClusters);
  if (clusters < 1)
    throw CudaError(fmt::format("kiln: not one cluster of {} CTAs ({} threads, {} bytes of shared memory each) "
                                "fits on this device at once", width, block.x * block.y * block.z, shared_bytes),
                    kCallMaxActiveClusters, CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE");
  const unsigned cap = static_cast<unsigned>(clusters) * static_cast<unsigned>(width);
  log_debug(fmt::format("a kernel in clusters of {}: {} clusters fit at once, grid.x at most {}", width, clusters, cap));
  if (grid.x > cap) grid.x = cap;
  return grid;
}

void launch_kernel(CUfunction function, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** args) {
  check(driver().launch_kernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream, args,
                               nullptr),
        kCallLaunchKernel);
}

// ---------------------------------------------------------------- DeviceBuffer
DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  current_context();
  if (bytes > 0) check(driver().mem_alloc(&ptr_, bytes), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) driver().mem_free(ptr_);   // errors ignored: a destructor must not throw
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = 0;
  other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this == &other) return *this;
  if (ptr_ != 0) driver().mem_free(ptr_);
  ptr_ = other.ptr_;
  bytes_ = other.bytes_;
  other.ptr_ = 0;
  other.bytes_ = 0;
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (bytes + offset > bytes_)
    throw ArgumentError(fmt::format("kiln: upload of {} bytes at offset {} overflows a {}-byte buffer", bytes, offset, bytes_));
  if (bytes > 0) check(driver().memcpy_htod(ptr_ + offset, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (bytes + offset > bytes_)
    throw ArgumentError(fmt::format("kiln: download of {} bytes at offset {} overflows a {}-byte buffer", bytes, offset, bytes_));
  if (bytes > 0) check(driver().memcpy_dtoh(host, ptr_ + offset, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::memset8(unsigned char value) {
  if (bytes_ > 0) check(driver().memset_d8(ptr_, value, bytes_), "cuMemsetD8");
}

void DeviceBuffer::memset32(unsigned value) {
  if (bytes_ % 4 != 0)
    throw ArgumentError(fmt::format("kiln: memset32 on a {}-byte buffer (not a multiple of 4)", bytes_));
  if (bytes_ > 0) check(driver().memset_d32(ptr_, value, bytes_ / 4), "cuMemsetD32");
}

// ---------------------------------------------------------------- EventTimer
EventTimer::EventTimer() {
  current_context();
  check(driver().event_create(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
  CUresult r = driver().event_create(&stop_, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) {
    driver().event_destroy(start_);
    check(r, "cuEventCreate");
  }
}

EventTimer::~EventTimer() {
  driver().event_destroy(start_);
  driver().event_destroy(stop_);
}

void EventTimer::start(CUstream stream) { check(driver().event_record(start_, stream), "cuEventRecord"); }
void EventTimer::stop(CUstream stream) { check(driver().event_record(stop_, stream), "cuEventRecord"); }

float EventTimer::elapsed_ms() {
  check(driver().event_synchronize(stop_), "cuEventSynchronize");
  float ms = 0;
  check(driver().event_elapsed_time(&ms, start_, stop_), "cuEventElapsedTime");
  return ms;
}

}  // namespace kiln
