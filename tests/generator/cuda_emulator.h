// A tiny CPU emulator of CUDA blocks, for testing the index, tail and barrier logic of the
// memory-bound templates on machines with no GPU.
//
// [Note: how the emulation works]
// Include this header BEFORE any template header. It compiles the templates as host C++:
// CUDA keywords become nothing (__shared__ becomes `static`: one copy per function
// instantiation, shared by every emulated thread, since all of them run on one OS thread),
// threadIdx/blockIdx/gridDim read the running fiber's coordinates, and each CUDA thread of a
// block is a ucontext fiber. Fibers run until they reach a __syncthreads (waits for every live
// thread of the block) or a warp collective (__shfl_*_sync, __ballot_sync: waits for the 32
// lanes of its warp, then exchanges through a slot per lane). A barrier that can never open
// (a real deadlock or a divergent collective) aborts with a message. Blocks run one after
// another in blockIdx order, so a look-back scan's predecessors are always finished.
// Memory-model intrinsics become plain accesses; vector loads become plain loads (alignment
// is still asserted, so a misaligned 16-byte access is caught). Named barriers
// (kiln::named_barrier_sync / _arrive) count arrivals per barrier id: a sync waits until the
// count reaches its thread count, an arrive does not wait; mbarriers (kiln::mbar_* on a
// pointer) count arrivals and flip their phase, a wait yields until its phase completes. Dynamic
// shared memory is a buffer of the launch's shared_bytes, filled with 0xFF bytes (NaN for floats) for each block, so that a
// template reading what it never wrote gets garbage, as on a GPU.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_types.h>
#include <ucontext.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#undef __device__
#undef __host__
#undef __global__
#undef __shared__
#undef __forceinline__
#undef __launch_bounds__
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

namespace emu {

struct Dim {
  unsigned x = 0, y = 0, z = 0;
};

enum class State { kRun, kWarpWait, kBlockWait, kNamedWait, kMbarWait, kDone };

struct Fiber {
  ucontext_t ctx{};
  Dim tid;
  State state = State::kRun;
  int named = -1;   // kNamedWait: the barrier id
  const unsigned long long* mbar = nullptr;   // kMbarWait: the mbarrier
  std::vector<char> stack;
};

struct NamedBarrier {
  unsigned count = 0;   // arrivals since it last opened
};

struct Machine {
  Dim block_idx, grid_dim, block_dim;
  std::vector<Fiber> fibers;
  Fiber* current = nullptr;
  ucontext_t scheduler{};
  std::function<void()> body;
  std::vector<unsigned long long> slots;   // one exchange slot per thread
  std::vector<std::array<unsigned, 6>> mma_slots;   // a thread's mma fragments (a0-a3, b0, b1)
  NamedBarrier named[16];
  std::vector<unsigned char> dynamic_smem;   // the launch's shared_bytes (16-byte aligned start)
};

inline Machine& machine() {
  static Machine m;
  return m;
}

inline void wait(State s) {
  Machine& m = machine();
  Fiber* self = m.current;
  self->state = s;
  swapcontext(&self->ctx, &m.scheduler);
}

inline void fiber_entry() {
  Machine& m = machine();
  m.body();
  m.current->state = State::kDone;
  swapcontext(&m.current->ctx, &m.scheduler);
}

inline unsigned thread_rank() { return machine().current->tid.x; }

// Runs `body` for every thread of every block of a 1-D block grid (grid may be 2-D).
inline void launch(Dim grid, unsigned threads, const std::function<void()>& body, unsigned shared_bytes = 0) {
  Machine& m = machine();
  m.dynamic_smem.assign(shared_bytes + 16, 0);
  m.grid_dim = grid;
  m.block_dim = Dim{threads, 1, 1};
  m.body = body;
  m.slots.assign(threads, 0);
  m.mma_slots.assign(threads, {});
  m.fibers.assign(threads, Fiber{});
  for (auto& f : m.fibers) f.stack.resize(64 * 1024);
  for (unsigned by = 0; by < (grid.y ? grid.y : 1); ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      m.block_idx = Dim{bx, by, 0};
      std::fill(m.dynamic_smem.begin(), m.dynamic_smem.end(), static_cast<unsigned char>(0xFF));
      for (auto& b : m.named) b = NamedBarrier{};
      for (unsigned t = 0; t < threads; ++t) {
        Fiber& f = m.fibers[t];
        f.tid = Dim{t, 0, 0};
        f.state = State::kRun;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.data();
        f.ctx.uc_stack.ss_size = f.stack.size();
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, fiber_entry, 0);
      }
      for (;;) {
        bool progressed = false;
        for (auto& f : m.fibers)
          if (f.state == State::kRun) {
            m.current = &f;
            swapcontext(&m.scheduler, &f.ctx);
            progressed = true;
          }
        // Open warp barriers whose live lanes all wait there.
        for (unsigned w = 0; w * 32 < threads; ++w) {
          bool all = true, any = false;
          for (unsigned l = w * 32; l < std::min(threads, w * 32 + 32); ++l) {
            const State s = m.fibers[l].state;
            if (s == State::kWarpWait) any = true;
            else if (s != State::kDone) all = false;
          }
          if (any && all) {
            for (unsigned l = w * 32; l < std::min(threads, w * 32 + 32); ++l)
              if (m.fibers[l].state == State::kWarpWait) m.fibers[l].state = State::kRun;
            progressed = true;
          }
        }
        if (progressed) continue;
        bool all_block = true, all_done = true;
        for (auto& f : m.fibers) {
          if (f.state != State::kDone) all_done = false;
          if (f.state != State::kBlockWait && f.state != State::kDone) all_block = false;
        }
        if (all_done) break;
        if (!all_block) {
          std::fprintf(stderr, "emu: deadlock in block (%u, %u): mixed warp/block/named barriers, or a named "
                       "barrier that never fills, or an mbarrier phase that never completes\n", bx, by);
          std::abort();
        }
        for (auto& f : m.fibers)
          if (f.state == State::kBlockWait) f.state = State::kRun;
      }
    }
}

