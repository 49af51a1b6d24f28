// The planner: a BoundIr becomes a Plan of GPU kernels and the buffers between them.
//
// [Note: how the planner groups the op graph]
// Every node that is not elementwise (reduction, scan, softmax, matmul, conv) is
// an *anchor*: it gets a kernel of its own, built from the template that fits
// its bound shape. Elementwise nodes are never kernels by themselves unless they
// must be stored: they are inlined, per element, into whichever kernel reads
// them — into an anchor's prologue (the load functor of a reduction, say) or an
// elementwise kernel's body. An anchor followed by a chain of elementwise nodes
// that only it feeds takes the chain as its epilogue. So a value reaches device
// memory only when it is an output, an anchor result some other kernel reads, or
// an operand that a template cannot take as a prologue. Permute is a view: it
// changes the indexing of whatever reads it, never a copy.
//
// Shapes and consts are baked into the source; a `dyn` dim stays a kernel
// argument (elementwise kernels anywhere; the memory-bound family among its rows, see
// [Note: dyn rows] in plan_memory.cpp, and along the axes it works along, see [Note: dyn
// lengths] there; a pool's planes; a matmul's M or outermost batch dim, see [Note: dyn
// matmul] in plan_contraction.cpp; a conv's batch, see [Note: dyn conv] there).
//
// [Note: dyn buckets]
// A plan for an op with `dyn` dims is made for one binding of them, but may depend only on each
// dyn dim's *bucket* (dyn_bucket below), never on its value: the generated source, the configs
// and the kernels' argument lists are the same for every value of a bucket, so one compile serves
// them all. What does depend on the values is computed at launch (launch_for: the grid; the
// kernels read the dims as arguments). The runtime keys its executables by the buckets (a row
// length's also by its row alignment: [Note: dyn row alignment]) and by whether some tensor needs
// 64-bit indexing (kIndex32Limit), and so does the plan (index64).
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "generator/ir/ir.h"
#include "generator/plan/kernel_config.h"

