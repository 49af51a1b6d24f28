// TMA tensor maps (sm_90): the 128-byte descriptors that a kernel's KernelArg::Kind::TensorMap
// parameters take by value, encoded on the host over a buffer's address at launch.
//
//   check_tensor_map(spec, DType::bf16);                     // every rule the driver imposes, no driver
//   TensorMapBytes m = encode_tensor_map(spec, DType::bf16, address, "matmul: 'a'");
//   void* params[] = {&m, ...};                              // cuLaunchKernel copies it
//
// [Note: the tensor-map cache]
// A map holds its tensor's address, so it is encoded per launch, not per plan. Encoding is a
// driver call of a few microseconds; a host loop calling one executable on the same buffers
// would pay it every time. TensorMapCache keeps the encoded bytes per (kernel, argument,
// address, dyn extent): the spec and dtype are fixed for a given kernel argument of one
// executable but for a dyn extent (KernelArg::map_dyn_dim), so these four name the map
// exactly, and no CUDA context enters (an encoding is plain host data over a unified virtual
// address). Scratch buffers move between launches (stream-ordered
// allocation), so the cache is bounded: it starts over when it would pass kMaxEntries.
// Lookups return the bytes by value (128 of them): a map another thread evicts meanwhile is
// never read after it is gone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "generator/plan/plan.h"
#include "kiln/kiln.h"

namespace kiln {

struct Driver;

// Checks `spec` over elements of `dtype` against every rule of cuTensorMapEncodeTiled (with
// interleave none, element strides 1), with no driver: rank 1..5; dims 1..2^32; rank - 1
// strides, each a positive multiple of 16 bytes below 2^40; rank box entries, each 1..256;
// box[0] * element bytes a multiple of 16 and, with a swizzle, at most the swizzle span;
// swizzle 0, 32, 64 or 128. An im2col spec (spec.im2col) is held to cuTensorMapEncodeIm2col's
// rules instead of the box ones: rank 3..5; box = {channels per pixel 1..256, pixels per column
// 1..1024}; rank - 2 pixel-box corners each, within +-2^15, +-2^7 or +-2^4 for rank 3, 4, 5, the
// box non-empty in every spatial dim; rank element strides, each 1..8. A tiled spec carrying
// corners or element strides is rejected. A broken rule is kiln's bug (the planner made the
// spec): InternalError naming the rule and the values. A dtype other than f32, f16 or bf16 is an
// UnsupportedError. (f32 maps are FLOAT32 maps; the tensor cores read them as tf32.)
void check_tensor_map(const TensorMapSpec& spec, DType dtype);

// Bytes from a map's address to just past its farthest element (saturating at INT64_MAX): the
// runtime checks that a map stays inside its buffer before it encodes one.
std::int64_t tensor_map_reach_bytes(const TensorMapSpec& spec, DType dtype);

// One encoded CUtensorMap, aligned as a `const __grid_constant__` kernel parameter needs.
struct alignas(64) TensorMapBytes {
  unsigned char bytes[128];
};

// Checks the spec, then that `address` is 16-byte aligned (else ArgumentError naming
// `tensor_name` and the address: the caller passed an offset view), then encodes with
// cuTensorMapEncodeTiled (or cuTensorMapEncodeIm2col for an im2col spec, with its corners,
// channels, pixels and element strides): interleave none, the spec's swizzle, L2 promotion
// 256 B, out-of-bounds elements read as zero, element strides 1 for a tiled map. `tensor_name`
// reads as in a message: "matmul: 'a'". CudaError when the driver fails it, or lacks the entry
// point (a driver before CUDA 12).
TensorMapBytes encode_tensor_map(const TensorMapSpec& spec, DType dtype, unsigned long long address,
                                 const std::string& tensor_name);
// The same through `driver`'s entry points (tests give one whose encoder is missing).
TensorMapBytes encode_tensor_map(const Driver& driver, const TensorMapSpec& spec, DType dtype,
                                 unsigned long long address, const std::string& tensor_name);

// Encoded maps of one executable; thread-safe (see the note above).
class TensorMapCache {
 public:
  static constexpr std::size_t kMaxEntries = 256;

  // The map of argument `arg` of kernel `kernel` over `address` (and, for a map with dyn extents,
  // the launch's `extents`: what sets its dims and strides; empty otherwise): encode() on a miss.
  template <class Encode>
  TensorMapBytes get(std::size_t kernel, std::size_t arg, unsigned long long address, Encode&& encode,
                     const std::vector<long long>& extents = {}) {
    {   // (looked up by reference: a hit copies no extents)
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = entries_.find(KeyRef{kernel, arg, address, extents}); it != entries_.end()) return it->second;
    }
    // Encoded unlocked: two threads missing together both encode, to the same bytes.
    const TensorMapBytes bytes = encode();
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= kMaxEntries) entries_.clear();
    entries_.insert_or_assign(Key{kernel, arg, address, extents}, bytes);
    return bytes;
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  struct Key {
    std::size_t kernel, arg;
    unsigned long long address;
    std::vector<long long> extents;
  };
  struct KeyRef {
    std::size_t kernel, arg;
    unsigned long long address;
    const std::vector<long long>& extents;
  };
  struct Less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::tie(a.kernel, a.arg, a.address, a.extents) < std::tie(b.kernel, b.arg, b.address, b.extents);
    }
  };
  mutable std::mutex mutex_;
  std::map<Key, TensorMapBytes, Less> entries_;
};

}  // namespace kiln
