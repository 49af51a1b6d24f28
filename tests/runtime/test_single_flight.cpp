// Threads: many threads asking for the same and for different specializations at
// once compile each distinct kernel exactly once (single flight), with no GPU.
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/nvrtc.h"

namespace {

const char* kSpec = R"(
op scale_add {
  dims N = 1024
  in  x: f32[N]
  in  y: f32[N]
  out z = 2.0 * x + y
}
)";

}  // namespace

TEST_CASE("32 threads, 4 distinct specializations: each kernel compiles exactly once") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC is not available: " << why);
    return;
  }
  kiln::Options options;
  options.arch = "sm_90";
  options.disk_cache = false;   // every kernel must come from NVRTC, so compiles are countable
  options.use_environment = false;
  options.shapes = "declared";   // four sizes, four kernels (generic: two buckets, two kernels)
  kiln::Runtime rt(options);
  kiln::Op op = rt.load_string(kSpec, "scale_add.kiln").op("scale_add");
  const std::int64_t sizes[4] = {1000, 1024, 4097, 65536};
  std::atomic<int> ready{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 32; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < 32) std::this_thread::yield();   // start together
      try {
        kiln::Executable exe = op.specialize({{"N", sizes[t % 4]}});
        auto kernels = exe.kernels();   // compiles, or waits for the thread that does
        if (kernels.size() != 1 || kernels[0].registers <= 0) failures.fetch_add(1);
      } catch (const std::exception&) {
        failures.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(rt.stats().compiles == 4);
}

TEST_CASE("a kiln build directory serves a new runtime with no compile") {
  std::string why;
  if (!kiln::nvrtc_available(&why)) {
    MESSAGE("skipped: NVRTC is not available: " << why);
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() / ("kiln-sf-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  kiln::Options options;
  options.arch = "sm_80";
  options.cache_dir = dir.string();
  options.use_environment = false;
  {
    kiln::Runtime rt(options);
    rt.load_string(kSpec, "scale_add.kiln").op("scale_add").specialize({{"N", 333}}).kernels();
    CHECK(rt.stats().compiles == 1);
    CHECK(rt.stats().disk_hits == 0);
  }
  kiln::Runtime again(options);
  again.load_string(kSpec, "scale_add.kiln").op("scale_add").specialize({{"N", 333}}).kernels();
  CHECK(again.stats().compiles == 0);
  CHECK(again.stats().disk_hits == 1);
  std::filesystem::remove_all(dir);
}
