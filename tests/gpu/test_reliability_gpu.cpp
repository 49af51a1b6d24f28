// Reliability on the GPU (issue 7): running out of device memory for scratch, a caller's
// scratch allocator and its failures, and ops over more than 2^31 elements (int64 indexing). The values are chosen so
// that every result is exact in its dtype: a wrong index cannot hide behind a
// tolerance.
#include <cinttypes>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpu_test_util.h"
#include "runtime/driver.h"

namespace kiln::test {

namespace {

constexpr const char* kSpec = R"(
op two_steps {
  dims R, C
  in  x: f32[R, C]
  let s = cumsum(x, axis=1)
  out y = sum(s, axis=1)
}
op big_affine {
  dims N
  in  x: f32[N]
  out y = x * 2.0 + 1.0
}
op big_row_sum {
  dims R, C
  in  x: i32[R, C]
  out y = sum(x, axis=1)
}
op big_col_sum {
  dims R, C
  in  x: i32[R, C]
  out y = sum(x, axis=0)
}
op big_row_scan {
  dims R, C
  in  x: i32[R, C]
  out y = cumsum(x, axis=1)
}
)";

std::size_t free_device_bytes() {
  std::size_t free_bytes = 0, total = 0;
  check(driver().mem_get_info(&free_bytes, &total), "cuMemGetInfo");
  return free_bytes;
}

bool enough_memory(std::size_t bytes) {
  const std::size_t free_bytes = free_device_bytes();
  if (free_bytes >= bytes) return true;
  std::printf("%s needs %.1f GiB of free device memory, %.1f GiB free\n", kSkipMarker, bytes / 1073741824.0,
              free_bytes / 1073741824.0);
  return false;
}

// A 0/1 pattern from the element index, so sums and prefixes stay exact.
inline std::int32_t bit_at(std::int64_t i) { return ((i * 2654435761LL) >> 7) & 1; }

}  // namespace

TEST_CASE("gpu: out of device memory for scratch is a CudaError naming the size, and nothing leaks") {
  KILN_REQUIRE_GPU();
  Options options;
  options.disk_cache = false;
  Runtime rt(options);
  Program program = rt.load_string(kSpec, "reliability.kiln");
  // cumsum then sum: the prefix sums are an intermediate of R*C floats (1 GiB).
  const std::int64_t R = 16384, C = 16384;
  const std::size_t intermediate = static_cast<std::size_t>(R * C) * 4;
  Executable exe = program.op("two_steps").specialize({{"R", R}, {"C", C}});
  REQUIRE(exe.plan_text().find("tmp s f32[16384, 16384]") != std::string::npos);
  DeviceBuffer x(intermediate), y(R * 4);
  x.memset32(0x3f800000u);   // 1.0f: row sums of the prefixes are C(C+1)/2, exact in f32 (C = 2^14)
  auto run = [&] { exe.launch(nullptr, {TensorRef(x.data(), DType::f32, {R, C}), TensorRef(y.data(), DType::f32, {R})}); };
  run();
  synchronize();
  const std::vector<float> first = y.download_as<float>();
  CHECK(first[0] == static_cast<float>(C * (C + 1) / 2));
  const std::size_t free_before = free_device_bytes();

  // Take all but 256 MiB of what is free, so the 1 GiB of scratch cannot be had.
  std::vector<CUdeviceptr> hog;
  auto& d = driver();
  for (std::size_t chunk : {std::size_t{1} << 30, std::size_t{64} << 20, std::size_t{4} << 20}) {
    while (free_device_bytes() > (std::size_t{256} << 20) + chunk) {
      CUdeviceptr p = 0;
      if (d.mem_alloc(&p, chunk) != CUDA_SUCCESS) break;
      hog.push_back(p);
    }
  }
  std::string message;
  try {
    run();
    synchronize();
  } catch (const CudaError& e) {
    message = e.what();
  }
  for (CUdeviceptr p : hog) check(d.mem_free(p), "cuMemFree");
  hog.clear();
  INFO("error: " << message);
  REQUIRE(!message.empty());
  // The message names the bytes asked for: the intermediate plus the plan's other scratch.
  const auto at = message.find("cuMemAllocFromPoolAsync of ");
  REQUIRE(at != std::string::npos);
  const std::size_t asked =
      std::strtoull(message.c_str() + at + std::strlen("cuMemAllocFromPoolAsync of "), nullptr, 10);
  CHECK(asked >= intermediate);
  CHECK(asked < intermediate + (std::size_t{1} << 20));
  std::printf("scratch OOM: \"%s\"\n", message.c_str());

  // Nothing leaked, and the op still works afterwards.
  synchronize();
  const std::size_t free_after = free_device_bytes();
  CHECK(free_after + (std::size_t{8} << 20) >= free_before);
  y.memset32(0xffffffffu);
  run();
  synchronize();
  CHECK(y.download_as<float>() == first);
  std::printf("scratch OOM: free memory %.1f MiB before, %.1f MiB after\n", free_before / 1048576.0,
              free_after / 1048576.0);
}

