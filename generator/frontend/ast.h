// The parsed form of a spec file: what the user wrote, with locations, nothing
// checked yet. The checker turns one OpDecl into an ir::Ir.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "generator/ir/ir.h"

namespace kiln::ast {

using ir::SourceLoc;

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind : std::uint8_t { Int, Float, Bool, String, Name, List, Unary, Binary, Call };
enum class UnaryOp : std::uint8_t { Neg };
enum class BinaryOp : std::uint8_t { Add, Sub, Mul, Div, Eq, Ne, Lt, Le, Gt, Ge };

const char* binary_op_spelling(BinaryOp op);   // "+", "==", ...

struct KeywordArg {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

struct Expr {
  ExprKind kind = ExprKind::Int;
  SourceLoc loc;                 // first token (a call: its name; a binary op: the operator)
  std::uint64_t int_value = 0;   // Int: exact, 0 .. 2^64-1 (a minus sign is a Unary node)
  double float_value = 0;        // Float
  bool bool_value = false;       // Bool
  std::string text;              // Name, String, Call (callee), Int/Float (spelling)
  UnaryOp unary_op = UnaryOp::Neg;
  BinaryOp binary_op = BinaryOp::Add;
  std::vector<ExprPtr> args;     // Unary: 1, Binary: 2, Call: positional, List: items
  std::vector<KeywordArg> kwargs;   // Call
  int height = 1;                // nesting depth of this subtree (bounded by the parser)
};

struct TypeRef {
  std::string dtype;             // "f32", ... as written (checked later)
  SourceLoc loc;
  bool has_shape = false;        // `f32[...]` (tensor) vs `f32` (scalar)
  // An extent: a dim name, an integer, or arithmetic of them (`2 * D`, `(H - 1) / 2 + 1`):
  // op is '+', '-', '*' or '/' (floor division) of the two operands; 0 for a name or an integer.
  struct Entry {
    bool is_name = true;
    std::string name;
    std::int64_t value = 0;
    SourceLoc loc;
    char op = 0;
    std::vector<Entry> operands;
    int height = 1;   // nesting depth (bounded by the parser, as an expression's)
  };
  std::vector<Entry> shape;
};

struct DimDecl {
  std::string name;
  SourceLoc loc;
  bool dynamic = false;
  bool fixed = false;   // `static`: baked in under every Options::shapes
  std::optional<std::int64_t> default_value;
  SourceLoc value_loc;
};

struct ConstDecl {
  std::string name;
  SourceLoc loc;
  std::string type;              // "int", "f32", "bool", ... as written
  SourceLoc type_loc;
  ExprPtr default_value;         // may be null
};

struct InputDecl {
  std::string name;
  SourceLoc loc;
  TypeRef type;
};

// A `let` or an `out`, in source order (a later one may use an earlier one).
struct Binding {
  bool is_output = false;
  std::string name;
  SourceLoc loc;
  std::optional<TypeRef> type;   // `out y: f32[B, N] = ...`
  ExprPtr value;                 // null: `out y: T` with no definition
};

struct OpDecl {
  std::string name;
  SourceLoc loc;
  std::vector<DimDecl> dims;
  std::vector<ConstDecl> consts;
  std::vector<InputDecl> inputs;
  std::vector<Binding> bindings;
};

struct File {
  std::vector<OpDecl> ops;
};

}  // namespace kiln::ast
