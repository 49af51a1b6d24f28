#include "runtime/host_tensor.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "generator/support/assert.h"

namespace kiln {

std::uint16_t float_to_half_bits(float v) {
  std::uint32_t x;
  std::memcpy(&x, &v, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);   // overflow to inf
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);            // underflow to zero
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    const std::uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;     // may carry into the exponent: correct
  return static_cast<std::uint16_t>(sign | half);
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  std::uint32_t x = exp == 31 ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13));
  std::memcpy(&f, &x, 4);
  return f;
}

std::uint16_t float_to_bf16_bits(float v) {
  std::uint32_t x;
  std::memcpy(&x, &v, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);   // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

float bf16_bits_to_float(std::uint16_t h) {
  std::uint32_t x = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::vector<char> to_device_bytes(const ref::HostTensor& t) {
  const std::size_t size = dtype_size(t.dtype);
  std::vector<char> out(t.data.size() * size);
  for (std::size_t i = 0; i < t.data.size(); ++i) {
    char* p = out.data() + i * size;
    const double v = t.data[i];
    switch (t.dtype) {
      case DType::f32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
      case DType::f64: std::memcpy(p, &v, 8); break;
      case DType::f16: { auto h = float_to_half_bits(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
      case DType::bf16: { auto h = float_to_bf16_bits(static_cast<float>(v)); std::memcpy(p, &h, 2); break; }
      case DType::i32: { auto x = static_cast<std::int32_t>(v); std::memcpy(p, &x, 4); break; }
      case DType::i64: { auto x = static_cast<std::int64_t>(v); std::memcpy(p, &x, 8); break; }
      case DType::u64: { auto x = static_cast<std::uint64_t>(v); std::memcpy(p, &x, 8); break; }
      case DType::boolean: *p = v != 0 ? 1 : 0; break;
    }
  }
  return out;
}

ref::HostTensor from_device_bytes(DType dtype, std::vector<std::int64_t> shape, const std::vector<char>& bytes) {
  ref::HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const std::size_t size = dtype_size(dtype);
  KILN_ASSERT(bytes.size() % size == 0, "byte count {} is not a multiple of {}", bytes.size(), size);
  t.data.resize(bytes.size() / size);
  for (std::size_t i = 0; i < t.data.size(); ++i) {
    const char* p = bytes.data() + i * size;
    switch (dtype) {
      case DType::f32: { float f; std::memcpy(&f, p, 4); t.data[i] = f; break; }
      case DType::f64: std::memcpy(&t.data[i], p, 8); break;
      case DType::f16: { std::uint16_t h; std::memcpy(&h, p, 2); t.data[i] = half_bits_to_float(h); break; }
      case DType::bf16: { std::uint16_t h; std::memcpy(&h, p, 2); t.data[i] = bf16_bits_to_float(h); break; }
      case DType::i32: { std::int32_t x; std::memcpy(&x, p, 4); t.data[i] = x; break; }
      case DType::i64: { std::int64_t x; std::memcpy(&x, p, 8); t.data[i] = static_cast<double>(x); break; }
      case DType::u64: { std::uint64_t x; std::memcpy(&x, p, 8); t.data[i] = static_cast<double>(x); break; }
      case DType::boolean: t.data[i] = *p ? 1 : 0; break;
    }
  }
  return t;
}

namespace {
// A scalar argument as the reference reads the param: converted as a launch converts it
// (runtime.cpp's scalar_value), with i64 and u64 bit patterns kept exact.
ref::HostValue host_scalar(const Scalar& s, DType want) {
  const bool from_float = dtype_is_float(s.dtype);
  const double as_double = from_float ? s.value.f : s.dtype == DType::u64 ? static_cast<double>(s.value.u)
                                                                            : static_cast<double>(s.value.i);
  if (want == DType::u64 || want == DType::i64)
    return ref::make_scalar_bits(want, from_float ? static_cast<std::uint64_t>(static_cast<std::int64_t>(s.value.f))
                                                  : s.value.u);
  return ref::make_scalar(want, want == DType::boolean ? (as_double != 0 ? 1.0 : 0.0) : as_double);
}
}  // namespace

void evaluate_on_host(const ir::BoundIr& bound, const Arg* args, std::size_t count) {
  const ir::Ir& ir = *bound.ir;
  KILN_ASSERT(count == ir.params.size() + ir.outputs.size(), "{} arguments for {}", count, ir.op_name);
  std::vector<ref::HostValue> inputs;
  for (std::size_t i = 0; i < ir.params.size(); ++i) {
    if (!args[i].is_tensor()) {
      inputs.push_back(host_scalar(args[i].scalar(), ir.params[i].dtype));
      continue;
    }
    const TensorRef& t = args[i].tensor();
    const char* bytes = static_cast<const char*>(t.data);
    const std::vector<char> copy(bytes, bytes + t.numel() * static_cast<std::int64_t>(dtype_size(t.dtype)));
    ref::HostValue v;
    v.tensor = from_device_bytes(t.dtype, t.shape, copy);
    inputs.push_back(std::move(v));
  }
  const std::vector<ref::HostTensor> outputs = ref::evaluate(bound, inputs);
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const std::vector<char> bytes = to_device_bytes(outputs[o]);
    std::memcpy(args[ir.params.size() + o].tensor().data, bytes.data(), bytes.size());
  }
}

Tolerance Tolerance::for_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32: return {1e-4, 1e-4, 1e-5};
    case DType::f16:
    case DType::bf16: return {1e-2, 1e-2, 1e-2};
    case DType::f64: return {1e-9, 1e-9, 1e-12};
    default: return {0, 0, 0};
  }
}

Tolerance Tolerance::tf32() { return {1e-2, 1e-2, 5e-3}; }

Tolerance Tolerance::exact() { return {0, 0, 0}; }

Comparison compare(const ref::HostTensor& got, const ref::HostTensor& expected, const Tolerance& tol) {
  Comparison c;
  if (got.shape != expected.shape || got.data.size() != expected.data.size()) {
    c.ok = false;
    c.detail = fmt::format("shape [{}] differs from the reference's [{}]", fmt::join(got.shape, ", "),
                           fmt::join(expected.shape, ", "));
    return c;
  }
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < got.data.size(); ++i) {
    const double g = got.data[i], e = expected.data[i];
    bool bad;
    double d = 0;
    if (std::isnan(e) || std::isnan(g)) {
      bad = std::isnan(e) != std::isnan(g);
    } else if (std::isinf(e) || std::isinf(g)) {
      bad = g != e;
    } else {
      d = std::fabs(g - e);
      bad = d > tol.atol + tol.rtol * std::fabs(e);
      diff2 += d * d;
      ref2 += e * e;
      c.max_abs_error = std::max(c.max_abs_error, d);
      c.max_rel_error = std::max(c.max_rel_error, d / std::max(std::fabs(e), 1e-30));
    }
    if (bad) {
      if (c.first_bad < 0) {
        c.first_bad = static_cast<std::int64_t>(i);
        c.detail = fmt::format("element {}: got {}, expected {}", i, g, e);
      }
      ++c.mismatches;
    }
  }
  c.norm_rel_error = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const bool norm_bad = tol.norm_rel > 0 && ref2 > 0 && c.norm_rel_error > tol.norm_rel;
  c.ok = c.mismatches == 0 && !norm_bad;
  if (c.mismatches == 0 && norm_bad)
    c.detail = fmt::format("norm-wise relative error {:.3g} exceeds {:.3g}", c.norm_rel_error, tol.norm_rel);
  else if (c.mismatches > 0)
    c.detail = fmt::format("{} of {} elements outside atol={} rtol={}; first: {}", c.mismatches, got.data.size(),
                           tol.atol, tol.rtol, c.detail);
  return c;
}

}  // namespace kiln
