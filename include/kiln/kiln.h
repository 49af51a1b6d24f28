// kiln — shape-specialized CUDA kernels from small op specs, compiled at run time.
//
// The whole public API. No CUDA header is included: streams are opaque pointers
// (a CUstream / cudaStream_t cast to kiln::Stream), device memory is a plain pointer.
//
//   kiln::Runtime rt;
//   kiln::Op op = rt.load_file("specs/matmul_small_k.kiln").op("matmul_small_k");
//   op(stream, {kiln::TensorRef(a, kiln::f32, {M, K}), kiln::TensorRef(b, kiln::f32, {K, N}),
//               kiln::TensorRef(c, kiln::f32, {M, N})});
//
// Arguments are the op's inputs then its outputs, in declaration order; scalar
// inputs are passed by value (a number, or kiln::Scalar for an explicit type).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln {

// ---------------------------------------------------------------- data types
enum class DType : std::uint8_t { f32, f16, bf16, f64, i32, i64, u64, boolean };
inline constexpr DType f32 = DType::f32;
inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f64 = DType::f64;
inline constexpr DType i32 = DType::i32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType u64 = DType::u64;
inline constexpr DType boolean = DType::boolean;

std::string_view dtype_name(DType dtype);   // "f32", ..., "bool"
std::size_t dtype_size(DType dtype);        // bytes per element
bool dtype_is_float(DType dtype);           // f32, f16, bf16, f64

using Stream = void*;  // a CUstream; nullptr is the legacy default stream

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

// ---------------------------------------------------------------- errors
// Every error kiln raises at the API boundary derives from kiln::Error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The spec text is wrong (parse or check). what() holds every diagnostic rendered
// as `file:line:col: error: message`, the source line and a caret.
class SpecError : public Error {
 public:
  SpecError(const std::string& rendered, std::string file, int line, int column)
      : Error(rendered), file_(std::move(file)), line_(line), column_(column) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }      // of the first error, 1-based
  int column() const { return column_; }  // of the first error, 1-based

 private:
  std::string file_;
  int line_;
  int column_;
};

// NVRTC rejected generated (or overridden) source. what() is a summary; dump()
// gives the log, the options and the line-numbered source.
class CompileError : public Error {
 public:
  CompileError(const std::string& summary, std::string log, std::vector<std::string> options,
               std::string source)
      : Error(summary), log_(std::move(log)), options_(std::move(options)), source_(std::move(source)) {}
  // No compiler ran: NVRTC is missing or unusable (the summary says why).
  explicit CompileError(const std::string& summary) : Error(summary) {}
  const std::string& log() const { return log_; }
  const std::vector<std::string>& options() const { return options_; }
  const std::string& source() const { return source_; }
  std::string dump() const;

 private:
  std::string log_;
  std::vector<std::string> options_;
  std::string source_;
};

// A CUDA driver call failed, or the driver / a GPU is not there.
class CudaError : public Error {
 public:
  CudaError(const std::string& message, std::string call, int code, std::string code_name)
      : Error(message), call_(std::move(call)), code_(code), code_name_(std::move(code_name)) {}
  const std::string& call() const { return call_; }
  int code() const { return code_; }
  const std::string& code_name() const { return code_name_; }

 private:
  std::string call_;
  int code_;
  std::string code_name_;
};

// The caller passed something the op cannot take: wrong count, dtype, rank,
// shape, a dim bound to two values, a null or misaligned pointer.
class ArgumentError : public Error {
 public:
  using Error::Error;
};

// The ArgumentError of a tensor whose rank or extents do not fit the op: a rank or a constant
// extent other than declared, a dim bound to two values, a size constraint that fails, a shape
// other than the one an executable was specialized for, a dim below 1.
class ShapeError : public ArgumentError {
 public:
  using ArgumentError::ArgumentError;
};

// A file or directory could not be read or written for a reason outside the user's input:
// an output directory that is not writable, a disk that is full, a read that failed.
// (A missing or wrong input file is an ArgumentError: the user named the wrong thing.)
class IoError : public Error {
 public:
  using Error::Error;
};

