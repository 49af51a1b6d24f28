// The driver loader. Here (no GPU, no libcuda) every entry must fail with a clear
// CudaError, never crash; on a machine with a GPU the same file also checks
// memory, a real launch, a >48 KB shared-memory kernel and timing.
#include <doctest/doctest.h>

#include <cstring>
#include <regex>

#include "runtime/child_process.h"
#include "runtime/driver.h"
#include "runtime/nvrtc.h"

TEST_CASE("driver: a missing driver or GPU is a clear CudaError") {
  std::string why;
  if (kiln::gpu_available(&why)) {
    MESSAGE("a GPU is present; the no-driver path is covered by the KILN_CUDA_DRIVER_LIB cases");
    return;
  }
  CHECK_FALSE(why.empty());
  try {
    kiln::driver();
    FAIL("driver() should throw without a driver or GPU");
  } catch (const kiln::CudaError& e) {
    CHECK(std::string(e.what()) == why);
    CHECK_FALSE(e.call().empty());
    CHECK_FALSE(e.code_name().empty());
  }
  CHECK_THROWS_AS(kiln::current_context(), kiln::CudaError);
  CHECK_THROWS_AS(kiln::DeviceBuffer(16), kiln::CudaError);
  CHECK(kiln::device_count() == 0);
  CHECK_THROWS_AS(kiln::DeviceGuard(0), kiln::CudaError);
}

TEST_CASE("driver: which code runs on which device (arch_runs_on)") {
  using kiln::arch_runs_on;
  CHECK(arch_runs_on("sm_80", "sm_80"));
  CHECK(arch_runs_on("sm_80", "sm_86"));      // same major, later minor
  CHECK(arch_runs_on("sm_80", "sm_89"));
  CHECK_FALSE(arch_runs_on("sm_86", "sm_80"));  // an earlier minor lacks what 8.6 code may use
  CHECK_FALSE(arch_runs_on("sm_80", "sm_90a"));  // SASS does not cross major versions
  CHECK_FALSE(arch_runs_on("sm_90", "sm_80"));
  CHECK(arch_runs_on("sm_90", "sm_90a"));       // portable sm_90 code on an H100
  CHECK(arch_runs_on("sm_90a", "sm_90a"));
  CHECK_FALSE(arch_runs_on("sm_90a", "sm_91"));  // arch-specific code: exactly its capability
  CHECK(arch_runs_on("sm_100", "sm_103"));      // two-digit majors
  CHECK_FALSE(arch_runs_on("sm_100a", "sm_103"));
  CHECK_FALSE(arch_runs_on("compute_90", "sm_90"));
  CHECK_FALSE(arch_runs_on("sm_9", "sm_90"));
  CHECK_FALSE(arch_runs_on("sm_8x", "sm_80"));
}

// Child halves of the next test: run only under run_test_case_in_child.
TEST_CASE("child: driver with KILN_CUDA_DRIVER_LIB pointing nowhere") {
  if (!kiln_test::in_child()) return;
  std::string why;
  CHECK_FALSE(kiln::gpu_available(&why));
  CHECK(why.find("/nonexistent/libcuda.so.1") != std::string::npos);
  try {
    kiln::driver();
    FAIL("expected a CudaError");
  } catch (const kiln::CudaError& e) {
    CHECK(e.call() == "dlopen");
    CHECK(e.code_name() == "CUDA_ERROR_NO_DEVICE");
    CHECK(std::string(e.what()) == why);
  }
  // The failure is remembered, not retried, and stays an exception.
  CHECK_THROWS_AS(kiln::driver(), kiln::CudaError);
  CHECK_THROWS_AS(kiln::device_arch(0), kiln::CudaError);
}

TEST_CASE("child: driver with KILN_CUDA_DRIVER_LIB naming a library that is not the driver") {
  if (!kiln_test::in_child()) return;
  try {
    kiln::driver();
    FAIL("expected a CudaError");
  } catch (const kiln::CudaError& e) {
    CHECK(e.call() == "cuInit");
    CHECK(std::string(e.what()).find("lacks cuInit") != std::string::npos);
  }
}

