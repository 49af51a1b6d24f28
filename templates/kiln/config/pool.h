// kiln/config/pool.h — the pooling family (pool.cuh): max_pool / avg_pool over the last 1, 2 or 3
// axes, one output element a thread step, through an optional prologue (the operand inlined
// per load) and the fused epilogue. See config.h for the pattern.
#pragma once

#include "kiln/config/elementwise.h"

namespace kiln {

// The input seen as [planes, in_d, in_h, in_w] and the output as [planes, out_d, out_h, out_w],
// right-aligned: a 2-d pool has in_d = out_d = 1 (and kernel_d = stride_d = dilation_d = 1,
// padding_d = 0), a 1-d pool also in_h = out_h = 1. Window positions along an axis:
// o * stride - padding + j * dilation for j < kernel ([Note: pooling] in checker.cpp).
#define KILN_POOL_FIELDS(X)                                                                          \
  X(int, threads, 256)         /* block size */                                                      \
  X(bool, max, true)           /* max_pool (NaN-propagating), else avg_pool */                       \
  X(long long, planes, 1)      /* elements of the leading (batch, channel) axes */                   \
  X(long long, in_d, 1) X(long long, in_h, 1) X(long long, in_w, 1)                                  \
  X(long long, out_d, 1) X(long long, out_h, 1) X(long long, out_w, 1)                               \
  X(int, kernel_d, 1) X(int, kernel_h, 1) X(int, kernel_w, 1)                                        \
  X(int, stride_d, 1) X(int, stride_h, 1) X(int, stride_w, 1)                                        \
  X(int, padding_d, 0) X(int, padding_h, 0) X(int, padding_w, 0)                                    \
  X(int, dilation_d, 1) X(int, dilation_h, 1) X(int, dilation_w, 1)                                  \
  X(bool, include_pad, true)   /* avg: divide by the window clipped to the padded input */           \
  X(int, divisor, 0)           /* avg: divisor_override, 0 for none */                               \
  X(int, run, 1)               /* adjacent outputs along w a thread step computes (pool_run) */
KILN_CONFIG(PoolConfig, KILN_POOL_FIELDS);

KILN_RULE constexpr long long pool_outputs(const PoolConfig& c) { return c.planes * c.out_d * c.out_h * c.out_w; }

// Outputs along w per thread step: a run of 4 adjacent outputs loads each input column of its
// windows once a row, in registers, instead of once per window. Measured on an H100
// (bench/results/2026-11-27-h100-run18/ and -run19/): max pools with stride 1 along w gain (KernelBench 42,
// 2-d k4: 4.70 -> 2.36 ms; 41, 1-d k8 d3: 3.66 -> 3.32), while avg pools and strided windows
// lose (44, avg 1-d k8 s1: 2.21 -> 3.47; 43, max 3-d s2 d3: 2.46 -> 3.05; 46, avg 3-d s2: 4.46 ->
// 5.44): a run's loads are 16 bytes apart across a warp, not contiguous. So runs for stride-1
// max pools only; the template takes any run.
// Window extents up to kPoolUnrolled are unrolled whole (every load of a window in flight);
// longer ones loop, 4 positions a step: NVRTC took 4 minutes to unroll a 16384-wide window.
// A run's columns are held in registers only up to kPoolUnrolled of them.
constexpr int kPoolUnrolled = 64;
KILN_RULE constexpr int pool_unroll(int extent) { return extent <= kPoolUnrolled ? extent : 4; }
// Input columns a run of `run` outputs spans: (run - 1) * stride + dilation * (kernel - 1) + 1.
KILN_RULE constexpr long long pool_span(int run, int kernel_w, int stride_w, int dilation_w) {
  return (run - 1) * (long long)stride_w + dilation_w * (long long)(kernel_w - 1) + 1;
}
KILN_RULE constexpr int pool_run(bool max, long long out_w, int kernel_w, int stride_w, int dilation_w) {
  return max && stride_w == 1 && out_w >= 4 && pool_span(4, kernel_w, stride_w, dilation_w) <= kPoolUnrolled ? 4 : 1;
}
KILN_RULE constexpr long long pool_run_span(const PoolConfig& c) {
  return pool_span(c.run, c.kernel_w, c.stride_w, c.dilation_w);
}
// Thread steps: one per run of outputs along w (the last run of a row may be short).
KILN_RULE constexpr long long pool_steps(const PoolConfig& c) {
  return c.planes * c.out_d * c.out_h * launch::ceil_div(c.out_w, c.run);
}

// The launch: a thread step per run of outputs, grid-stride, sized as the elementwise family's
// scalar loop (a gather of one window per output; overlapping windows hit in L1/L2).
KILN_RULE constexpr launch::Geometry pool_geometry(const PoolConfig& c) {
  return launch::stream_geometry(pool_steps(c), c.threads);
}

}  // namespace kiln