// The spec is valid, but this version of kiln has no kernel template for it (an op, layout or
// dtype combination not built yet). Typed so callers need not match message text.
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// kiln itself is wrong: an internal assertion failed. Not the user's fault; please report it.
class InternalError : public Error {
 public:
  using Error::Error;
};

// The one exit-code contract (the README's table), shared by the kiln CLI's exit status and
// the C interface's return codes.
enum class ExitCode : int {
  ok = 0,
  input = 1,     // the user's input is wrong: SpecError, ArgumentError (bad spec, op, shape, file)
  usage = 2,     // the command line itself: unknown flag, malformed option
  build = 3,     // a toolchain or kernel build failure: CompileError, NVRTC missing
  device = 4,    // GPU, driver or I/O failure: CudaError, IoError, out of memory
  internal = 5,  // kiln itself is wrong (an internal assertion): a bug to report
};
// The code for an exception thrown by kiln (any std::exception; non-kiln ones are internal,
// except std::bad_alloc, which is a resource failure).
ExitCode exit_code_of(const std::exception& e);

// ---------------------------------------------------------------- arguments
// A device tensor the caller owns. Strides are in elements; empty means
// contiguous row-major.
struct TensorRef {
  TensorRef(void* data, DType dtype, std::vector<std::int64_t> shape,
            std::vector<std::int64_t> strides = {})
      : data(data), dtype(dtype), shape(std::move(shape)), strides(std::move(strides)) {}
  TensorRef(const void* data, DType dtype, std::vector<std::int64_t> shape,
            std::vector<std::int64_t> strides = {})
      : TensorRef(const_cast<void*>(data), dtype, std::move(shape), std::move(strides)) {}

  void* data;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;

  std::int64_t numel() const;
  bool contiguous() const;
};

// A run-time scalar argument with its type.
struct Scalar {
  DType dtype;
  union {
    double f;
    std::int64_t i;
    std::uint64_t u;
  } value;
  static Scalar of_f64(double v, DType t = DType::f32) { Scalar s{t, {}}; s.value.f = v; return s; }
  static Scalar of_i64(std::int64_t v, DType t = DType::i64) { Scalar s{t, {}}; s.value.i = v; return s; }
  static Scalar of_u64(std::uint64_t v) { Scalar s{DType::u64, {}}; s.value.u = v; return s; }
};

// One argument of a call: a tensor or a scalar. Numbers convert implicitly;
// the op's declared scalar type decides how they are passed.
class Arg {
 public:
  Arg(const TensorRef& t) : is_tensor_(true), tensor_(t), scalar_(Scalar::of_i64(0)) {}  // NOLINT
  Arg(Scalar s) : is_tensor_(false), tensor_(static_cast<void*>(nullptr), DType::f32, {}), scalar_(s) {}     // NOLINT
  Arg(double v) : Arg(Scalar::of_f64(v, DType::f64)) {}                                  // NOLINT
  Arg(float v) : Arg(Scalar::of_f64(v, DType::f32)) {}                                   // NOLINT
  Arg(int v) : Arg(Scalar::of_i64(v, DType::i64)) {}                                     // NOLINT
  Arg(long v) : Arg(Scalar::of_i64(v, DType::i64)) {}                                    // NOLINT
  Arg(long long v) : Arg(Scalar::of_i64(v, DType::i64)) {}                               // NOLINT
  Arg(unsigned long v) : Arg(Scalar::of_u64(v)) {}                                       // NOLINT
  Arg(unsigned long long v) : Arg(Scalar::of_u64(v)) {}                                  // NOLINT
  Arg(bool v) : Arg(Scalar::of_i64(v ? 1 : 0, DType::boolean)) {}                        // NOLINT

  bool is_tensor() const { return is_tensor_; }
  const TensorRef& tensor() const { return tensor_; }
  const Scalar& scalar() const { return scalar_; }

 private:
  bool is_tensor_;
  TensorRef tensor_;
  Scalar scalar_;
};

