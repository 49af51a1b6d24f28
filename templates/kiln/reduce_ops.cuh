// kiln/reduce_ops.cuh — combiner types shared by reduce.cuh, scan.cuh and rownorm.cuh.
//
// [Note: the combiner concept]
// A combiner names how values fold together; the emitter picks one by name
// (`kiln::SumOp<float>`, `kiln::ArgMaxOp<float, long long>`, ...). Each is a
// struct of static __device__ functions, with C the accumulation type
// (float for f32/f16/bf16 inputs, double for f64, or an integer type):
//
//   using Value  = ...;  // one element as the prologue hands it over (C)
//   using Acc    = ...;  // the running state (C, or a small POD struct)
//   using Result = ...;  // what finalize returns (C, or the index type for arg*)
//   static Acc    identity();                        // combine(identity(), a) == a
//   template <class I> static Acc accumulate(Acc a, Value v, I index);  // fold one element;
//                                                    // `index` is its position along the reduced axis
//   static Acc    combine(Acc a, Acc b);             // associative and commutative
//   template <class I> static Result finalize(Acc a, I count);  // count = reduced length
//
// Scans use the subset where Acc == Value (SumOp, ProdOp, MinOp, MaxOp):
// identity() and combine(). Every combine here is commutative, which lets the
// templates combine partials in tree order (deterministic, not sequential).
// Acc must be trivially copyable and a multiple of 4 bytes (it is shuffled 4
// bytes at a time and stored in shared memory and workspaces).
//
// NaN semantics follow PyTorch: min/max propagate NaN; argmin/argmax treat NaN
// as the extreme and return the first NaN's index; ties go to the first index;
// logsumexp of an all -inf row is -inf, with a +inf it is +inf, with a NaN NaN.
#pragma once

#include "kiln/common.cuh"

namespace kiln {

template <class C>
struct SumOp {
  using Value = C;
  using Acc = C;
  using Result = C;
  static __device__ __forceinline__ Acc identity() { return C(0); }
  template <class I> static __device__ __forceinline__ Acc accumulate(Acc a, Value v, I) { return a + v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a + b; }
  template <class I> static __device__ __forceinline__ Result finalize(Acc a, I) { return a; }
};

// Sum, divided by the reduced length once at the end.
template <class C>
struct MeanOp : SumOp<C> {
  template <class I> static __device__ __forceinline__ C finalize(C a, I count) { return a / C(count); }
};

template <class C>
struct ProdOp {
  using Value = C;
  using Acc = C;
  using Result = C;
  static __device__ __forceinline__ Acc identity() { return C(1); }
  template <class I> static __device__ __forceinline__ Acc accumulate(Acc a, Value v, I) { return a * v; }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return a * b; }
  template <class I> static __device__ __forceinline__ Result finalize(Acc a, I) { return a; }
};

template <class C>
struct MinOp {
  using Value = C;
  using Acc = C;
  using Result = C;
  static __device__ __forceinline__ Acc identity() { return Limits<C>::highest(); }
  template <class I> static __device__ __forceinline__ Acc accumulate(Acc a, Value v, I) { return min_prop(a, v); }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return min_prop(a, b); }
  template <class I> static __device__ __forceinline__ Result finalize(Acc a, I) { return a; }
};

template <class C>
struct MaxOp {
  using Value = C;
  using Acc = C;
  using Result = C;
  static __device__ __forceinline__ Acc identity() { return Limits<C>::lowest(); }
  template <class I> static __device__ __forceinline__ Acc accumulate(Acc a, Value v, I) { return max_prop(a, v); }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return max_prop(a, b); }
  template <class I> static __device__ __forceinline__ Result finalize(Acc a, I) { return a; }
};

// (value, index) state of argmin/argmax. I is the index type (int or long long).
template <class C, class I>
struct ArgAcc {
  C value;
  I index;
};

