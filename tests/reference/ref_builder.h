// Builds small BoundIr graphs by hand for the reference interpreter's tests, with
// concrete shapes only (no spec text, no DimExpr).
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "generator/ir/ir.h"
#include "reference/reference.h"

namespace kiln::test {

using Dims = std::vector<std::int64_t>;

class IrBuilder {
 public:
  IrBuilder() : ir_(std::make_shared<ir::Ir>()) { ir_->op_name = "test_op"; }

  ir::NodeId input(const std::string& name, DType dtype, Dims shape) {
    const ir::NodeId id = add(ir::OpKind::Input, dtype, {}, std::move(shape));
    ir_->nodes.back().name = name;
    ir::Param p;
    p.name = name;
    p.node = id;
    p.dtype = dtype;
    ir_->params.push_back(p);
    return id;
  }
  ir::NodeId scalar(const std::string& name, DType dtype) {
    const ir::NodeId id = add(ir::OpKind::Scalar, dtype, {}, {});
    ir_->nodes.back().name = name;
    ir::Param p;
    p.name = name;
    p.node = id;
    p.is_tensor = false;
    p.dtype = dtype;
    ir_->params.push_back(p);
    return id;
  }
  ir::NodeId literal(double value, DType dtype) {
    const ir::NodeId id = add(ir::OpKind::Literal, dtype, {}, {});
    ir_->nodes.back().literal = value;
    return id;
  }
  // Any other node; set attributes through last() right after.
  ir::NodeId add(ir::OpKind kind, DType dtype, std::vector<ir::NodeId> operands, Dims shape) {
    ir::Node n;
    n.kind = kind;
    n.dtype = dtype;
    n.operands = std::move(operands);
    ir_->nodes.push_back(n);
    shapes_.push_back(std::move(shape));
    return static_cast<ir::NodeId>(ir_->nodes.size() - 1);
  }
  ir::Node& last() { return ir_->nodes.back(); }
  void output(const std::string& name, ir::NodeId id) {
    ir::OutputDecl o;
    o.name = name;
    o.node = id;
    ir_->outputs.push_back(o);
  }
  ir::BoundIr bind() const {
    ir::BoundIr b;
    b.ir = ir_;
    b.shapes = shapes_;
    return b;
  }

 private:
  std::shared_ptr<ir::Ir> ir_;
  std::vector<Dims> shapes_;
};

// Runs a graph with one output on the given inputs.
inline ref::HostTensor run1(const IrBuilder& b, const std::vector<ref::HostValue>& inputs) {
  auto outs = ref::evaluate(b.bind(), inputs);
  return outs.at(0);
}

inline std::vector<double> iota(std::int64_t n, double start = 0, double step = 1) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<double>(i);
  return v;
}

// Deterministic pseudo-random doubles in [lo, hi) for test data.
inline std::vector<double> noise(std::int64_t n, std::uint64_t seed, double lo = -1, double hi = 1) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x = lo + (hi - lo) * static_cast<double>(s >> 11) * 0x1p-53;
  }
  return v;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

}  // namespace kiln::test