// ---------------------------------------------------------------- options
// Precision of f32 matmul and conv2d.
//   ieee   : plain FMA
//   tf32   : tensor cores with tf32 operands (~1e-3 relative error)
//   tf32x3 : split-precision "3xTF32" on tensor cores (fp32-level accuracy)
// The default, fp32 accuracy, lets kiln pick ieee or tf32x3, whichever is faster.
enum class Precision : std::uint8_t { fp32_accurate, ieee, tf32, tf32x3 };
std::string_view precision_name(Precision p);

// Where a launch's scratch (intermediate values and workspaces; docs/api.md, "Scratch memory")
// comes from when Options::scratch is set: allocate() is called on the launch's stream before its
// kernels are enqueued, deallocate() with the same pointer and size after them (also when a launch
// fails after allocating). Memory handed out again must be ordered after the work enqueued on that
// stream before its deallocate(), as a stream-ordered or caching allocator (PyTorch's) gives it.
// allocate() returns device memory of the launch's device, 256-byte aligned, or throws (the
// exception reaches the caller and nothing is launched); a null or misaligned pointer is an
// ArgumentError. Calls come from any thread that launches.
class ScratchAllocator {
 public:
  virtual ~ScratchAllocator() = default;
  virtual void* allocate(std::size_t bytes, Stream stream) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes, Stream stream) noexcept = 0;
};

struct Options {
  std::string cache_dir;       // empty: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln
  bool disk_cache = true;      // false: memory tier only
  std::string arch;            // "sm_90"...; empty: the current device's, else $KILN_ARCH, else sm_90
  Precision precision = Precision::fp32_accurate;
  std::string dump;            // "plan,source,ptx,sass"; empty: $KILN_DUMP
  std::string dump_dir;        // empty: $KILN_DUMP_DIR, else ./kiln_dump
  std::string override_dir;    // empty: $KILN_OVERRIDE_DIR
  std::string template_dir;    // empty: $KILN_TEMPLATE_PATH; adds to / overrides the built-in templates
  // Which dims stay run-time values (docs/language.md, "dyn"): "declared" (the spec's `dyn`
  // marks), "generic" (also every dim that sizes only elementwise kernels, the rows of reductions,
  // scans and row norms, the batch of a conv or the planes of a pool: one compile per bucket and
  // size class),
  // "specialized" (every dim baked in, `dyn` ignored). Empty: $KILN_SHAPES, else generic.
  std::string shapes;
  // Measured configs of the sm_90a TMA GEMM engine (docs/api.md, "Tuning"): "off" (the
  // planner's heuristic), "stored" (a pick that `kiln tune` or Op::tune stored in the cache
  // directory for this op, shape, arch, device and kiln version; else the heuristic),
  // "on-first-call" (as stored; on a miss, tune in-process first and store the winner: the first
  // call takes seconds). Empty: $KILN_TUNING, else stored.
  std::string tuning;
  // The launches' scratch: null, kiln's stream-ordered pool per device (docs/api.md, "Scratch
  // memory"); else the caller's allocator.
  std::shared_ptr<ScratchAllocator> scratch;
  bool use_environment = true; // false: ignore every KILN_* variable (tests)
};

// Op::tune: how long and how to time.
struct TuneOptions {
  double budget_s = 120;   // no new candidate is started after this many seconds (the heuristic's always runs)
  int warmup = 10;         // launches before timing, per candidate
  int iters = 50;          // timed launches (device events) in three rounds; the median counts
  bool store = true;       // write the winner to <cache_dir>/tuned/ (where the runtime looks it up)
  std::uint64_t seed = 1;  // the inputs' seed
  std::function<void(const std::string& line)> progress;   // a line per candidate checked, then per one timed (kiln tune: stderr)
};

// One candidate of one product as Op::tune measured it.
struct TuneCandidate {
  std::string config;        // "128x256x64 c1 st4 k1 cl1 g8" (a TMA product), "rows t256 g32 i8" (a row norm),
                             // "ew t256" (an elementwise kernel), "reduce warp t256 u4": plan.h
  bool heuristic = false;    // the planner's own pick
  bool correct = false;      // outputs matched (see TuneResult::checked_against)
  double median_ms = -1;     // the whole op's device time; -1 when not timed (wrong, or over budget)
  std::string note;          // why it was not timed, or the mismatch
};

