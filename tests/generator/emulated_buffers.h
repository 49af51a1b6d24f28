// Host buffers for the emulated template tests (cuda_emulator.h): random inputs and storage at a
// chosen offset from a 16-byte boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace emulated {

// n floats drawn uniformly from [lo, hi) by a generator seeded with `seed`.
inline std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = 0.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(gen);
  return v;
}

// A buffer of n floats (each `fill`) whose data starts `offset_elems` floats past a 16-byte boundary.
struct Buffer {
  std::vector<float> storage;
  float* data;
  Buffer(std::size_t n, int offset_elems, float fill = -12345.f) : storage(n + 8, fill) {
    auto base = reinterpret_cast<std::uintptr_t>(storage.data());
    float* aligned = reinterpret_cast<float*>((base + 15) & ~std::uintptr_t(15));
    data = aligned + offset_elems;
  }
};

}  // namespace emulated
