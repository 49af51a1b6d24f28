// What the planner decides for one kernel: one typed config per template family, declared in
// templates/kiln/config/<family>.h (see the note in config.h). The planner sets
// PlannedKernel::config; the emitter dispatches on it with std::visit.
#pragma once

#include <string>
#include <variant>

#include "kiln/config/elementwise.h"
#include "kiln/config/reduce.h"
#include "kiln/config/rownorm.h"
#include "kiln/config/scan.h"
#include "kiln/config/gemm.h"
#include "kiln/config/conv.h"
#include "kiln/config/pool.h"
#include "kiln/config/attention.h"

namespace kiln {

// One alternative per family. std::monostate: not set yet (a plan rule that forgets to set its
// config is an internal error at emission, not a kernel of some default family).
using KernelConfig = std::variant<std::monostate,
                                  ElementwiseConfig,
                                  ReduceConfig,
                                  ReduceFinishConfig,
                                  ReduceChainConfig,
                                  ScanConfig,
                                  RownormConfig,
                                  GemmConfig,
                                  ConvConfig,
                                  PoolConfig,
                                  AttentionConfig>;

// "ElementwiseConfig{vec=4 threads=256}" ("(no config)" for std::monostate).
std::string config_text(const KernelConfig& config);

}  // namespace kiln