namespace kiln {

// A dyn dim's value class: the plan may assume it and nothing finer ([Note: dyn buckets]).
// Divisible by 16 covers every family's vector width (16 bytes of 1-byte elements at most).
enum class DynBucket : std::uint8_t { One = 1, Div16 = 2, General = 3 };
constexpr DynBucket dyn_bucket(std::int64_t value) {
  return value == 1 ? DynBucket::One : value % 16 == 0 ? DynBucket::Div16 : DynBucket::General;
}
const char* dyn_bucket_text(DynBucket b);   // "one", "multiple of 16", "general" (no '=': plan headers are parsed)

// [Note: dyn row alignment]
// A dyn dim in the bucket general that is some tensor's row length (a matmul's N or K) decides
// whether those rows are 16-byte aligned, which a plan may use (16-byte loads, tensor maps, whose
// strides are multiples of 16 bytes). So the runtime keys such a dim also by its row alignment,
// whether the value is a multiple of 8 or of 4 (16 bytes of 16-bit or of 32-bit elements), and a
// plan may assume that of its bound value and nothing finer, recording what it assumed
// (Plan::dyn_row_align, checked at each launch of an executable). The dims keyed so are those
// that are the innermost extent of some input or output (dyn_row_lengths); elsewhere a plan
// assumes nothing of a general value's alignment. (Without it, bf16 K = 1000 in a·b took the
// mma.sync Gemm: 6.9x the specialized TMA engine, bench/results/2026-12-02-h200-run12.)
std::set<std::string> dyn_row_lengths(const ir::Ir& ir);
// A general value's row alignment: 2 a multiple of 8, 1 of 4 (not 8), 0 neither.
constexpr int dyn_row_class(std::int64_t value) { return value % 8 == 0 ? 2 : value % 4 == 0 ? 1 : 0; }
const char* dyn_row_class_text(int row_class);   // "a multiple of 8", "a multiple of 4, not of 8", ...
// What a call's key holds for a dyn extent: its bucket, and for a row length in the bucket
// general its row alignment.
constexpr std::int64_t dyn_key_code(std::int64_t value, bool row_length) {
  const DynBucket b = dyn_bucket(value);
  if (!row_length || b != DynBucket::General) return static_cast<std::int64_t>(b);
  return 4 + dyn_row_class(value);
}

// [Note: dyn size classes]
// Some families plan few rows differently from many (a block per row against a warp per row).
// When a dyn dim counts such rows, the family declares the values of that dim at which its plan
// changes: the dim's thresholds (Plan::dyn_thresholds). A value's *class* is how many thresholds
// it reaches, and the plan may depend on the class as it does on the bucket: the family's rules
// are evaluated at the class's lowest value, so every value of a class gets the same plan and
// source. Thresholds depend on static dims, consts and the target only, never on a dyn value, so
// the runtime learns them from the first plan of an op's bucket key and then keys executables by
// bucket and class before planning.
// [Note: size classes of a product]
// A route may change with a product of dyn dims rather than with one dim: the M of a product whose
// batches fold into it ([Note: folded batches] in plan_contraction.cpp) is B x S with both B and S
// dyn. Its thresholds are then keyed by the factors' names joined by '*' ("B*S", in the extent's
// order), and a value's class is that of the product of the dims' values (dyn_class_value). The
// runtime keys an executable by each key's class, reading every factor where it reads the dim.
std::vector<std::string> dyn_class_factors(const std::string& key);   // "B*S" -> {B, S}; "M" -> {M}
std::string dyn_class_key(const std::vector<std::string>& dims);    // {B, S} -> "B*S"
std::int64_t dyn_class_value(const std::string& key, const std::map<std::string, std::int64_t>& dims);
// Thresholds as dyn_class takes them: ascending and distinct, each above 1 (every value reaches 1).
void normalize_thresholds(std::vector<std::int64_t>& thresholds);
int dyn_class(const std::vector<std::int64_t>& thresholds, std::int64_t value);    // thresholds reached
std::int64_t dyn_class_low(const std::vector<std::int64_t>& thresholds, int klass);   // a class's lowest value
std::string dyn_class_text(const std::vector<std::int64_t>& thresholds, int klass);  // "[264, 1056)", ">= 4224"

// The largest element count a kernel indexes with 32-bit integers: 2^31 - 2^18 - 1, so that an
// index past a tensor's end by one loop step inside a block (at most 1024 threads x 16-element
// vectors x unroll 8 = 2^17) still fits. Grid-stride loops step with kiln::stride_next, which
// never forms an index past the end (templates/kiln/common.cuh).
constexpr std::int64_t kIndex32Limit = (std::int64_t{1} << 31) - (std::int64_t{1} << 18) - 1;
// How plans and generated code write the bound kIndex32Limit stays under.
inline constexpr const char* kIndex32Bound = "2^31 - 2^18";
// A generated unit's `using Index = ...;` line, with the reason as its comment (no newline).
std::string index_declaration(bool index64);

// [Note: tuned picks]
// The choices the tuner varies (kiln tune, Options::tuning), per family that has them: the fields
// of its config that its planner picks by heuristic. A pick is a subset of the family's one config,
// not a second copy of its limits: the planner lists the legal picks for an anchor (the
// heuristic's is always one of them) in Plan::tunables, and applies a pick from
// Target::tuned_picks only if it is among them; otherwise it keeps its own and says why in the
// kernel's reason. The families with picks:
// - the sm_90a TMA GEMM engine (plan_tma): TmaPick, the tiles, stages, K slices, cluster, group;
// - the row norms over contiguous rows of a static length (softmax, log_softmax and the norm
//   compositions fused into rownorm; plan_memory.cpp's [Note: row norm picks]): RownormPick;
// - the split norms (a norm over few long rows, or over leading and trailing axes; plan_memory.cpp's
//   [Note: split norm picks]): SplitNormPick;
// - the elementwise family (plan.cpp's [Note: elementwise picks]): ElementwisePick. An elementwise
//   kernel has no anchor: its tunable and stored pick are keyed by its first stored node;
// - the reductions over contiguous rows (reduce_inner's warp and block variants) and strided
//   reductions with threads along the inner axis (reduce_outer's plain variant; plan_memory.cpp's
//   [Note: reduction picks]): ReducePick;
// - the scans along contiguous rows with a block per row (scan_rows' block variant; plan_memory.cpp's
//   [Note: scan picks]): ScanPick; along contiguous rows by decoupled look-back ([Note: look-back
//   scan picks]): LookbackScanPick; and along a strided axis, chunked or not ([Note: strided scan
//   picks]): StridedScanPick;
// - the pools over static pooled axes (plan_pool.cpp's [Note: pool picks]): PoolPick;
// - the convs (plan_contraction.cpp's [Note: conv picks]): ConvPick, within the route the planner
//   took (the TMA engine, WgConvNchw, ConvNchw or DepthwiseDirect);
// - fused attention (plan_contraction.cpp's [Note: attention picks]): AttentionPick;
// - the skinny products on Gemv (plan_contraction.cpp's [Note: gemv picks]): GemvPick;
// - the mma.sync Gemm of a static product without a fused softmax (plan_contraction.cpp's [Note:
//   mma picks]): MmaPick;
// - the small-K products, on the mma.sync SmallK or sm_90a's wgmma SmallK (plan_contraction.cpp's
//   [Note: small-K picks]): SmallKPick;
// - sm_90a's cp.async wgmma engine (plan_contraction.cpp's [Note: wgmma picks]): WgPick.
struct TmaPick {
  int bm = 0, bn = 0, bk = 0, consumers_n = 1, stages = 0, split_k = 1, cluster_m = 1, group_m = 8;

