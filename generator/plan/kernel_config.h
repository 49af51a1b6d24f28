// What the planner decides for one kernel: one typed config per template family, declared in
// templates/kiln/config/<family>.h (see the note in config.h). The planner sets
// PlannedKernel::config; the emitter dispatches on it with std::visit.
#pragma once

#include <string>
#include <variant>

#include "kiln/config/elementwise.h"
#include "kiln/config/gemm.h"
#include "kiln/config/conv.h"
#include "kiln/config/reduce.h"
#include "kiln/config/rownorm.h"
#include "kiln/config/scan.h"

namespace kiln {

// One alternative per family. std::monostate: the kernel's family has no typed config yet
// (the transition from PlannedKernel::params; removed when every family has one).
using KernelConfig = std::variant<std::monostate,
                                  ElementwiseConfig,
                                  GemmConfig,
                                  ConvConfig,
                                  ReduceConfig,
                                  ReduceFinishConfig,
                                  ReduceChainConfig,
                                  ScanConfig,
                                  RownormConfig>;

// "ElementwiseConfig{vec=4 threads=256}" (empty for std::monostate).
std::string config_text(const KernelConfig& config);

}  // namespace kiln