// kMax = false: argmin; true: argmax. `wins(a, b)`: a is the answer between a and b.
template <class C, class I, bool kMax>
struct ArgOp {
  using Value = C;
  using Acc = ArgAcc<C, I>;
  using Result = I;
  static __device__ __forceinline__ Acc identity() {
    // The identity's index is the largest, so any real element beats it on a tie.
    return Acc{kMax ? Limits<C>::lowest() : Limits<C>::highest(), Limits<I>::highest()};
  }
  static __device__ __forceinline__ bool wins(const Acc& a, const Acc& b) {
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    if (an || bn) return an && (!bn || a.index < b.index);   // NaN is the extreme; first NaN wins
    if (a.value == b.value) return a.index < b.index;         // ties: first index
    return kMax ? a.value > b.value : a.value < b.value;
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return wins(a, b) ? a : b; }
  template <class J> static __device__ __forceinline__ Acc accumulate(Acc a, Value v, J index) {
    return combine(a, Acc{v, I(index)});
  }
  template <class J> static __device__ __forceinline__ Result finalize(Acc a, J) { return a.index; }
};
template <class C, class I = long long> using ArgMinOp = ArgOp<C, I, false>;
template <class C, class I = long long> using ArgMaxOp = ArgOp<C, I, true>;

// Online log-sum-exp state: the row is exp(max) * sum.
template <class C>
struct LseAcc {
  C max;
  C sum;   // sum of exp(x - max)
};

// logsumexp, max-shifted and online (one exp per element).
template <class C>
struct LogSumExpOp {
  using Value = C;
  using Acc = LseAcc<C>;
  using Result = C;
  static __device__ __forceinline__ Acc identity() { return Acc{Limits<C>::lowest(), C(0)}; }
  template <class I> static __device__ __forceinline__ Acc accumulate(Acc a, Value v, I) {
    if (v > a.max) {                          // new maximum: rescale what we have
      a.sum = a.sum * exp_acc(a.max - v) + C(1);   // a.max - v is -inf for the identity: adds 0
      a.max = v;
    } else {
      // v == max covers inf == inf and -inf == -inf (exp(0) = 1, no inf - inf);
      // a NaN v fails both tests and poisons the sum (NaN propagates to the result).
      a.sum += exp_acc(v == a.max ? C(0) : v - a.max);
    }
    return a;
  }
  static __device__ __forceinline__ Acc combine(Acc a, Acc b) {
    if (a.max < b.max) { Acc t = a; a = b; b = t; }   // a.max >= b.max (max is never NaN)
    a.sum += b.sum * exp_acc(b.max == a.max ? C(0) : b.max - a.max);
    return a;
  }
  // -inf + log(anything >= 0) = -inf for an all -inf row; NaN sums give NaN.
  template <class I> static __device__ __forceinline__ Result finalize(Acc a, I) { return a.max + log_acc(a.sum); }
};

// ---- cooperative reductions of any combiner's Acc

// Every lane ends with the combination of all 32 lanes' values.
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc a) {
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) a = Op::combine(a, shfl_xor_any(a, m));
  return a;
}

// Every thread of the block ends with the block's combination. kThreads is the
// block size (a multiple of 32, at most 1024). Contains __syncthreads: all
// threads of the block must call it. Safe to call back to back (the leading
// barrier keeps a new call from overwriting slots an older call still reads).
template <class Op, int kThreads>
__device__ __forceinline__ typename Op::Acc block_reduce(typename Op::Acc a) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block size must be a multiple of 32, <= 1024");
  constexpr int kWarps = kThreads / 32;
  a = warp_reduce<Op>(a);
  if constexpr (kWarps == 1) {
    return a;
  } else {
    __shared__ typename Op::Acc slots[kWarps];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) slots[warp] = a;
    __syncthreads();
    a = lane < kWarps ? slots[lane] : Op::identity();
    return warp_reduce<Op>(a);   // each warp reduces the slots itself: no broadcast barrier
  }
}

}  // namespace kiln