  std::string text() const;   // "128x256x64 c1 st4 k1 cl1 g8": tile, consumers, stages, K slices, cluster, group
  static std::optional<TmaPick> parse(std::string_view text);
  friend bool operator==(const TmaPick&, const TmaPick&) = default;
};

// A row norm's (RownormConfig's) block size, threads a row (32: a warp per row; the block's size:
// a block per row) and elements a thread holds in registers (0: none, the two-pass path).
struct RownormPick {
  int threads = 256, group = 32;
  long long items = 0;

  std::string text() const;   // "rows t256 g32 i8"
  static std::optional<RownormPick> parse(std::string_view text);
  friend bool operator==(const RownormPick&, const RownormPick&) = default;
};

// An elementwise kernel's (ElementwiseConfig's) block size, and whether its grid is persistent
// (capped at kElementwiseBlocksPerSm blocks an SM) or one step a thread.
struct ElementwisePick {
  int threads = 256;
  bool persistent = false;

  std::string text() const;   // "ew t256", "ew t512 persistent"
  static std::optional<ElementwisePick> parse(std::string_view text);
  friend bool operator==(const ElementwisePick&, const ElementwisePick&) = default;
};

// A reduction's (ReduceConfig's) block size and loads in flight a thread, within the heuristic's
// variant: a warp or a block per contiguous row (reduce_inner), threads along the inner axis of
// a strided one (reduce_outer's plain variant), or a strided one's whole-row sweep of 16-byte
// loads (v4) or of single elements (rows).
struct ReducePick {
  enum class Kind { warp, block, outer, v4, rows };
  Kind kind = Kind::warp;
  int threads = 256, unroll = 4;
  int waves = 0;   // v4 (the whole-row sweep of 16-byte loads): ReduceConfig::waves; 0 otherwise

  // "reduce warp t256 u4", "reduce block t512 u4", "reduce outer t128 u8", "reduce v4 t1024 u2 w2",
  // "reduce rows t256 u1"
  std::string text() const;
  static std::optional<ReducePick> parse(std::string_view text);
  friend bool operator==(const ReducePick&, const ReducePick&) = default;
};

// A scan along contiguous rows' (ScanConfig's kRowsBlock variant) block size and 16-byte vectors a
// thread per tile.
struct ScanPick {
  int threads = 256, vecs = 2;

  std::string text() const;   // "scan rows t256 v2"
  static std::optional<ScanPick> parse(std::string_view text);
  friend bool operator==(const ScanPick&, const ScanPick&) = default;
};

// A split norm's (RownormConfig's kSplitStats / kSplitApply variants) block size and the waves of
// blocks its chunks aim at (the chunk size, or the segments a chunk gangs, follow by the rule);
// waves 0 (launch::kRowNormWholeWaves): a block per whole row, one kernel (kSplitWhole).
struct SplitNormPick {
  int threads = 512, waves = 2;

  std::string text() const;   // "split norm t512 w2"
  static std::optional<SplitNormPick> parse(std::string_view text);
  friend bool operator==(const SplitNormPick&, const SplitNormPick&) = default;
};

// A scan along a strided axis' (ScanConfig's kStrided / kStridedTotals variants) block size and
// loads in flight a thread down its column.
struct StridedScanPick {
  int threads = 256, unroll = 8;