template <class T>
inline T shuffle(T v, int src_lane, bool valid_src) {
  static_assert(sizeof(T) <= 8, "shuffle words only");
  Machine& m = machine();
  const unsigned me = thread_rank();
  unsigned long long word = 0;
  std::memcpy(&word, &v, sizeof(T));
  m.slots[me] = word;
  wait(State::kWarpWait);   // every lane has written
  const unsigned base = me & ~31u;
  unsigned long long got = valid_src ? m.slots[base + unsigned(src_lane)] : word;
  wait(State::kWarpWait);   // every lane has read
  T r;
  std::memcpy(&r, &got, sizeof(T));
  return r;
}

// bar.sync (wait) / bar.arrive on barrier `id` of `threads` threads.
inline void named_barrier(int id, int threads, bool wait_here) {
  Machine& m = machine();
  if (id < 1 || id > 15 || threads % 32 != 0) {
    std::fprintf(stderr, "emu: named barrier %d of %d threads: ids 1-15, a multiple of 32 threads\n", id, threads);
    std::abort();
  }
  NamedBarrier& b = m.named[id];
  if (++b.count == unsigned(threads)) {   // the barrier opens: its waiting fibers run
    b.count = 0;
    for (auto& f : m.fibers)
      if (f.state == State::kNamedWait && f.named == id) f.state = State::kRun;
    return;
  }
  if (!wait_here) return;
  m.current->named = id;
  wait(State::kNamedWait);
}
// mbarriers: the object holds its pending arrivals (bits 0-31), the arrivals a phase takes (32-62)
// and the phase's parity (63). The arrival that completes a phase flips the parity and runs the
// fibers waiting on it; a wait for the current parity waits.
inline void mbar_init(unsigned long long* bar, unsigned arrivals) {
  *bar = (static_cast<unsigned long long>(arrivals) << 32) | arrivals;
}
inline void mbar_arrive(unsigned long long* bar) {
  unsigned long long pending = (*bar & 0xffffffffull) - 1, phase = *bar >> 63;
  const unsigned long long arrivals = (*bar >> 32) & 0x7fffffffull;
  if (pending == 0) {
    pending = arrivals;
    phase ^= 1;
    for (auto& f : machine().fibers)
      if (f.state == State::kMbarWait && f.mbar == bar) f.state = State::kRun;
  }
  *bar = (phase << 63) | (arrivals << 32) | pending;
}
inline void mbar_wait(const unsigned long long* bar, unsigned parity) {
  while ((*bar >> 63) == parity) {
    machine().current->mbar = bar;
    wait(State::kMbarWait);
  }
}
// mma.sync.m16n8k8 with tf32 inputs (kiln::mma_tf32_16x8x8), a warp collective: every lane's
// fragments go to its slot, then each lane computes its four accumulators from the warp's A and B
// (mma.cuh's [Note: fragment layouts]). Inputs are read as the tensor cores read them (the low 13
// bits dropped); the eight products and the accumulator are summed in double and rounded to f32
// once (the hardware's own accumulation rounding, which [Note: the step's sums] in gemv_mma.cuh
// works around, is not modelled).
inline void mma_tf32_16x8x8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  Machine& m = machine();
  const unsigned me = thread_rank();
  m.mma_slots[me] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  wait(State::kWarpWait);   // every lane has written
  const unsigned base = me & ~31u, lane = me & 31u, g = lane >> 2, t = lane & 3u;
  auto tf32 = [](unsigned bits) {
    bits &= 0xffffe000u;
    float f;
    std::memcpy(&f, &bits, 4);
    return double(f);
  };
  for (unsigned r = 0; r < 4; ++r) {
    const unsigned row = g + 8 * (r >> 1), col = 2 * t + (r & 1);
    double sum = d[r];
    for (unsigned k = 0; k < 8; ++k) {
      const unsigned a_reg = (row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0), b_reg = 4 + (k >= 4 ? 1 : 0);
      sum += tf32(m.mma_slots[base + (row % 8) * 4 + k % 4][a_reg]) * tf32(m.mma_slots[base + col * 4 + k % 4][b_reg]);
    }
    d[r] = float(sum);
  }
  wait(State::kWarpWait);   // every lane has read
}