// Op::tune's result: per tunable anchor (a matmul on the TMA engine, a row norm, a contiguous-row
// reduction, an elementwise kernel's first stored node), every candidate.
struct TuneResult {
  struct Product {
    int anchor = -1;
    std::string what;              // "matmul 4096x4096x4096 batch 1", "softmax: 4096 rows of 8192"
    std::string heuristic, best;   // configs
    double heuristic_ms = -1, best_ms = -1;
    std::vector<TuneCandidate> candidates;
  };
  std::string op, bindings, device, arch;
  std::string checked_against;     // "the float64 reference", or "the heuristic kernel's output (...)"
  std::string stored_path;         // empty: not stored (TuneOptions::store false, or the heuristic won)
  std::vector<Product> products;
};

// The value of a const (a compile-time parameter), given by the caller: an exact
// integer (any value of i64 or u64), a float or a bool. Numbers convert implicitly, so
// `{{"axis", 1}, {"p", 0.2}, {"exclusive", true}}` is a Consts. The checker decides
// whether it fits the const's declared type (docs/language.md, "Consts"): an int const
// takes an integer only (1.0 is refused), a float const takes a float or an integer, a
// bool const takes true/false or 0/1.
class ConstValue {
 public:
  enum class Kind : std::uint8_t { integer, floating, boolean };

  ConstValue() = default;   // the integer 0
  ConstValue(bool v) : kind_(Kind::boolean), magnitude_(v ? 1 : 0) {}   // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  ConstValue(T v) {   // NOLINT
    if constexpr (std::is_signed_v<T>) {
      negative_ = v < 0;
      magnitude_ = negative_ ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    } else {
      magnitude_ = v;
    }
  }
  ConstValue(double v) : kind_(Kind::floating), float_(v) {}   // NOLINT
  ConstValue(float v) : ConstValue(static_cast<double>(v)) {}  // NOLINT
  // An integer given as sign and magnitude (the whole range -(2^64-1) .. 2^64-1).
  static ConstValue integer(bool negative, std::uint64_t magnitude) {
    ConstValue c(magnitude);
    c.negative_ = negative && magnitude != 0;
    return c;
  }

  Kind kind() const { return kind_; }
  bool is_integer() const { return kind_ == Kind::integer; }
  bool is_float() const { return kind_ == Kind::floating; }
  bool is_bool() const { return kind_ == Kind::boolean; }
  // Integers: the value is (negative() ? -1 : 1) * magnitude(). Bools: magnitude() is 0 or 1.
  bool negative() const { return negative_; }
  std::uint64_t magnitude() const { return magnitude_; }
  double float_value() const { return float_; }   // floats only
  // The value as a double: floats as they are, integers rounded to nearest, bools 0 or 1.
  double to_double() const;
  // Exact text: "-9223372036854775808", "0.2" (shortest round trip), "true".
  std::string str() const;

  // Where the value came from, for messages ("-D alpha=1e39"); empty means the caller.
  const std::string& source() const { return source_; }
  ConstValue& set_source(std::string source) {
    source_ = std::move(source);
    return *this;
  }

 private:
  Kind kind_ = Kind::integer;
  bool negative_ = false;
  std::uint64_t magnitude_ = 0;
  double float_ = 0;
  std::string source_;
};
using Consts = std::map<std::string, ConstValue>;

// Values for a specialization: dims by name, consts by name.
struct Bindings {
  std::map<std::string, std::int64_t> dims;
  Consts consts;
};

// Counters, for tests and `kiln cache stats`.
struct Stats {
  std::uint64_t memory_hits = 0;     // call served with no source generation
  std::uint64_t disk_hits = 0;       // cubin read from the disk cache or a pack
  std::uint64_t compiles = 0;        // NVRTC invocations
  std::uint64_t launches = 0;
};

// What one generated kernel needs and costs.
struct KernelInfo {
  std::string name;            // entry symbol
  std::string template_name;   // "elementwise", "reduce_inner", ...
  Dim3 grid, block;
  unsigned shared_bytes = 0;   // dynamic shared memory per block
  int registers = -1;          // from ptxas' verbose log (-1: unknown)
  int spill_bytes = -1;        // spill stores + loads (-1: unknown)
  int stack_bytes = -1;
  double compile_ms = -1;      // cold NVRTC time (-1: not compiled here)
};