  std::string text() const;   // "scan strided t256 u8"
  static std::optional<StridedScanPick> parse(std::string_view text);
  friend bool operator==(const StridedScanPick&, const StridedScanPick&) = default;
};

// A pool's (PoolConfig's) block size and a thread step's outputs: `run` adjacent along w (`vec`
// > 1: loaded as 16-byte vectors of vec elements, run == vec) times `rows` adjacent along h.
struct PoolPick {
  int threads = 256, run = 1, vec = 1, rows = 1;

  std::string text() const;   // "pool t256 w4 v4 h1"
  static std::optional<PoolPick> parse(std::string_view text);
  friend bool operator==(const PoolPick&, const PoolPick&) = default;
};

// A look-back scan's along contiguous rows (ScanConfig's kRowsLookback variant): its data threads,
// 16-byte vectors a thread per tile, shared stages (tiles) a block and blocks an SM (the
// persistent grid's size).
struct LookbackScanPick {
  int threads = 256, vecs = 8, stages = 3, blocks = 2;

  std::string text() const;   // "scan lookback t256 v8 s3 b2"
  static std::optional<LookbackScanPick> parse(std::string_view text);
  friend bool operator==(const LookbackScanPick&, const LookbackScanPick&) = default;
};

// A conv's (ConvConfig's) tile and stages within its route (`kind`, the planner's): the CTA tile
// (bm x bn, rows x columns as the route lays them out) and shared stages of the implicit GEMMs
// (the TMA engine's: as many as fit, which the tile decides), or DepthwiseDirect's block size.
struct ConvPick {
  ConvKind kind = ConvKind::Nchw;
  int bm = 0, bn = 0, stages = 0;   // the implicit GEMMs
  int threads = 0;                  // Depthwise

  // "conv nchw 128x128 st3", "conv wgmma 128x256 st4", "conv tma 128x128 st6", "conv depthwise t256"
  std::string text() const;
  static std::optional<ConvPick> parse(std::string_view text);
  friend bool operator==(const ConvPick&, const ConvPick&) = default;
};

// Fused attention's (AttentionConfig's) key tile and the depth of its k and v ring.
struct AttentionPick {
  int bn = 128, stages = 3;

  std::string text() const;   // "attention n128 st3"
  static std::optional<AttentionPick> parse(std::string_view text);
  friend bool operator==(const AttentionPick&, const AttentionPick&) = default;
};

// A skinny product's (GemmConfig's Gemv or GemvMma) rows of the big operand a block takes (the row dot's bm;
// the column sweep's are its warp of vectors) and its K slices.
struct GemvPick {
  int rows = 1, splits = 1;
  bool mma = false;   // GemvMma (rows: its block's rows, 128 or 256), else Gemv

  std::string text() const;   // "gemv r8 k4", "gemv mma r128 k5"
  static std::optional<GemvPick> parse(std::string_view text);
  friend bool operator==(const GemvPick&, const GemvPick&) = default;
};

// The mma.sync Gemm's (GemmConfig's Gemm / SplitK) CTA tile, shared stages and K slices (1: Gemm
// with its epilogue; more: GemmSplitK and its reduce kernel).
struct MmaPick {
  int bm = 128, bn = 128, stages = 3, split_k = 1;

  std::string text() const;   // "mma 128x128 st3 k1"
  static std::optional<MmaPick> parse(std::string_view text);
  friend bool operator==(const MmaPick&, const MmaPick&) = default;
};

// A small-K product's (GemmConfig's SmallK / SmallKWgmma) CTA tile and `depth`: on the mma.sync
// SmallK the CTAs an SM (its persistent grid, and the registers __launch_bounds__ allows), on the
// sm_90a wgmma SmallK (3xTF32) the ring of B blocks.
struct SmallKPick {
  bool wgmma = false;
  int bm = 256, bn = 64, depth = 1;

