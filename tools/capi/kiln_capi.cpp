#include "tools/capi/kiln_capi.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

#include "kiln/kiln.h"

struct kiln_runtime {
  std::unique_ptr<kiln::Runtime> rt;
};
struct kiln_op {
  kiln::Op op;
};

namespace {

// The return code is the CLI's exit code for the same failure (kiln::ExitCode).
int fail(char* err, int err_len, const char* message, kiln::ExitCode code) {
  if (err && err_len > 0) std::snprintf(err, static_cast<std::size_t>(err_len), "%s", message);
  return static_cast<int>(code);
}

// A malformed call of this interface itself (a NULL where a value is needed, a dtype code
// out of range): KILN_ERROR_USAGE, like a malformed option of the CLI.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

void require(bool ok, const char* what) {
  if (!ok) throw UsageError(std::string("kiln C interface: ") + what);
}

template <class F>
int guarded(char* err, int err_len, F&& f) {
  try {
    f();
    return KILN_OK;
  } catch (const UsageError& e) {
    return fail(err, err_len, e.what(), kiln::ExitCode::usage);
  } catch (const std::exception& e) {
    return fail(err, err_len, e.what(), kiln::exit_code_of(e));
  } catch (...) {
    return fail(err, err_len, "kiln: unknown exception (a bug in kiln)", kiln::ExitCode::internal);
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
    require(out != nullptr, "kiln_runtime_new: out is NULL");
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
    require(rt != nullptr && spec_path != nullptr && op_name != nullptr && out != nullptr,
            "kiln_op_load: rt, spec_path, op_name and out must not be NULL");
    kiln::Op op = rt->rt->load_file(spec_path).op(op_name).with_precision(precision_of(precision));
    *out = new kiln_op{op};
  });
}

void kiln_op_free(kiln_op* op) { delete op; }

int kiln_op_with_const(kiln_op* op, const char* name, double value, kiln_op** out, char* err, int err_len) {
  // C passes every const as a double: a whole number is an integer (an int const takes
  // integers only; a float const takes either; a bool const takes 0 or 1).
  const bool whole = std::trunc(value) == value && std::fabs(value) < 9223372036854775808.0;
  const kiln::ConstValue v = whole ? kiln::ConstValue(static_cast<long long>(value)) : kiln::ConstValue(value);
  return guarded(err, err_len, [&] {
    require(op != nullptr && name != nullptr && out != nullptr, "kiln_op_with_const: op, name and out must not be NULL");
    *out = new kiln_op{op->op.with_consts({{name, v}})};
  });
}

int kiln_op_call(kiln_op* op, void* stream, int nargs, const int* is_tensor, void* const* data, const int* dtype,
                 const int* rank, const int64_t* shapes, const double* scalar_f, const uint64_t* scalar_u, char* err,
                 int err_len) {
  return guarded(err, err_len, [&] {
    require(op != nullptr && nargs >= 0 && (nargs == 0 || (is_tensor && dtype)),
            "kiln_op_call: op, is_tensor and dtype must not be NULL, nargs not negative");
    std::vector<kiln::Arg> args;
    args.reserve(static_cast<std::size_t>(nargs));
    std::size_t at = 0;
    for (int i = 0; i < nargs; ++i) {
      require(dtype[i] >= 0 && dtype[i] <= static_cast<int>(kiln::DType::boolean), "kiln_op_call: a dtype code is out of range");
      const auto t = static_cast<kiln::DType>(dtype[i]);
      require(is_tensor[i] ? (data && rank && shapes && rank[i] >= 0) : (kiln::dtype_is_float(t) ? scalar_f != nullptr : scalar_u != nullptr),
              "kiln_op_call: a tensor needs data, rank and shapes, a scalar its value array");
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
  if (rt == nullptr || out == nullptr) return;
  const kiln::Stats s = rt->rt->stats();
  out[0] = s.memory_hits;
  out[1] = s.disk_hits;
  out[2] = s.compiles;
  out[3] = s.launches;
}

}  // extern "C"
