#include "runtime/device.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

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

// [Note: the scratch pool]
// A launch's scratch (intermediates, workspaces) is allocated on its stream before the kernels
// and freed on it after them, from a memory pool kiln creates per device. The device's default
// pool (cuMemAllocAsync) has a release threshold of 0: at every synchronization it returns freed
// memory to the driver, so a caller that synchronizes between calls paid a fresh mapping on
// each (a 1000³ bf16 product with two K slices, 8 MB of workspace: 0.069-0.078 ms a call
// against 0.013-0.021 without slices, in the tuner's timing loop, which synchronizes every
// launch; bench/results/2026-12-04-h200-run19; with this pool 0.020-0.029 ms, and `kiln run`,
// which synchronizes too, 0.061 -> 0.021 ms for 4 MB of workspace, -run20). kiln's pool keeps up
// to kScratchKeepBytes of what it has freed across synchronizations (its release threshold), so
// the scratch of the common call stays mapped; a larger scratch (a 1 GiB intermediate) goes back
// to the driver at the next synchronization as before, so kiln never sits on more than that much
// memory that other allocations of the process could use. It is not the device's current pool: other
// libraries' cudaMallocAsync keep their own. Options::scratch replaces it with the caller's
// allocator.
constexpr cuuint64_t kScratchKeepBytes = cuuint64_t{256} << 20;

namespace {
CUmemoryPool scratch_pool(int device) {
  static std::mutex mutex;
  static std::map<int, CUmemoryPool> pools;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = pools.find(device); it != pools.end()) return it->second;
  auto& d = driver();
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool pool = nullptr;
  check(d.mem_pool_create(&pool, &props), "cuMemPoolCreate");
  cuuint64_t keep = kScratchKeepBytes;
  check(d.mem_pool_set_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep), "cuMemPoolSetAttribute");
  pools.emplace(device, pool);
  return pool;
}
}  // namespace

unsigned long long allocate_async(std::size_t bytes, CUstream stream, int device) {
  auto& d = driver();
  CUdeviceptr ptr = 0;
  const CUresult r = d.mem_alloc_from_pool_async(&ptr, bytes, scratch_pool(device), stream);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.get_error_name(r, &name);
    throw CudaError(fmt::format("cuMemAllocFromPoolAsync of {} bytes of scratch failed: {}", bytes, name ? name : "?"),
                    "cuMemAllocFromPoolAsync", static_cast<int>(r), name ? name : "?");
  }
  return ptr;
}

void free_async(unsigned long long ptr, CUstream stream) noexcept {
  auto& d = driver();
  const CUresult r = d.mem_free_async(ptr, stream);
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