  std::string text() const;   // "small k 256x64 c1" (CTAs an SM), "small k wgmma 256x64 b3" (B blocks)
  static std::optional<SmallKPick> parse(std::string_view text);
  friend bool operator==(const SmallKPick&, const SmallKPick&) = default;
};

// The cp.async wgmma engine's (GemmConfig's Wgmma / WgmmaSplitK: sm_90a, tf32 and 3xTF32) CTA tile,
// shared stages and K slices (more than 1, or a fused softmax: WgGemmSplitK and its reduce kernel).
struct WgPick {
  int bm = 128, bn = 128, stages = 6, split_k = 1;

  std::string text() const;   // "wgmma 128x128 st6 k1"
  static std::optional<WgPick> parse(std::string_view text);
  friend bool operator==(const WgPick&, const WgPick&) = default;
};

using Pick = std::variant<TmaPick, RownormPick, SplitNormPick, ElementwisePick, ReducePick, ScanPick, StridedScanPick,
                          PoolPick, LookbackScanPick, ConvPick, AttentionPick, GemvPick, MmaPick, SmallKPick, WgPick>;
std::string pick_text(const Pick& pick);
std::optional<Pick> parse_pick(std::string_view text);   // any family's text

// A pick for one anchor and where it came from ("tuned: 0.412 ms, heuristic 0.450 ms, NVIDIA
// H100 80GB HBM3"), which the kernel's reason quotes.
struct TunedPick {
  Pick pick;
  std::string origin;
};

// What the code is generated for. Part of every cache key.
struct Target {
  std::string arch = "sm_90";    // sm_80, sm_86, sm_89, sm_90, sm_90a
  int sm_count = 132;            // for grid sizing
  Precision precision = Precision::fp32_accurate;   // default for f32 matmul/conv
  bool aligned16 = true;         // every tensor pointer is 16-byte aligned (cudaMalloc's are)
  std::map<int, TunedPick> tuned_picks;   // by anchor node: picks that override a planner's heuristic

  static Target for_arch(const std::string& arch);  // known SM counts per arch; validates the name
  int sm_version() const;                           // 80, 86, 89, 90
};

enum class BufferKind { Input, Output, Intermediate, Workspace };

struct Buffer {
  BufferKind kind = BufferKind::Intermediate;
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  int slot = -1;                 // Input: param index; Output: output index
  ir::NodeId node = -1;          // the node stored here (-1 for workspaces)
  std::int64_t bytes = 0;
  // A workspace whose first extent is this dyn dim (shape[0] its planned value): each launch sizes
  // it by the dim's value (the TMA conv's copy of x, [Note: dyn conv] in plan_contraction.cpp).
  std::string dyn_dim;
  // A workspace that kernel `launch_kernel`'s geometry sizes at each launch (its workspace_bytes
  // from launch_for): a split reduction's partial states over a dyn inner extent ([Note: dyn inner
  // extents] in plan_memory.cpp); `bytes` and `shape` are the bound launch's. -1: none.
  int launch_kernel = -1;
};

// A TMA tensor map over a buffer (sm_90): the kernel takes it by value (a
// `const __grid_constant__ kiln::TensorMap`, kiln/tma.cuh) and the runtime encodes it over the
// buffer's address at launch (cuTensorMapEncodeTiled, runtime/tensor_map.h). The element type is
// the KernelArg's dtype; out-of-bounds elements of a box read as zero.
// im2col mode (cuTensorMapEncodeIm2col, an NHWC-style tensor: dims C, W, [H, [D,]] N): a copy
// moves box[0] channels of each of box[1] pixels, walked inside the pixel box given by the lower
// and upper corners (spatial dims innermost first, rank - 2 of each), `element_strides` apart.
struct TensorMapSpec {
  std::vector<std::int64_t> dims;      // extents, innermost (contiguous) first, in elements
  std::vector<std::int64_t> strides;   // bytes between consecutive indices of dims 1..rank-1
  std::vector<int> box;                // elements one copy moves, per dim (1..256); im2col: {channels, pixels}
  int swizzle = 128;                   // shared-memory swizzle span in bytes: 0 (none), 32, 64, 128
  bool im2col = false;                 // cuTensorMapEncodeIm2col instead of ...Tiled
  std::vector<int> lower, upper;       // im2col: the pixel box's corners
  std::vector<int> element_strides;    // im2col: the traversal step of each dim (tiled maps: all 1)

