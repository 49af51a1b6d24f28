#include "tools/capi/kiln_capi.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>

#include "kiln/kiln.h"

struct kiln_runtime {
  std::unique_ptr<kiln::Runtime> rt;
};
struct kiln_op {
  kiln::Op op;
};

namespace {

int fail(char* err, int err_len, const char* message) {
  if (err && err_len > 0) std::snprintf(err, static_cast<std::size_t>(err_len), "%s", message);
  return 1;
}

template <class F>
int guarded(char* err, int err_len, F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    return fail(err, err_len, e.what());
  }
}

kiln::Precision precision_of(const char* p) {
  if (!p || !*p || !std::strcmp(p, "fp32")) return kiln::Precision::fp32_accurate;
  if (!std::strcmp(p, "ieee")) return kiln::Precision::ieee;
  if (!std::strcmp(p, "tf32")) return kiln::Precision::tf32;
  if (!std::strcmp(p, "3xtf32")) return kiln::Precision::tf32x3;
  throw kiln::ArgumentError(std::string("unknown precision '") + p + "'");
}

}  // namespace

extern "C" {

int kiln_runtime_new(const char* arch, const char* cache_dir, kiln_runtime** out, char* err, int err_len) {
  return guarded(err, err_len, [&] {
    kiln::Options o;
    if (arch) o.arch = arch;
    if (cache_dir) o.cache_dir = cache_dir;
    *out = new kiln_runtime{std::make_unique<kiln::Runtime>(o)};
  });
}

void kiln_runtime_free(kiln_runtime* rt) { delete rt; }

int kiln_op_load(kiln_runtime* rt, const char* spec_path, const char* op_name, const char* precision, kiln_op** out,
                 char* err, int err_len) {
  return guarded(err, err_len, [&] {
    kiln::Op op = rt->rt->load_file(spec_path).op(op_name).with_precision(precision_of(precision));
    *out = new kiln_op{op};
  });
}

void kiln_op_free(kiln_op* op) { delete op; }

int kiln_op_with_const(kiln_op* op, const char* name, double value, kiln_op** out, char* err, int err_len) {
  return guarded(err, err_len, [&] { *out = new kiln_op{op->op.with_consts({{name, value}})}; });
}

int kiln_op_call(kiln_op* op, void* stream, int nargs, const int* is_tensor, void* const* data, const int* dtype,
                 const int* rank, const int64_t* shapes, const double* scalar_f, const uint64_t* scalar_u, char* err,
                 int err_len) {
  return guarded(err, err_len, [&] {
    std::vector<kiln::Arg> args;
    args.reserve(static_cast<std::size_t>(nargs));
    std::size_t at = 0;
    for (int i = 0; i < nargs; ++i) {
      const auto t = static_cast<kiln::DType>(dtype[i]);
      if (is_tensor[i]) {
        std::vector<std::int64_t> shape(shapes + at, shapes + at + rank[i]);
        at += static_cast<std::size_t>(rank[i]);
        args.emplace_back(kiln::TensorRef(data[i], t, std::move(shape)));
      } else if (kiln::dtype_is_float(t)) {
        args.emplace_back(kiln::Scalar::of_f64(scalar_f[i], t));
      } else if (t == kiln::DType::u64) {
        args.emplace_back(kiln::Scalar::of_u64(scalar_u[i]));
      } else {
        args.emplace_back(kiln::Scalar::of_i64(static_cast<std::int64_t>(scalar_u[i]), t));
      }
    }
    op->op(stream, args);
  });
}

void kiln_runtime_stats(kiln_runtime* rt, uint64_t out[4]) {
  const kiln::Stats s = rt->rt->stats();
  out[0] = s.memory_hits;
  out[1] = s.disk_hits;
  out[2] = s.compiles;
  out[3] = s.launches;
}

}  // extern "C"
