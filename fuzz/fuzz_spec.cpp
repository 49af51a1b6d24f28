// Fuzzes the spec front end: any bytes must parse or fail with kiln::Error;
// every op that checks must print and bind at its default dims (or fail with
// kiln::Error). Anything else (a crash, a sanitizer report, another exception
// escaping) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "generator/frontend/frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    kiln::SpecFile spec = kiln::parse_spec(std::move(text), "fuzz.kiln");
    std::vector<std::string> warnings;
    for (const auto& name : spec.op_names()) {
      try {
        auto ir = kiln::check_op(spec, name, {}, &warnings);
        (void)kiln::ir::print(*ir);
        (void)ir->signature();
        kiln::ir::BoundIr bound = kiln::ir::bind(ir, {});
        (void)kiln::ir::print(bound);
      } catch (const kiln::Error&) {
      }
    }
    try {
      (void)kiln::check_all(spec);
    } catch (const kiln::Error&) {
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
