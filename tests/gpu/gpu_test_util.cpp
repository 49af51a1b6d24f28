#include "gpu_test_util.h"

#include <optional>

#include "generator/frontend.h"
#include "generator/ir.h"

namespace kiln::test {

namespace {
constexpr const char* kNoTemplate = "has no kernel template";
}

CheckResult check_op(Runtime& rt, const std::string& spec_path, const std::string& op_name, const Bindings& bindings,
                     std::uint64_t seed) {
  CheckResult r;
  // The oracle's view of the same op, bound the same way.
  const SpecFile spec = load_spec_file(spec_path);
  auto ir = kiln::check_op(spec, op_name, bindings.consts);
  std::map<std::string, ir::DimValue> given;
  for (const auto& [name, value] : bindings.dims) given[name] = {value, "the test"};
  const ir::BoundIr bound = ir::bind(ir, given);

  std::optional<Executable> exe;
  try {
    exe.emplace(rt.load_file(spec_path).op(op_name).specialize(bindings));
  } catch (const Error& e) {
    if (std::string(e.what()).find(kNoTemplate) == std::string::npos) throw;
    r.note = e.what();
    return r;
  }
  const auto inputs = ref::random_inputs(bound, seed);
  const auto expected = ref::evaluate(bound, inputs);

  std::vector<DeviceMemory> memory;
  memory.reserve(inputs.size() + expected.size());
  std::vector<Arg> args;
  for (const auto& v : inputs) {
    if (!v.is_tensor) {
      const auto& s = v.scalar;
      if (dtype_is_float(s.dtype)) args.emplace_back(Scalar::of_f64(s.f, s.dtype));
      else if (s.dtype == DType::u64) args.emplace_back(Scalar::of_u64(s.u));
      else args.emplace_back(Scalar::of_i64(static_cast<std::int64_t>(s.u), s.dtype));
      continue;
    }
    const auto bytes = to_device_bytes(v.tensor);
    memory.emplace_back(std::max<std::size_t>(bytes.size(), 16));
    memory.back().upload(bytes);
    args.emplace_back(TensorRef(memory.back().data(), v.tensor.dtype, v.tensor.shape));
  }
  std::vector<std::size_t> output_memory;
  for (const auto& e : expected) {
    const std::size_t bytes = static_cast<std::size_t>(e.numel()) * dtype_size(e.dtype);
    memory.emplace_back(std::max<std::size_t>(bytes, 16));
    memory.back().fill(0xFF);   // poison: an unwritten element reads as NaN (or -1)
    output_memory.push_back(memory.size() - 1);
    args.emplace_back(TensorRef(memory.back().data(), e.dtype, e.shape));
  }
  exe->launch(nullptr, args);
  synchronize();
  r.ran = true;
  r.ok = true;
  for (std::size_t o = 0; o < expected.size(); ++o) {
    const auto& e = expected[o];
    auto bytes = memory[output_memory[o]].download();
    bytes.resize(static_cast<std::size_t>(e.numel()) * dtype_size(e.dtype));
    const auto got = from_device_bytes(e.dtype, e.shape, bytes);
    r.outputs.push_back(compare(got, e, Tolerance::for_dtype(e.dtype)));
    r.ok &= r.outputs.back().ok;
  }
  DeviceTimer timer;
  timer.start();
  exe->launch(nullptr, args);
  r.ms = timer.stop_ms();
  return r;
}

}  // namespace kiln::test