inline unsigned char* dynamic_smem() {
  unsigned char* p = machine().dynamic_smem.data();
  return p + ((16 - reinterpret_cast<unsigned long long>(p) % 16) % 16);
}

}  // namespace emu

#define KILN_EMU_NAMED_BARRIER(id, threads, wait) emu::named_barrier(id, threads, wait)
#define KILN_EMU_DYNAMIC_SMEM() emu::dynamic_smem()
#define KILN_EMU_MBAR_INIT(bar, arrivals) emu::mbar_init(bar, arrivals)
#define KILN_EMU_MBAR_ARRIVE(bar) emu::mbar_arrive(bar)
#define KILN_EMU_MBAR_WAIT(bar, parity) emu::mbar_wait(bar, parity)
#define KILN_EMU_MMA_TF32(d, a, b) emu::mma_tf32_16x8x8(d, a, b)

#define threadIdx (emu::machine().current->tid)
#define blockIdx (emu::machine().block_idx)
#define gridDim (emu::machine().grid_dim)
#define blockDim (emu::machine().block_dim)

inline void __syncthreads() { emu::wait(emu::State::kBlockWait); }
[[noreturn]] inline void __trap() { std::abort(); }
template <class T>
inline T __shfl_sync(unsigned, T v, int src) {
  return emu::shuffle(v, src & 31, true);
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, int mask) {
  return emu::shuffle(v, int((emu::thread_rank() & 31) ^ unsigned(mask)), true);
}
template <class T>
inline T __shfl_up_sync(unsigned, T v, int delta) {
  const int lane = int(emu::thread_rank() & 31);
  return emu::shuffle(v, lane - delta, lane >= delta);
}
template <class T>
inline T __shfl_down_sync(unsigned, T v, int delta) {
  // Like the hardware: a lane whose source is past lane 31 (or past the block) keeps its own value.
  const unsigned me = emu::thread_rank();
  const int lane = int(me & 31);
  const bool valid = lane + delta < 32 && (me & ~31u) + unsigned(lane + delta) < emu::machine().block_dim.x;
  return emu::shuffle(v, lane + delta, valid);
}
inline unsigned __ballot_sync(unsigned, int pred) {
  emu::Machine& m = emu::machine();
  const unsigned me = emu::thread_rank();
  m.slots[me] = pred ? 1 : 0;
  emu::wait(emu::State::kWarpWait);
  unsigned r = 0;
  const unsigned base = me & ~31u;
  for (unsigned l = 0; l < 32 && base + l < m.block_dim.x; ++l) r |= unsigned(m.slots[base + l]) << l;
  emu::wait(emu::State::kWarpWait);
  return r;
}
inline int __ffs(unsigned x) { return __builtin_ffs(int(x)); }
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  const unsigned old = *p;
  *p = old + v;
  return old;
}
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline double __longlong_as_double(long long i) {
  double d;
  std::memcpy(&d, &i, 8);
  return d;
}
template <class T>
inline T __ldg(const T* p) {
  if (sizeof(T) == 16 && (reinterpret_cast<std::uintptr_t>(p) & 15) != 0) {
    std::fprintf(stderr, "emu: misaligned 16-byte load\n");
    std::abort();
  }
  return *p;
}
template <class T>
inline T __ldcg(const T* p) {
  return *p;
}
template <class T>
inline void __stcs(T* p, T v) {
  if (sizeof(T) == 16 && (reinterpret_cast<std::uintptr_t>(p) & 15) != 0) {
    std::fprintf(stderr, "emu: misaligned 16-byte store\n");
    std::abort();
  }
  *p = v;
}
template <class T>
inline void __stwb(T* p, T v) {
  __stcs(p, v);   // the same checks; the cache policy means nothing here
}
template <class T>
inline void __stcg(T* p, T v) {
  *p = v;
}