// One argument of a specialized op, in call order (inputs, then outputs).
struct ArgumentInfo {
  std::string name;
  bool is_tensor = true;
  bool is_output = false;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;   // tensors only
};

// An extent as an op's signature writes it: a number, a dim, or arithmetic of them (a conv's or
// a pool's output size, a concat's sum), as a flat program: `nodes` in an order where each
// node's operands come before it, the value being the last node's. Shared subexpressions appear
// once, and evaluating it is one loop, however deep the expression.
struct ShapeExpr {
  enum class Kind : std::uint8_t { Const, Dim, Add, Sub, Mul, FloorDiv, Min };
  struct Node {
    Kind kind = Kind::Const;
    std::int64_t value = 0;   // Const
    std::string dim;          // Dim
    int lhs = -1, rhs = -1;   // the others: operand indices into nodes
  };
  std::vector<Node> nodes;
};

// How an op's shapes follow from its dims (its consts applied): what a caller that infers
// shapes over symbolic sizes needs (kiln.torch's fake implementation under torch.compile's
// dynamic shapes), where Op::arguments_for takes concrete ones. Binding: a tensor input's
// extent that is a plain dim gives that dim its value (every place that names it must agree),
// a dim no input gives takes its default, and every other input extent, and every `equal`
// pair, must evaluate equal; the outputs' extents are then their expressions' values.
struct ShapeRules {
  struct Argument {
    std::string name;
    bool is_tensor = true;
    bool is_output = false;
    DType dtype = DType::f32;
    std::vector<ShapeExpr> shape;   // tensors only
  };
  struct Equal {
    ShapeExpr lhs, rhs;
    std::string message;   // what the user must fix when they differ
  };
  std::vector<Argument> arguments;                 // inputs, then outputs
  std::map<std::string, std::int64_t> defaults;    // the dims declared with a value (`dims N = 16`)
  std::vector<Equal> equal;                        // relations binding checks (a grouped conv's channels)
};

class Runtime;
class Op;
struct ProgramImpl;
struct OpImpl;
struct ExecutableImpl;
struct RuntimeImpl;

// A specialization of an op at concrete dims and consts: its plan, source and
// binaries. Launching it checks the arguments against the bound shapes.
class Executable {
 public:
  void launch(Stream stream, std::initializer_list<Arg> args) const;
  void launch(Stream stream, const std::vector<Arg>& args) const;

  std::string plan_text() const;
  std::string source() const;            // every kernel's CUDA source, in plan order
  std::string ptx() const;               // compiles to PTX on demand
  std::string sass() const;              // via cuobjdump, when found
  std::vector<KernelInfo> kernels() const;   // compiles (or loads) the binaries first
  std::vector<ArgumentInfo> arguments() const;
  std::string signature() const;
  // The float64 CPU reference of this specialization (docs/semantics.md; what kiln's GPU tests
  // compare with): `args` as launch() takes them, except that every tensor is in host memory.
  // Writes each output in its dtype. Checked as launch() checks; ops whose reference would need
  // more host memory than KILN_REF_MAX_BYTES (default 96 GiB) throw Error. No GPU is used.
  void reference(const std::vector<Arg>& args) const;

 private:
  friend class Op;
  explicit Executable(std::shared_ptr<ExecutableImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<ExecutableImpl> impl_;
};

// One op of a loaded program. Calling it binds the dims from the tensors'
// shapes, compiles once per distinct specialization, and launches.
class Op {
 public:
  void operator()(Stream stream, std::initializer_list<Arg> args) const;
  void operator()(Stream stream, const std::vector<Arg>& args) const;