TEST_CASE("driver: KILN_CUDA_DRIVER_LIB overrides the library, and failures are clear") {
  auto missing = kiln_test::run_test_case_in_child("KILN_CUDA_DRIVER_LIB=/nonexistent/libcuda.so.1",
                                                   "child: driver with KILN_CUDA_DRIVER_LIB pointing nowhere");
  INFO(missing.output);
  CHECK(missing.exit_code == 0);
  CHECK(missing.output.find("1 passed") != std::string::npos);
  // libm loads fine but has no cuInit.
  auto wrong = kiln_test::run_test_case_in_child(
      "KILN_CUDA_DRIVER_LIB=libm.so.6", "child: driver with KILN_CUDA_DRIVER_LIB naming a library that is not the driver");
  INFO(wrong.output);
  CHECK(wrong.exit_code == 0);
  CHECK(wrong.output.find("1 passed") != std::string::npos);
}

TEST_CASE("driver: memory, launch, large shared memory and timing on a GPU") {
  std::string why;
  if (!kiln::gpu_available(&why)) {
    MESSAGE("skipped, no GPU: " << why);
    return;
  }
  int device = -1;
  CUcontext ctx = kiln::current_context(&device);
  CHECK(ctx != nullptr);
  CHECK(device >= 0);
  std::string arch = kiln::device_arch(device);
  CHECK(std::regex_match(arch, std::regex("sm_[0-9]+a?")));
  CHECK((arch == "sm_90a") == (arch.rfind("sm_90", 0) == 0));  // 9.0 gets its arch-specific target
  MESSAGE("GPU: " << kiln::device_name(device) << " " << arch);

  // A kernel using 64 KB of dynamic shared memory: it must be opted into.
  const char* source = R"(
extern "C" __global__ void fill(float* out, int n, float value) {
  extern __shared__ float staging[];
  for (int i = threadIdx.x; i < 16384; i += blockDim.x) staging[i] = value + i % 7;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = staging[i % 16384];
})";
  auto compiled = kiln::compile({source, "fill.cu", arch});
  CUmodule module = kiln::load_module(compiled.cubin);
  CUfunction fill = kiln::get_function(module, "fill");
  CHECK_THROWS_WITH_AS(kiln::get_function(module, "absent"), doctest::Contains("'absent'"), kiln::CudaError);

  const int n = 1000;
  kiln::DeviceBuffer out(n * sizeof(float));
  out.memset32(0x7fc00000u);   // poison with NaN
  unsigned smem = 16384 * sizeof(float);
  kiln::set_dynamic_shared(fill, smem);
  int count = n;
  float value = 2.5f;
  CUdeviceptr ptr = out.ptr();
  void* args[] = {&ptr, &count, &value};
  kiln::EventTimer timer;
  timer.start();
  kiln::launch_kernel(fill, {(n + 255) / 256, 1, 1}, {256, 1, 1}, smem, nullptr, args);
  timer.stop();
  CHECK(timer.elapsed_ms() >= 0);
  auto host = out.download_as<float>();
  REQUIRE(host.size() == static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) CHECK(host[i] == value + (i % 16384) % 7);

  // 48 KB of dynamic shared memory beside a little static: over the default limit, which counts
  // both (the look-back scan's t128 v8 s3 pick failed to launch before set_dynamic_shared said so).
  const char* edge_source = R"(
extern "C" __global__ void edge(float* out, int n, float value) {
  extern __shared__ float staging[];
  __shared__ float tag[32];
  if (threadIdx.x < 32) tag[threadIdx.x] = value;
  for (int i = threadIdx.x; i < 12288; i += blockDim.x) staging[i] = i % 5;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = staging[i % 12288] + tag[i % 32];
})";
  auto edge_compiled = kiln::compile({edge_source, "edge.cu", arch});
  CUmodule edge_module = kiln::load_module(edge_compiled.cubin);
  CUfunction edge = kiln::get_function(edge_module, "edge");
  const unsigned edge_smem = 12288 * sizeof(float);
  kiln::set_dynamic_shared(edge, edge_smem);
  out.memset32(0x7fc00000u);
  kiln::launch_kernel(edge, {(n + 255) / 256, 1, 1}, {256, 1, 1}, edge_smem, nullptr, args);
  auto edge_host = out.download_as<float>();
  for (int i = 0; i < n; ++i) CHECK(edge_host[i] == float(i % 12288 % 5) + value);
  kiln::unload_module(edge_module);

  // A bad launch reports the call and the error name.
  try {
    kiln::launch_kernel(fill, {1, 1, 1}, {4096, 1, 1}, 0, nullptr, args);
    FAIL("a 4096-thread block must be rejected");
  } catch (const kiln::CudaError& e) {
    CHECK(e.call() == "cuLaunchKernel");
    CHECK(e.code_name().rfind("CUDA_ERROR_", 0) == 0);
  }
  kiln::unload_module(module);
}
