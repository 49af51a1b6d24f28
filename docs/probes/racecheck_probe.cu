// Does compute-sanitizer racecheck order shared-memory accesses through bar.arrive / bar.sync
// (the producer-consumer form of named barriers), and through mbarriers? Kernels of 2 to 9 warps,
// each ordered by PTX's barrier semantics; racecheck on each tells which orderings it models. The
// look-back scan's stage handshake moved to mbarriers on what this found ([Note: the look-back
// handshake] in templates/kiln/scan.cuh). Not built with kiln; on a GPU machine:
//   nvcc -std=c++17 -arch=sm_90a -lineinfo -o racecheck_probe docs/probes/racecheck_probe.cu
//   compute-sanitizer --tool racecheck ./racecheck_probe NAME   (NAME: a kernel below, or all)
// H100, CUDA 13.0, compute-sanitizer 2025.3.1 (2026-12-06): raw_arrive, war_arrive, raw_sync,
// ring_arrive and ring_8_b1_mbar 0 hazards; ring_8_b1, ring_8 and ring_1_b1 reported hazards
// (every kernel's result correct: out[0] = 42, 1, 42, 28, 780).
#include <cstdio>
#include <string_view>
__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }
// RAW: warp 1's lane 0 writes, warp 1 arrives; warp 0 syncs, then reads.
__global__ void raw_arrive(int* out) {
  __shared__ volatile int s;
  if (threadIdx.x / 32 == 1) { if (threadIdx.x == 32) s = 42; bar_arrive(1, 64); }
  else { bar_sync(1, 64); out[threadIdx.x] = s; }
}
// WAR: warp 0 reads, arrives; warp 1 syncs, then lane 0 writes.
__global__ void war_arrive(int* out) {
  __shared__ volatile int s;
  if (threadIdx.x == 0) s = 1;
  __syncthreads();
  if (threadIdx.x / 32 == 0) { out[threadIdx.x] = s; bar_arrive(2, 64); }
  else { bar_sync(2, 64); if (threadIdx.x == 32) s = 7; }
}
// Control: the RAW with bar.sync on both sides.
__global__ void raw_sync(int* out) {
  __shared__ volatile int s;
  if (threadIdx.x == 32) s = 42;
  bar_sync(1, 64);
  if (threadIdx.x < 32) out[threadIdx.x] = s;
}
// The look-back scan's handshake in miniature (kiln/scan.cuh, scan_rows_lookback_ws): warp 0
// (the producer) fills slot[s] of kStages, arrives on barrier 1 + s; warp 1 (the walker) syncs
// there, reads the slot, arrives on barrier 1 + kStages + s; the producer syncs there before it
// refills the slot a round later. Rounds of 3 stages, 8 tiles.
__global__ void ring_arrive(int* out) {
  constexpr int kStages = 3, kTiles = 8, kAll = 64;
  __shared__ volatile int slot[kStages];
  if (threadIdx.x / 32 == 1) {
    int sum = 0;
    for (int k = 0;; ++k) {
      const int s = k % kStages;
      bar_sync(1 + s, kAll);
      const int v = slot[s];
      if (v < 0) break;
      sum += v;
      bar_arrive(1 + kStages + s, kAll);
    }
    if (threadIdx.x == 32) out[0] = sum;
    return;
  }
  bool held[kStages] = {};
  for (int k = 0;; ++k) {
    const int s = k % kStages;
    if (held[s]) bar_sync(1 + kStages + s, kAll);
    if (threadIdx.x == 0) slot[s] = k < kTiles ? k : -1;
    bar_arrive(1 + s, kAll);
    held[s] = true;
    if (k >= kTiles) break;
  }
}
// ring_arrive at the scan's size: kWarps producer warps (kB1: that first meet on their own barrier
// 1, a partial-CTA barrier where kWarps < the block's), thread 0 filling the slot; one more warp
// walks. kMbar: the handshake through mbarriers instead (thread 0 and the walker's lane 0 arrive).
template <int kWarps, bool kB1, bool kMbar>
__global__ void ring(int* out) {
  constexpr int kStages = 3, kTiles = 40, kAll = 32 * kWarps + 32;
  __shared__ volatile long long slot[kStages];
  __shared__ volatile unsigned claim;
  __shared__ alignas(8) unsigned long long bars[2 * kStages];   // full[s], empty[s]
  const unsigned full0 = unsigned(__cvta_generic_to_shared(&bars[0]));
  auto bar_of = [&](int i) { return full0 + 8u * unsigned(i); };
  if (kMbar) {
    if (threadIdx.x == 0)
      for (int i = 0; i < 2 * kStages; ++i) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_of(i)) : "memory");
    __syncthreads();
  }
  auto wait = [&](int i, unsigned parity) {
    unsigned ok = 0;
    while (!ok)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                   : "=r"(ok) : "r"(bar_of(i)), "r"(parity) : "memory");
  };
  auto arrive = [&](int i) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar_of(i)) : "memory"); };
  if (threadIdx.x / 32 == kWarps) {
    const int lane = threadIdx.x & 31;
    long long sum = 0;
    for (int k = 0;; ++k) {
      const int s = k % kStages;
      long long v;
      if (kMbar) {
        wait(s, (k / kStages) & 1);
        v = 0;
        if (lane == 0) v = slot[s];
        v = __shfl_sync(0xffffffffu, v, 0);
      } else {
        bar_sync(2 + s, kAll);
        v = slot[s];
      }
      if (v < 0) break;
      sum += v;
      if (kMbar) { if (lane == 0) arrive(kStages + s); }
      else bar_arrive(2 + kStages + s, kAll);
    }
    if (lane == 0) out[0] = int(sum);
    return;
  }
  bool held[kStages] = {};
  for (int k = 0;; ++k) {
    const int s = k % kStages;
    if (held[s]) {
      if (kMbar) wait(kStages + s, ((k / kStages) - 1) & 1);
      else bar_sync(2 + kStages + s, kAll);
    }
    int id = k;
    if (kB1) {
      if (threadIdx.x == 0) claim = k;
      bar_sync(1, 32 * kWarps);
      id = claim;
      bar_sync(1, 32 * kWarps);   // every producer has read claim before thread 0 writes it again
    }
    if (threadIdx.x == 0) slot[s] = id < kTiles ? id : -1;
    if (kMbar) { if (threadIdx.x == 0) arrive(s); }
    else bar_arrive(2 + s, kAll);
    held[s] = true;
    if (id >= kTiles) break;
  }
}
int main(int argc, char** argv) {
  int* d;
  cudaMalloc(&d, 64 * sizeof(int));
  const char* which = argc > 1 ? argv[1] : "all";
  auto run = [&](const char* name, void (*k)(int*)) {
    if (std::string_view(which) != "all" && std::string_view(which) != name) return;
    const std::string_view n(name);
    k<<<2, n.substr(0, 6) == "ring_8" ? 288 : 64>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
    int h = 0;
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("%s: %s, out[0] = %d\n", name, cudaGetErrorString(e), h);
  };
  run("raw_arrive", raw_arrive);
  run("war_arrive", war_arrive);
  run("raw_sync", raw_sync);
  run("ring_arrive", ring_arrive);
  run("ring_8_b1", ring<8, true, false>);     // the scan's form
  run("ring_8", ring<8, false, false>);       // no partial barrier
  run("ring_1_b1", ring<1, true, false>);     // one producer warp, its own barrier
  run("ring_8_b1_mbar", ring<8, true, true>); // through mbarriers
  return 0;
}