  Executable specialize(const Bindings& bindings) const;
  // Times every legal config of each tunable product of the op at these bindings on the current
  // GPU (docs/api.md, "Tuning"): each candidate's outputs are checked first, then its median
  // is measured; the fastest correct one is stored for Options::tuning. UnsupportedError when the
  // op has nothing to tune for the runtime's arch; CudaError without a GPU.
  TuneResult tune(const Bindings& bindings, const TuneOptions& options = {}) const;
  Executable specialize(const std::map<std::string, std::int64_t>& dims) const {
    return specialize(Bindings{dims, {}});
  }
  // The arguments of a call with these inputs (inputs, then outputs), the outputs' shapes bound
  // from the inputs': what a caller that allocates the outputs needs. The inputs are checked as
  // a call checks them (ArgumentError naming the argument).
  std::vector<ArgumentInfo> arguments_for(const std::vector<Arg>& inputs) const;
  // The op's shapes as expressions of its dims (ShapeRules): shape inference without concrete sizes.
  ShapeRules shape_rules() const;
  // The float64 CPU reference of a call (Executable::reference), its dims bound from the
  // host tensors as a call binds them from device ones.
  void reference(const std::vector<Arg>& args) const;
  // Consts fixed for every later call of the returned op.
  Op with_consts(const Consts& consts) const;
  Op with_precision(Precision precision) const;

  const std::string& name() const;
  std::string signature() const;   // "matmul_small_k(a: f32[M, K], b: f32[K, N]) -> c: f32[M, N]"
  std::vector<std::string> dim_names() const;     // declaration order
  std::vector<std::string> const_names() const;

 private:
  friend class Program;
  explicit Op(std::shared_ptr<OpImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<OpImpl> impl_;
};

// A checked spec file.
class Program {
 public:
  Op op(std::string_view name) const;
  std::vector<std::string> op_names() const;
  const std::string& file() const;
  std::vector<std::string> warnings() const;   // rendered, e.g. unused inputs

 private:
  friend class Runtime;
  explicit Program(std::shared_ptr<ProgramImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<ProgramImpl> impl_;
};

// Registers a .kilnpack compiled into the program (`data` stays valid for the program's life):
// every Runtime constructed afterwards preloads it, and a damaged one makes that construction
// throw ArgumentError naming it. The source kiln_add_pack(... EMBED) generates calls this from a
// static initializer; returns true.
bool register_embedded_pack(const char* name, const unsigned char* data, std::size_t size);

// Where kiln's diagnostics go (the KILN_LOG lines, docs/api.md "Logging"): stderr, unless a
// handler is set. The handler gets each line kiln emits at the current level, with its level
// (1 warning, 2 info, 3 debug) and without the "kiln: warning: " prefix, from any thread; an
// empty function restores stderr. The Python package sends them to the `kiln` logger.
using LogHandler = std::function<void(int level, const std::string& message)>;
void set_log_handler(LogHandler handler);
// The level (KILN_LOG's names: quiet, warning, info, debug), as KILN_LOG would set it; false
// (nothing changed) for another name.
bool set_log_level_name(std::string_view name);

// Devices. A launch runs in the CUDA context current on the calling thread (device 0's primary
// context when none is); one Runtime serves every device of the process, planning for and
// loading into each device it is called on (docs/api.md, "Several devices").
int device_count();   // the CUDA devices this process sees; 0 without a driver or a GPU

// Makes device `device`'s primary context (the one the CUDA runtime and PyTorch use) current on
// the calling thread for the guard's life, then restores the context that was current before.
// ArgumentError for an ordinal out of range (naming the range), CudaError without a GPU.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  void* previous_ = nullptr;
  bool switched_ = false;
};

class Runtime {
 public:
  explicit Runtime(Options options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Program load_file(const std::string& path);
  Program load_string(std::string_view text, std::string name = "<string>");

  // Loads a bundle written by `kiln build -o FILE.kilnpack`; its cubins are
  // used before the disk cache and NVRTC. (Packs compiled into the program with
  // kiln_add_pack(... EMBED) are preloaded by every Runtime on construction.)
  void preload(const std::string& pack_path);

  Stats stats() const;
  const Options& options() const;
  std::string arch() const;   // the target arch in use, e.g. "sm_90"

 private:
  std::shared_ptr<RuntimeImpl> impl_;
};

}  // namespace kiln
