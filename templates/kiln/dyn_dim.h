// kiln/dyn_dim.h — a dyn dim as a kernel argument: its value, with the constants of a 32-bit
// division by it. Plain constexpr C++ with no includes but launch_rules.h, so the runtime (which
// fills the argument) and NVRTC units (which read it through kiln::DynExtent, kiln/common.cuh)
// share one rule.
#pragma once

#include "kiln/launch_rules.h"

namespace kiln {

// [Note: division constants on the host]
// kiln::DynExtent divides a 32-bit index by a dyn extent with a multiply-high and a shift ([Note:
// dividing by a dyn extent] in kiln/common.cuh). Their constants need a 64-bit division, which a
// GPU runs as a subroutine of about a hundred instructions. Computed where each thread builds its
// functor, that cost came once per thread: relu(a + b) over 16384 x 16383 floats with a dyn
// innermost extent (one element a thread) ran 1.68x its specialized kernel, and at 16388 (four
// elements a thread) 1.036x (bench/results/2026-12-02-h200-run9/). The runtime computes them once
// per launch instead (dyn_dim_arg), and a kernel takes each dyn dim as this 16-byte argument.
struct DynDim {
  long long value;         // the dim's value at this launch (>= 1)
  unsigned magic, shift;   // n / value = (umulhi(n, magic) + n) >> shift for 0 <= n < 2^31; 0 past 2^32
  // The entry reads it as the value (static_cast<Index>(dim_N), extents' products).
  KILN_RULE constexpr operator long long() const { return value; }
};

static_assert(sizeof(DynDim) == 16, "the runtime fills a 16-byte kernel argument");

// For d >= 1: shift = ceil(log2 d), magic = floor(2^32 (2^shift - d) / d) + 1 (Granlund and
// Montgomery, "Division by invariant integers using multiplication", 1994). A value of 2^32 or more
// is only ever read by 64-bit indexing, which divides as usual: its constants stay 0.
KILN_RULE constexpr DynDim dyn_dim_arg(long long d) {
  DynDim a{d, 0u, 0u};
  if (d < 1 || d > 0xffffffffLL) return a;
  const unsigned long long u = static_cast<unsigned long long>(d);
  unsigned s = 0;
  while ((1ull << s) < u) ++s;
  a.shift = s;
  a.magic = static_cast<unsigned>((((1ull << s) - u) << 32) / u + 1);
  return a;
}

}  // namespace kiln
