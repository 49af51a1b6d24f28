// The emitter: one CUDA C++ translation unit per planned kernel.
//
// Generated code instantiates, templates compute: a unit holds named constants,
// the functors synthesized from the spec's elementwise work (with a comment
// naming the spec line of each step), and the extern "C" entry, filled into
// templates/entry/kernel.cu.in by the strict substituter. Output depends only on
// the plan: byte-identical for identical input, whatever the locale.
#pragma once

#include <string>
#include <vector>

#include "generator/plan/plan.h"
#include "generator/emit/templates.h"

namespace kiln {

struct KernelSource {
  std::string entry;             // extern "C" symbol
  std::string template_name;
  std::string file_name;         // "relu_add_k0.cu", for NVRTC messages and dumps
  std::string text;
  Dim3 grid, block;
  unsigned shared_bytes = 0;
  std::vector<KernelArg> args;   // entry parameters, in order
};

std::vector<KernelSource> emit(const Plan& plan, const TemplateLibrary& templates);

// The version string baked into every unit (and so into every cache key).
const char* generator_version();

}  // namespace kiln
