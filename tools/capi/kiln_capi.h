/* A small C interface to kiln, for foreign callers (Python ctypes in bench/).
 * Every int function returns KILN_OK (0) on success, else one of the codes below with a
 * message in err (truncated to err_len, always NUL-terminated). The codes are the kiln CLI's
 * exit codes for the same failures (the README's exit-code table). */
#ifndef KILN_CAPI_H
#define KILN_CAPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  KILN_OK = 0,
  KILN_ERROR_INPUT = 1,     /* the caller's input: spec errors, unknown op, bad shape or tensor, missing file */
  KILN_ERROR_USAGE = 2,     /* a malformed argument to this interface (NULL where one is needed) */
  KILN_ERROR_BUILD = 3,     /* a kernel build failure: NVRTC missing or rejecting the source */
  KILN_ERROR_DEVICE = 4,    /* GPU, driver or I/O failure */
  KILN_ERROR_INTERNAL = 5   /* a bug in kiln */
};

typedef struct kiln_runtime kiln_runtime;
typedef struct kiln_op kiln_op;

/* arch may be NULL or "" (the device's); precision: "fp32", "ieee", "tf32", "3xtf32". */
int kiln_runtime_new(const char* arch, const char* cache_dir, kiln_runtime** out, char* err, int err_len);
void kiln_runtime_free(kiln_runtime* rt);
int kiln_op_load(kiln_runtime* rt, const char* spec_path, const char* op_name, const char* precision,
                 kiln_op** out, char* err, int err_len);
void kiln_op_free(kiln_op* op);
/* A copy of op with a const fixed (e.g. min_reduce's axis). */
int kiln_op_with_const(kiln_op* op, const char* name, double value, kiln_op** out, char* err, int err_len);
/* Arguments in declaration order (inputs, then outputs). For argument i:
 * is_tensor[i]; tensors: data[i], dtype[i] (kiln::DType order: f32 f16 bf16 f64 i32 i64 u64 bool),
 * rank[i] and its extents consumed from `shapes` in order; scalars: dtype[i] and
 * scalar_f[i] (floats) or scalar_u[i] (integers, u64 bits). */
int kiln_op_call(kiln_op* op, void* stream, int nargs, const int* is_tensor, void* const* data, const int* dtype,
                 const int* rank, const int64_t* shapes, const double* scalar_f, const uint64_t* scalar_u,
                 char* err, int err_len);
/* Counters: memory hits, disk hits, compiles, launches. */
void kiln_runtime_stats(kiln_runtime* rt, uint64_t out[4]);

#ifdef __cplusplus
}
#endif
#endif
