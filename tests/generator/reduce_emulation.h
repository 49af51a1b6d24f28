// A strided reduction or scan launched as a plan says, run on the CPU (cuda_emulator.h): the bridge between
// the planner's tests and the emulated templates, which cannot share a translation unit (the host
// API's kiln::i32 and the device templates' differ). Defined in test_dyn_inner_emulated.cpp.
#pragma once

#include <vector>

#include "templates/kiln/config/reduce.h"
#include "templates/kiln/config/scan.h"

namespace reduce_emulation {

// One launch of a planned strided reduction (reduce_outer's variants) and its reduce_finish.
struct Launch {
  kiln::ReduceConfig config;   // the planned config (its numbers instantiate the template)
  long long grid_x = 0, grid_y = 0;   // the launch's grid (grid_y: its split count)
  long long chunk = 0;                // reduced steps a split sweeps
  int finish_threads = 0, finish_lanes = 0;   // reduce_finish's (when split)
  long long finish_grid_x = 0;
};

// Runs `l` over x viewed as [outer, red, inner] (16-byte aligned) with a sum or a max (NaN
// propagates), the output poisoned first; returns the outer * inner results.
std::vector<float> run(const Launch& l, bool max, const float* x, int outer, int red, int inner);

// One launch of a planned strided scan (scan_strided, after scan_strided_totals when the launch
// cuts the axis into chunks) on the launch's grid `g` (its grid.y the chunks; with per-launch
// chunks, each chunk's steps cut as the generated body does): an inclusive cumsum, or with
// `reverse` a reverse cummax, over x viewed as [outer, len, inner].
std::vector<float> run_scan(const kiln::ScanConfig& config, const kiln::launch::Geometry& g, bool reverse,
                            const float* x, int outer, int len, int inner);

}  // namespace reduce_emulation