namespace {

// A caller's scratch allocator (Options::scratch) for the test: cuMemAlloc'd blocks, handed out
// `offset` bytes in; deallocate() only records (the kernels may still run: the blocks are freed
// after a synchronize, by release()), or throws when told to.
struct RecordingScratch : ScratchAllocator {
  std::size_t offset = 0;
  bool fail = false;
  std::vector<std::pair<CUdeviceptr, std::size_t>> allocated, deallocated;
  std::vector<Stream> streams;
  void* allocate(std::size_t bytes, Stream stream) override {
    if (fail) throw std::runtime_error("the arena is full");
    CUdeviceptr p = 0;
    check(driver().mem_alloc(&p, bytes + offset), "cuMemAlloc");
    allocated.emplace_back(p + offset, bytes);
    streams.push_back(stream);
    return reinterpret_cast<void*>(p + offset);
  }
  void deallocate(void* ptr, std::size_t bytes, Stream) noexcept override {
    deallocated.emplace_back(reinterpret_cast<CUdeviceptr>(ptr), bytes);
  }
  void release() {
    synchronize();
    for (const auto& [p, bytes] : allocated) check(driver().mem_free(p - offset), "cuMemFree");
    allocated.clear();
  }
};

}  // namespace

TEST_CASE("gpu: a caller's scratch allocator serves every launch, and its failures reach the caller") {
  KILN_REQUIRE_GPU();
  const std::int64_t R = 300, C = 1000;
  auto scratch = std::make_shared<RecordingScratch>();
  Options options;
  options.disk_cache = false;
  options.scratch = scratch;
  Runtime rt(options);
  Executable exe = rt.load_string(kSpec, "reliability.kiln").op("two_steps").specialize({{"R", R}, {"C", C}});
  std::vector<float> host(static_cast<std::size_t>(R * C));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(bit_at(static_cast<std::int64_t>(i)));
  DeviceBuffer x(host.size() * 4), y(R * 4);
  x.upload(host.data(), host.size() * 4);
  Stream stream = nullptr;
  check(driver().stream_create(reinterpret_cast<CUstream*>(&stream), 0), "cuStreamCreate");
  auto run = [&] {
    exe.launch(stream, {TensorRef(x.data(), DType::f32, {R, C}), TensorRef(y.data(), DType::f32, {R})});
  };
  // The expected row sums of the prefix sums, exact in f32.
  std::vector<float> want(static_cast<std::size_t>(R));
  for (std::int64_t r = 0; r < R; ++r) {
    double prefix = 0, total = 0;
    for (std::int64_t c = 0; c < C; ++c) total += prefix += host[static_cast<std::size_t>(r * C + c)];
    want[static_cast<std::size_t>(r)] = static_cast<float>(total);
  }
  for (int i = 0; i < 3; ++i) {
    y.memset32(0xffffffffu);
    run();
    check(driver().stream_synchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
    CHECK(y.download_as<float>() == want);
  }
  // One allocation a launch, on the launch's stream, of at least the intermediate, each
  // deallocated with its pointer and size.
  REQUIRE(scratch->allocated.size() == 3);
  CHECK(scratch->deallocated == scratch->allocated);
  for (const auto& [p, bytes] : scratch->allocated) CHECK(bytes >= static_cast<std::size_t>(R * C * 4));
  for (Stream s : scratch->streams) CHECK(s == stream);
  scratch->release();
  scratch->deallocated.clear();

  // Misaligned memory: an ArgumentError naming it, nothing launched, the block given back.
  scratch->offset = 16;
  y.memset32(0xffffffffu);
  try {
    run();
    FAIL("no error");
  } catch (const ArgumentError& e) {
    CHECK(std::string(e.what()).find("Options::scratch returned") != std::string::npos);
    CHECK(std::string(e.what()).find("aligned to 256 bytes") != std::string::npos);
  }
  CHECK(scratch->deallocated == scratch->allocated);
  scratch->release();
  scratch->deallocated.clear();
  // The allocator's own failure reaches the caller unchanged; nothing launched.
  scratch->offset = 0;
  scratch->fail = true;
  try {
    run();
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "the arena is full");
  }
  synchronize();
  for (float v : y.download_as<float>()) CHECK(std::isnan(v));
  CHECK(scratch->deallocated.empty());
  check(driver().stream_destroy(static_cast<CUstream>(stream)), "cuStreamDestroy");
}

