// Fuzzes code generation: every op of any input that parses and checks is bound at dims
// drawn from the input (small, so planning stays fast; sometimes the spec's defaults),
// planned for an arch drawn from the input, and emitted (no NVRTC). Each stage may refuse
// with a kiln::Error that says what is wrong; an InternalError (kiln's own bug), a crash, a
// sanitizer report or any other exception is a finding.
//
// Input layout: byte 0 picks the arch and whether defaults are used, bytes 1..8 seed the
// dims, the rest is the spec text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "generator/emit/emit.h"
#include "generator/frontend/frontend.h"
#include "generator/plan/plan.h"
#include "generator/emit/templates.h"

namespace {

constexpr std::size_t kHeader = 9;

const kiln::TemplateLibrary& library() {
  static const kiln::TemplateLibrary lib;
  return lib;
}

// Dim values 1..17 from the seed bytes, cycling: extents of 1 (broadcasting), odd sizes,
// and sizes around the vector widths.
std::map<std::string, kiln::ir::DimValue> small_dims(const kiln::ir::Ir& ir, const std::uint8_t* seed) {
  std::map<std::string, kiln::ir::DimValue> dims;
  std::size_t i = 0;
  for (const auto& d : ir.dims) {
    const std::uint8_t b = seed[i++ % 8];
    dims[d.name] = {1 + (b + static_cast<std::uint8_t>(i * 7)) % 17, "fuzz"};
  }
  return dims;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  static const char* const kArchs[] = {"sm_90", "sm_80", "sm_90a", "sm_86"};
  const kiln::Target target = kiln::Target::for_arch(kArchs[data[0] & 3]);
  const bool defaults = (data[0] & 4) != 0;
  std::string text(reinterpret_cast<const char*>(data + kHeader), size - kHeader);
  try {
    kiln::SpecFile spec = kiln::parse_spec(std::move(text), "fuzz.kiln");
    for (const auto& name : spec.op_names()) {
      try {
        auto ir = kiln::check_op(spec, name);
        auto bound = std::make_shared<const kiln::ir::BoundIr>(
            kiln::ir::bind(ir, defaults ? std::map<std::string, kiln::ir::DimValue>{} : small_dims(*ir, data + 1)));
        const kiln::Plan plan = kiln::make_plan(bound, target);
        (void)plan.text();
        (void)kiln::emit(plan, library());
      } catch (const kiln::InternalError&) {
        std::abort();   // kiln is wrong: a finding
      } catch (const kiln::Error&) {
      }
    }
  } catch (const kiln::InternalError&) {
    std::abort();
  } catch (const kiln::Error&) {
  }
  return 0;
}
