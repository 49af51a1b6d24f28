#include <new>
#include <sstream>
#include <system_error>

#include "kiln/kiln.h"

namespace kiln {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u64: return "u64";
    case DType::boolean: return "bool";
  }
  return "?";
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f64:
    case DType::i64:
    case DType::u64: return 8;
    case DType::boolean: return 1;
  }
  return 0;
}

bool dtype_is_float(DType dtype) {
  return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16 || dtype == DType::f64;
}

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::fp32_accurate: return "fp32-accurate";
    case Precision::ieee: return "ieee";
    case Precision::tf32: return "tf32";
    case Precision::tf32x3: return "3xtf32";
  }
  return "?";
}

std::int64_t TensorRef::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool TensorRef::contiguous() const {
  if (strides.empty()) return true;
  if (strides.size() != shape.size()) return false;
  std::int64_t expect = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

std::string CompileError::dump() const {
  std::ostringstream out;
  out << what() << "\n--- NVRTC log\n" << log_ << "\n--- options\n";
  for (const auto& o : options_) out << "  " << o << "\n";
  out << "--- source\n";
  std::istringstream in(source_);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    char num[16];
    std::snprintf(num, sizeof num, "%5d  ", n);
    out << num << line << "\n";
  }
  return out.str();
}

ExitCode exit_code_of(const std::exception& e) {
  if (dynamic_cast<const SpecError*>(&e) || dynamic_cast<const ArgumentError*>(&e) ||
      dynamic_cast<const UnsupportedError*>(&e))
    return ExitCode::input;
  if (dynamic_cast<const CompileError*>(&e)) return ExitCode::build;
  // std::system_error covers std::filesystem_error: a file-system call that failed.
  if (dynamic_cast<const CudaError*>(&e) || dynamic_cast<const IoError*>(&e) ||
      dynamic_cast<const std::bad_alloc*>(&e) || dynamic_cast<const std::system_error*>(&e))
    return ExitCode::device;
  return ExitCode::internal;
}

}  // namespace kiln