TEST_CASE("gpu: ops over more than 2^31 elements are correct (int64 indexing)") {
  KILN_REQUIRE_GPU();
  if (std::getenv("KILN_GPU_SKIP_HUGE")) {
    std::printf("%s KILN_GPU_SKIP_HUGE is set\n", kSkipMarker);
    return;
  }
  Options options;
  options.disk_cache = false;
  Runtime rt(options);
  Program program = rt.load_string(kSpec, "reliability.kiln");
  const std::int64_t kTwo31 = std::int64_t{1} << 31;

  SUBCASE("elementwise over 2^31 + 7 floats") {
    const std::int64_t n = kTwo31 + 7;
    if (!enough_memory(static_cast<std::size_t>(n) * 8 + (std::size_t{1} << 30))) return;
    Executable exe = program.op("big_affine").specialize({{"N", n}});
    CHECK(exe.source().find("using Index = long long") != std::string::npos);
    std::vector<float> host(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(i % 4093);
    DeviceBuffer x(host.size() * 4), y(host.size() * 4);
    x.upload(host);
    y.memset32(0x7fc00000u);   // NaN
    exe.launch(nullptr, {TensorRef(x.data(), DType::f32, {n}), TensorRef(y.data(), DType::f32, {n})});
    synchronize();
    y.download(host.data(), host.size() * 4);
    std::int64_t wrong = 0, first_wrong = -1;
    for (std::int64_t i = 0; i < n; ++i)
      if (host[static_cast<std::size_t>(i)] != static_cast<float>(2 * (i % 4093) + 1)) {
        if (first_wrong < 0) first_wrong = i;
        ++wrong;
      }
    std::printf("huge elementwise: %" PRId64 " elements, %" PRId64 " wrong\n", n, wrong);
    CHECK_MESSAGE(wrong == 0, "first wrong element " << first_wrong);
  }

  SUBCASE("row sums, column sums and row scans of i32[R, C] with R*C > 2^31") {
    struct Case {
      const char* op;
      std::int64_t rows, cols;
    };
    for (const Case c : {Case{"big_row_sum", 4, (kTwo31 >> 2) + 3}, Case{"big_col_sum", (std::int64_t{1} << 16) + 1, (std::int64_t{1} << 15) + 3},
                         Case{"big_row_scan", 2, (kTwo31 >> 1) + 1}}) {
      const std::int64_t n = c.rows * c.cols;
      REQUIRE(n > kTwo31);
      const bool scan = std::string(c.op) == "big_row_scan";
      const bool by_row = std::string(c.op) != "big_col_sum";
      const std::int64_t outputs = scan ? n : (by_row ? c.rows : c.cols);
      if (!enough_memory(static_cast<std::size_t>(n + outputs) * 4 + (std::size_t{1} << 30))) return;
      Executable exe = program.op(c.op).specialize({{"R", c.rows}, {"C", c.cols}});
      std::vector<std::int32_t> host(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = bit_at(i);
      DeviceBuffer x(host.size() * 4), y(static_cast<std::size_t>(outputs) * 4);
      x.upload(host);
      y.memset32(0x80000000u);
      std::vector<std::int64_t> out_shape = scan ? std::vector<std::int64_t>{c.rows, c.cols}
                                                 : std::vector<std::int64_t>{by_row ? c.rows : c.cols};
      exe.launch(nullptr, {TensorRef(x.data(), DType::i32, {c.rows, c.cols}), TensorRef(y.data(), DType::i32, out_shape)});
      synchronize();
      std::vector<std::int32_t> got(static_cast<std::size_t>(outputs));
      y.download(got.data(), got.size() * 4);
      std::int64_t wrong = 0, first_wrong = -1;
      auto expect = [&](std::int64_t at, std::int64_t value) {
        if (got[static_cast<std::size_t>(at)] != value) {
          if (first_wrong < 0) first_wrong = at;
          ++wrong;
        }
      };
      if (scan) {
        for (std::int64_t r = 0; r < c.rows; ++r) {
          std::int64_t run = 0;
          for (std::int64_t j = 0; j < c.cols; ++j) {
            run += host[static_cast<std::size_t>(r * c.cols + j)];
            expect(r * c.cols + j, run);
          }
        }
      } else if (by_row) {
        for (std::int64_t r = 0; r < c.rows; ++r) {
          std::int64_t sum = 0;
          for (std::int64_t j = 0; j < c.cols; ++j) sum += host[static_cast<std::size_t>(r * c.cols + j)];
          expect(r, sum);
        }
      } else {
        std::vector<std::int64_t> sums(static_cast<std::size_t>(c.cols), 0);
        for (std::int64_t r = 0; r < c.rows; ++r)
          for (std::int64_t j = 0; j < c.cols; ++j) sums[static_cast<std::size_t>(j)] += host[static_cast<std::size_t>(r * c.cols + j)];
        for (std::int64_t j = 0; j < c.cols; ++j) expect(j, sums[static_cast<std::size_t>(j)]);
      }
      std::string templates;
      for (const auto& k : exe.kernels()) templates += (templates.empty() ? "" : "+") + k.template_name;
      std::printf("huge %s [%" PRId64 ", %" PRId64 "] (%s): %" PRId64 " elements, %" PRId64 " outputs wrong\n", c.op,
                  c.rows, c.cols, templates.c_str(), n, wrong);
      CHECK_MESSAGE(wrong == 0, c.op << ": first wrong output " << first_wrong);
    }
  }
}

}  // namespace kiln::test
