// The device verbs of runtime/device.h over the dlopen'ed driver (runtime/driver.h).
#include "runtime/device.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "runtime/binary_io.h"
#include "runtime/driver.h"

namespace kiln {

namespace {
constexpr unsigned kDefaultSharedLimit = 48 * 1024;   // what a kernel gets without opting in
}  // namespace

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

int current_device() {
  if (!gpu_available(nullptr)) return -1;
  CUcontext ctx = nullptr;
  check(driver().ctx_get_current(&ctx), "cuCtxGetCurrent");
  if (ctx == nullptr) return 0;
  CUdevice dev = 0;
  check(driver().ctx_get_device(&dev), "cuCtxGetDevice");
  return static_cast<int>(dev);
}

static int device_attribute(int device, CUdevice_attribute attribute) {
  Driver& d = driver();
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  int value = 0;
  check(d.device_get_attribute(&value, attribute, dev), "cuDeviceGetAttribute");
  return value;
}

std::string device_arch(int device) {
  // "sm_90a" is never inferred: arch-specific features are opted into by the caller.
  return fmt::format("sm_{}{}", device_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                     device_attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
}

int device_sm_count(int device) { return device_attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT); }

std::string device_name(int device) {
  Driver& d = driver();
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  char name[256] = {};
  check(d.device_get_name(name, sizeof name, dev), "cuDeviceGetName");
  return name;
}

void* current_context() { return current_context(nullptr); }

CUmodule load_module(const std::vector<char>& cubin) {
  CUmodule module = nullptr;
  check(driver().module_load_data(&module, cubin.data()), "cuModuleLoadData");
  return module;
}

CUfunction get_function(CUmodule module, const std::string& name) {
  CUfunction f = nullptr;
  CUresult r = driver().module_get_function(&f, module, name.c_str());
  if (r == CUDA_SUCCESS) return f;
  try {
    check(r, "cuModuleGetFunction");
  } catch (const CudaError& e) {
    throw CudaError(fmt::format("{} (looking up kernel '{}')", e.what(), name), e.call(), e.code(), e.code_name());
  }
  return f;
}

void set_max_dynamic_shared(CUfunction f, unsigned bytes) {
  if (bytes <= kDefaultSharedLimit) return;
  check(driver().func_set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

void launch_kernel(CUfunction f, Dim3 grid, Dim3 block, unsigned shared_bytes, CUstream stream, void** params) {
  check(driver().launch_kernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes, stream, params,
                               nullptr),
        "cuLaunchKernel");
}

unsigned long long allocate_async(std::size_t bytes, CUstream stream) {
  CUdeviceptr ptr = 0;
  CUresult r = driver().mem_alloc_async(&ptr, bytes, stream);
  if (r != CUDA_SUCCESS) {
    try {
      check(r, "cuMemAllocAsync");
    } catch (const CudaError& e) {
      throw CudaError(fmt::format("{} (allocating {} bytes of scratch)", e.what(), bytes), e.call(), e.code(),
                      e.code_name());
    }
  }
  return ptr;
}

void free_async(unsigned long long ptr, CUstream stream) noexcept {
  if (ptr == 0) return;
  try {
    driver().mem_free_async(ptr, stream);
  } catch (...) {
  }
}

std::string disassemble(const std::vector<char>& cubin) {
  namespace fs = std::filesystem;
  // cuobjdump from PATH, else the toolkit's bin directories.
  std::string tool;
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"))
    for (std::string p = path; !p.empty();) {
      auto colon = p.find(':');
      dirs.push_back(p.substr(0, colon));
      p = colon == std::string::npos ? "" : p.substr(colon + 1);
    }
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env); v != nullptr && *v != '\0') dirs.push_back(std::string(v) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  std::error_code ec;
  for (const auto& d : dirs)
    if (!d.empty() && fs::exists(fs::path(d) / "cuobjdump", ec)) {
      tool = (fs::path(d) / "cuobjdump").string();
      break;
    }
  if (tool.empty())
    return "(SASS unavailable: cuobjdump not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin; it ships with "
           "the CUDA toolkit)\n";

  std::string file = (fs::temp_directory_path(ec) / fmt::format("kiln-sass-{}.cubin", static_cast<long>(getpid()))).string();
  std::string error;
  if (!write_file_atomic(file, cubin.data(), cubin.size(), &error)) return "(SASS unavailable: " + error + ")\n";
  std::string out;
  if (FILE* pipe = popen(fmt::format("'{}' -sass '{}' 2>&1", tool, file).c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    int status = pclose(pipe);
    if (status != 0) out = fmt::format("(cuobjdump failed with status {})\n", status) + out;
  }
  fs::remove(file, ec);
  return out;
}

void synchronize() { check(driver().ctx_synchronize(), "cuCtxSynchronize"); }

// ---------------------------------------------------------------- DeviceMemory
DeviceMemory::DeviceMemory(std::size_t bytes) : bytes_(bytes) {
  current_context(nullptr);
  if (bytes > 0) {
    CUdeviceptr ptr = 0;
    check(driver().mem_alloc(&ptr, bytes), "cuMemAlloc");
    ptr_ = ptr;
  }
}

DeviceMemory::~DeviceMemory() {
  if (ptr_ != 0) driver().mem_free(ptr_);   // result ignored: a destructor must not throw
}

void DeviceMemory::upload(const std::vector<char>& host) {
  if (host.size() > bytes_)
    throw ArgumentError(fmt::format("kiln: upload of {} bytes into a {}-byte device buffer", host.size(), bytes_));
  if (!host.empty()) check(driver().memcpy_htod(ptr_, host.data(), host.size()), "cuMemcpyHtoD");
}

std::vector<char> DeviceMemory::download() const {
  std::vector<char> host(bytes_);
  if (bytes_ > 0) check(driver().memcpy_dtoh(host.data(), ptr_, bytes_), "cuMemcpyDtoH");
  return host;
}

void DeviceMemory::fill(unsigned char byte) {
  if (bytes_ > 0) check(driver().memset_d8(ptr_, byte, bytes_), "cuMemsetD8");
}

// ---------------------------------------------------------------- DeviceTimer
DeviceTimer::DeviceTimer() {
  current_context(nullptr);
  check(driver().event_create(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
  CUresult r = driver().event_create(&stop_, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) {
    driver().event_destroy(start_);
    check(r, "cuEventCreate");
  }
}

DeviceTimer::~DeviceTimer() {
  driver().event_destroy(start_);
  driver().event_destroy(stop_);
}

void DeviceTimer::start(CUstream stream) { check(driver().event_record(start_, stream), "cuEventRecord"); }

double DeviceTimer::stop_ms(CUstream stream) {
  check(driver().event_record(stop_, stream), "cuEventRecord");
  check(driver().event_synchronize(stop_), "cuEventSynchronize");
  float ms = 0;
  check(driver().event_elapsed_time(&ms, start_, stop_), "cuEventElapsedTime");
  return ms;
}

}  // namespace kiln