  bool operator==(const TensorMapSpec&) const = default;
  // The map with dims[dim] at `extent` (a launch's dyn extent, KernelArg::map_dyn_dim): every
  // stride above that dim spans it, so each scales with it (a tiled map over a packed tensor).
  TensorMapSpec with_extent(int dim, std::int64_t extent) const;
  // The map with its dims and strides (elements, times `elem_bytes`) at a launch's values: a
  // KernelArg's map_dims_at and map_strides_at evaluated.
  TensorMapSpec with_extents(const std::vector<std::int64_t>& at_dims, const std::vector<std::int64_t>& at_strides,
                             std::int64_t elem_bytes) const;
  // "dims [4096, 4096] strides [8192] box [64, 128] swizzle 128"; an im2col map adds
  // "im2col lower [..] upper [..] element strides [..]" and its box is [channels, pixels].
  std::string text() const;
};

// One parameter of a kernel entry, in order.
struct KernelArg {
  // LaunchSplits: a split reduction's count of splits at this launch (long long), the split
  // kernel's grid.y ([Note: splits per launch] in kiln/config/reduce.h), read by it and its finish;
  // or a chunked strided scan's count of chunks, scan_strided_totals' grid.y ([Note: chunks per
  // launch] in kiln/config/scan.h), read by it and scan_strided.
  // DynValue: an extent computed from dyn dims at each launch (`value`), passed as a kiln::DynDim
  // (with its division constants) and read by the template's body: a dyn pool's extents ([Note:
  // dyn pooled axes] in plan_pool.cpp).
  enum class Kind { Buffer, Scalar, DynDim, TensorMap, LaunchSplits, DynValue } kind = Kind::Buffer;
  int buffer = -1;               // Kind::Buffer, Kind::TensorMap (the tensor mapped)
  int param = -1;                // Kind::Scalar: index into Ir::params
  int kernel = -1;               // Kind::LaunchSplits: the split kernel's index in Plan::kernels
  std::string dim;               // Kind::DynDim
  ir::DimExpr value;             // Kind::DynValue
  DType dtype = DType::f32;
  bool writes = false;           // Kind::Buffer: the kernel stores into it
  std::string name;              // C++ parameter name
  TensorMapSpec tensor_map;      // Kind::TensorMap
  // Kind::TensorMap of a kernel with a dyn extent (dyn_outer): the index into tensor_map.dims that
  // a launch sets to that extent, -1 none ([Note: dyn matmul] in plan_contraction.cpp).
  int map_dyn_dim = -1;
  // Kind::TensorMap whose extents dyn dims size ([Note: dyn attention] in plan_contraction.cpp):
  // each map dim's extent and each stride (elements) as expressions of the dims, which a launch
  // evaluates (empty: the map is tensor_map, or map_dyn_dim's).
  std::vector<ir::DimExpr> map_dims_at, map_strides_at;
};

struct PlannedKernel {
  std::string entry;             // extern "C" symbol
  std::string template_name;     // "elementwise", "reduce_inner", ...
  std::string reason;            // why this template and parameters (shown by kiln gen)
  ir::NodeId anchor = -1;        // -1: an elementwise kernel
  struct Store {
    ir::NodeId node;             // the value stored (the anchor, or the end of its epilogue)
    int buffer;
  };
  std::vector<Store> stores;
  KernelConfig config;           // the family's typed config (kiln/config/<family>.h)
  std::vector<KernelArg> args;
  Dim3 grid, block;
  unsigned shared_bytes = 0;
  int min_blocks = 1;             // CTAs per SM the registers must allow (__launch_bounds__'s 2nd argument)
  bool setmaxnreg = false;        // names min_blocks in __launch_bounds__ even when 1: setmaxnreg needs that cap
  int cluster = 1;                // CTAs per thread-block cluster along x (__cluster_dims__); grid.x a multiple
  bool index64 = false;          // some tensor of the kernel has >= 2^31 elements
  bool args_done = false;        // a follow-up whose rule filled args and index64 itself
  // A matmul kernel whose rows are every batch's rows of M ([Note: folded batches] in
  // plan_contraction.cpp): the epilogue splits a row into the batch coordinates and m.
  bool folded_batches = false;
  // Workspace buffers the runtime zeroes on the launch stream right before this kernel (a
  // cuMemsetD32Async each: stream-ordered and graph-capturable). Every one is a Workspace
  // buffer whose byte size is a multiple of 4. See [Note: zeroed workspaces] in plan.cpp.
  std::vector<int> zero_before;

