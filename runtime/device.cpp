#include "runtime/device.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "generator/support/assert.h"
#include "runtime/log.h"

namespace kiln {

namespace fs = std::filesystem;

int current_device() {
  if (!gpu_available(nullptr)) return -1;
  int device = 0;
  current_context(&device);
  return device;
}

Target device_target(int device, Precision precision) {
  Target t = Target::for_arch(device_arch(device));
  t.sm_count = device_sm_count(device);
  t.precision = precision;
  return t;
}

int device_sm_count(int device) {
  auto& d = driver();
  CUdevice dev;
  check(d.device_get(&dev, device), "cuDeviceGet");
  int count = 0;
  check(d.device_get_attribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");
  return count;
}

unsigned long long allocate_async(std::size_t bytes, CUstream stream) {
  auto& d = driver();
  CUdeviceptr ptr = 0;
  const CUresult r = d.mem_alloc_async ? d.mem_alloc_async(&ptr, bytes, stream) : d.mem_alloc(&ptr, bytes);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.get_error_name(r, &name);
    throw CudaError(fmt::format("cuMemAllocAsync of {} bytes of scratch failed: {}", bytes, name ? name : "?"),
                    "cuMemAllocAsync", static_cast<int>(r), name ? name : "?");
  }
  return ptr;
}

void free_async(unsigned long long ptr, CUstream stream) noexcept {
  auto& d = driver();
  const CUresult r = d.mem_free_async ? d.mem_free_async(ptr, stream) : d.mem_free(ptr);
  if (r != CUDA_SUCCESS) log_warning(fmt::format("freeing scratch memory failed (CUresult {})", static_cast<int>(r)));
}

std::string disassemble(const std::vector<char>& cubin) {
  std::vector<fs::path> dirs;
  if (const char* home = std::getenv("CUDA_HOME")) dirs.emplace_back(fs::path(home) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    for (std::size_t start = 0, end; start <= p.size(); start = end + 1) {
      end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      if (end > start) dirs.emplace_back(p.substr(start, end - start));
    }
  }
  std::string tool;
  for (const auto& d : dirs)
    if (tool.empty() && fs::exists(d / "cuobjdump")) tool = (d / "cuobjdump").string();
  if (tool.empty()) return "// SASS unavailable: cuobjdump was not found ($CUDA_HOME/bin, /usr/local/cuda/bin, $PATH)\n";
  const fs::path tmp = fs::temp_directory_path() / fmt::format("kiln-sass-{}-{}.cubin", ::getpid(),
                                                                 reinterpret_cast<std::uintptr_t>(&cubin));
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  }
  std::string text;
  if (FILE* p = ::popen(fmt::format("'{}' -sass '{}' 2>&1", tool, tmp.string()).c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    ::pclose(p);
  }
  std::error_code ec;
  fs::remove(tmp, ec);
  return text;
}

DeviceGuard::DeviceGuard(int device) {
  Driver& d = driver();
  CUcontext wanted = primary_context(device);
  CUcontext current = nullptr;
  check(d.ctx_get_current(&current), "cuCtxGetCurrent");
  previous_ = current;
  if (current != wanted) {
    check(d.ctx_set_current(wanted), "cuCtxSetCurrent");
    switched_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (!switched_) return;
  const CUresult r = driver().ctx_set_current(static_cast<CUcontext>(previous_));
  if (r != CUDA_SUCCESS) log_warning(fmt::format("restoring the previous CUDA context failed (CUresult {})", static_cast<int>(r)));
}

void synchronize() { check(driver().ctx_synchronize(), "cuCtxSynchronize"); }

}  // namespace kiln