  // The factors of a kernel's dyn extent, which its config holds as 0 and launch_for evaluates
  // at each launch: a memory-family kernel's rows ([Note: dyn rows] in plan_memory.cpp), a
  // matmul's M or batches ([Note: dyn matmul] in plan_contraction.cpp).
  std::vector<ir::DimExpr> dyn_outer;
  // The dyn extent at a launch's dims: the product of dyn_outer (a kernel that has one).
  std::int64_t dyn_extent(const std::map<std::string, std::int64_t>& dims) const;
  // The factors of a memory-family kernel's dyn length, the extent of the axes it works along,
  // which its config holds as 0 and the kernel computes from its dim_ arguments ([Note: dyn
  // lengths] in plan_memory.cpp). Its grid never depends on it.
  std::vector<ir::DimExpr> dyn_len;
  // The factors of a strided reduction's dyn inner extent (the axes after the reduced ones), which
  // its config holds as 0: the kernel computes it from its dim_ arguments and launch_for the grid
  // ([Note: dyn inner extents] in plan_memory.cpp).
  std::vector<ir::DimExpr> dyn_inner;

  // KernelArg::Kind::DynValue arguments: appends one (an i64 extent of the dyn dims, `value`);
  // `name`'s value at a launch's dims (it must be an argument).
  void add_dyn_value(const std::string& name, const ir::DimExpr& value);
  std::int64_t dyn_value(const std::string& name, const std::map<std::string, std::int64_t>& dims) const;
  bool has_dyn_value(const std::string& name) const;

  // grid, block and shared_bytes from a family's geometry rule (kiln/config/<family>.h).
  void set_launch(const launch::Geometry& g);
  // Whether a dyn dim is among the arguments (its extents and grid are a launch's).
  bool reads_dyn_dims() const;
};

struct Plan {
  std::shared_ptr<const ir::BoundIr> bound;
  Target target;
  std::vector<Buffer> buffers;
  std::vector<PlannedKernel> kernels;     // launch order
  std::map<ir::NodeId, int> leaves;       // node -> buffer that kernels load it from
  std::map<std::string, DynBucket> dyn_buckets;   // each dyn dim's bucket: all the plan assumed of it
  // Per dyn dim that some kernel's plan changes with, ascending ([Note: dyn size classes]); the
  // dim's class is dyn_class(thresholds, its bound value). A key may also be a product of dyn dims
  // ("B*S", [Note: size classes of a product]).
  std::map<std::string, std::vector<std::int64_t>> dyn_thresholds;
  // Each dyn row length whose alignment some kernel's plan assumed: the bound value's
  // dyn_row_class, which every launch's value must share ([Note: dyn row alignment]).
  std::map<std::string, int> dyn_row_align;
  // One per anchor with picks (a TMA engine product, a row norm, a reduction, a row scan, an
  // elementwise kernel's first stored node): what the tuner may vary ([Note: tuned picks]).
  struct Tunable {
    int anchor = -1;                     // the anchor's node
    std::string what;                    // "matmul 4096x4096x4096 batch 1", "softmax: 4096 rows of 8192"
    Pick heuristic, chosen;              // chosen: the heuristic's, or the applied pick
    std::string origin;                  // "heuristic", or the applied pick's origin
    std::vector<Pick> candidates;        // every legal pick (the heuristic's among them)
  };
  std::vector<Tunable> tunables;
  // What the composition passes did, a line each: a pattern fused into one kernel, or why not.
  std::vector<std::string> fusions;

  const ir::Ir& ir() const { return *bound->ir; }
  // The stored tensor a memory-family template streams for the anchor operand `operand` (its
  // `in`, whose element type sizes the template's vectors and tiles): the operand itself when it
  // is a leaf, else a leaf of its expression with its shape (same flat index), else one with as
  // many elements; -1 when none is. The planner sizes vectors by it, the emitter passes it.
  ir::NodeId streamed_leaf(ir::NodeId operand) const;
  // Bytes of buffer b at a launch's dims (every dim of the op; see launch_for): an intermediate
  // with a dyn extent is sized by the launch, every other buffer as planned.
  std::int64_t buffer_bytes(std::size_t b, const std::map<std::string, std::int64_t>& dims) const;
  std::string text() const;               // readable, stable
};

Plan make_plan(std::shared_ptr<const ir::BoundIr> bound, const Target& target);

// The composition pass make_plan runs first (fuse_norms.cpp, [Note: norm compositions]): `bound`
// with each norm written out made one Normalize node where the rownorm family takes it (the same
// graph when none is); a line per match in `fusions`. A decision that depends on a dyn dim's size
// class (a strided norm over dyn rows fuses where its columns fill the GPU) adds the dim's
// thresholds to `dyn_thresholds` ([Note: dyn size classes]), when given.
using DynThresholds = std::map<std::string, std::vector<std::int64_t>>;
std::shared_ptr<const ir::BoundIr> fuse_norms(std::shared_ptr<const ir::BoundIr> bound, const Target& target,
                                              std::vector<std::string>& fusions,
                                              DynThresholds* dyn_thresholds = nullptr);

// The attention composition pass (fuse_attention.cpp, [Note: attention compositions]): each
// softmax(q·kᵀ · scale [causal]) · v written out made one Attention node where the attention
// family takes it; a line per match in `fusions`.
std::shared_ptr<const ir::BoundIr> fuse_attention(std::shared_ptr<const ir::BoundIr> bound, const Target& target,
                                                  std::vector<std::string>& fusions);
// The row dims of the norm compositions in `bound` that fuse only with their rows baked in (rows
// longer than a block's registers: [Note: long norm rows stay baked in under the generic default]
// in fuse_norms.cpp); generic_dims keeps them static.
std::set<std::string> norm_rows_kept_static(const ir::BoundIr& bound);

// The pass after them (expand_batches.cpp, [Note: matmul operands with some batch dims]): each
// matmul operand with only some of the product's batch dims made an expand to all of them (stored
// first by the planner); a line per operand in `fusions`.
std::shared_ptr<const ir::BoundIr> expand_matmul_batches(std::shared_ptr<const ir::BoundIr> bound,
                                                         std::vector<std::string>& fusions);
// Whether a gemm template addresses a matmul operand of `operand`'s extents with one batch stride
// in a product of `out`'s: no batch (stride 0), or all of the output's batch dims (right-aligned,
// any leading dims of the output it lacks extents of 1).
bool batch_addressable(const std::vector<std::int64_t>& operand, const std::vector<std::int64_t>& out);

// Every graph pass, in make_plan's order: fuse_norms, fuse_attention, then expand_matmul_batches.
std::shared_ptr<const ir::BoundIr> fuse_compositions(std::shared_ptr<const ir::BoundIr> bound, const Target& target,
                                                     std::vector<std::string>& fusions,
                                                     DynThresholds* dyn_thresholds = nullptr);

// The dims that can be `dyn` without the planner refusing the op, at no measured cost: those that
// size no anchor's tensors, or only the rows of memory-bound anchors ([Note: dyn rows] in
// plan_memory.cpp) and the batch (axis 0) of convs and pools, and are a whole extent of some input
// or output (where a launch reads the value), and are not marked `static`. Options::shapes =
// "generic" (the default) makes them dyn.
std::set<std::string> generic_dims(const ir::Ir& ir);

// The launch of kernel k of a plan with dyn dims for the dims `dims` (every dim of the op, the
// dyn ones at a launch's values, each in its planned bucket): the family's geometry rule over
// the run-time extents. A kernel without dyn dims keeps its planned launch.
launch::Geometry launch_for(const Plan& plan, std::size_t k, const std::map<std::string, std::int64_t>& dims);
// A fused attention kernel's extents as expressions of the dims, from its node's shapes: the
// query rows, the keys, the batches and the inner batch dim (1 without batch dims) ([Note: dyn
// attention] in plan_contraction.cpp). The launch evaluates them; the emitter writes them as code.
struct AttentionExtentExprs {
  ir::DimExpr s, t, batch, inner;
};
AttentionExtentExprs attention_extent_exprs(const ir::Ir& ir, const PlannedKernel& kernel);
// The value of a kernel argument that a launch computes (Kind::LaunchSplits) at the launch's dims.
std::int64_t launch_value(const Plan& plan, const KernelArg& arg, const std::map<std::string, std::int64_t>& dims);

}  // namespace kiln
