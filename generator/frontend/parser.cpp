#include "generator/frontend/parser.h"

#include <fmt/format.h>

#include <cstdint>
#include <deque>

namespace kiln {

const char* ast::binary_op_spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
  }
  return "?";
}

namespace {

using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;

// Thrown after a diagnostic was recorded, to unwind to the statement level.
struct ParseFailure {};

std::string at(ir::SourceLoc loc) { return fmt::format("{}:{}", loc.line, loc.column); }

bool starts_statement(TokenKind k) {
  return k == TokenKind::KwDims || k == TokenKind::KwConst || k == TokenKind::KwIn || k == TokenKind::KwLet ||
         k == TokenKind::KwOut;
}

class Parser {
 public:
  Parser(Lexer& lexer, Diagnostics& diagnostics) : lexer_(lexer), diag_(diagnostics) {}

  ast::File file() {
    ast::File result;
    while (peek().kind != TokenKind::End && !diag_.too_many()) {
      if (peek().kind != TokenKind::KwOp) {
        diag_.error(peek().loc, fmt::format("expected 'op' to start an op declaration, found {}", describe(peek())));
        while (peek().kind != TokenKind::End && peek().kind != TokenKind::KwOp) next();
        continue;
      }
      result.ops.push_back(op());
    }
    return result;
  }

 private:
  // References stay valid until the token is consumed (std::deque keeps
  // element addresses on push_back).
  const Token& peek(std::size_t ahead = 0) {
    while (lookahead_.size() <= ahead) lookahead_.push_back(lexer_.next());
    return lookahead_[ahead];
  }
  // The consumed token, valid until the next call.
  const Token& next() {
    peek();
    prev_ = std::move(lookahead_.front());
    lookahead_.pop_front();
    return prev_;
  }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(ir::SourceLoc loc, std::string message) {
    diag_.error(loc, std::move(message));
    throw ParseFailure{};
  }
  const Token& expect(TokenKind kind, const char* what) {
    if (peek().kind != kind)
      fail(peek().loc, fmt::format("expected {}{}, found {}", token_kind_name(kind), what, describe(peek())));
    return next();
  }
  std::string expect_name(const char* what) {
    if (peek().kind != TokenKind::Ident) {
      std::string hint = peek().kind >= TokenKind::KwOp && peek().kind <= TokenKind::KwFalse
                             ? fmt::format(" ({} is a keyword)", describe(peek()))
                             : "";
      fail(peek().loc, fmt::format("expected {}, found {}{}", what, describe(peek()), hint));
    }
    return next().text;
  }

  ast::OpDecl op() {
    ast::OpDecl decl;
    const ir::SourceLoc op_loc = next().loc;
    decl.loc = op_loc;
    try {
      decl.loc = peek().loc;
      decl.name = expect_name("an op name after 'op'");
      expect(TokenKind::LBrace, fmt::format(" to open op '{}'", decl.name).c_str());
    } catch (const ParseFailure&) {
      // Skip to the next op: the body cannot be trusted without its header.
      while (peek().kind != TokenKind::End && peek().kind != TokenKind::KwOp) next();
      return decl;
    }
    while (!diag_.too_many()) {
      TokenKind k = peek().kind;
      if (k == TokenKind::RBrace) {
        next();
        return decl;
      }
      if (k == TokenKind::End || k == TokenKind::KwOp) {
        diag_.error(peek().loc, fmt::format("expected '}}' to close op '{}' started at {}, found {}", decl.name,
                                            at(op_loc), describe(peek())));
        return decl;
      }
      try {
        statement(decl);
        TokenKind after = peek().kind;
        if (!starts_statement(after) && after != TokenKind::RBrace && after != TokenKind::End &&
            after != TokenKind::KwOp)
          fail(peek().loc, fmt::format("expected a new statement (dims, const, in, let, out) or '}}', found {}",
                                       describe(peek())));
      } catch (const ParseFailure&) {
        // Resynchronize at the next statement keyword, '}' or op.
        while (true) {
          TokenKind s = peek().kind;
          if (starts_statement(s) || s == TokenKind::RBrace || s == TokenKind::End || s == TokenKind::KwOp) break;
          next();
        }
      }
    }
    return decl;
  }

  void statement(ast::OpDecl& decl) {
    const Token kw = peek();
    switch (kw.kind) {
      case TokenKind::KwDims:
        next();
        do {
          ast::DimDecl d;
          // Marks before the name: `dyn`, and `static` (a contextual word: only before another
          // name, so a dim or input may still be called static).
          for (;;) {
            const SourceLoc at = peek().loc;
            const bool is_static = peek().kind == TokenKind::Ident && peek().text == "static" &&
                                   (peek(1).kind == TokenKind::Ident || peek(1).kind == TokenKind::KwDyn);
            if (!is_static && peek().kind != TokenKind::KwDyn) break;
            next();
            (is_static ? d.fixed : d.dynamic) = true;
            if (d.fixed && d.dynamic)
              fail(at, "a dim is either dyn (a run-time value) or static (baked in), not both");
          }
          d.loc = peek().loc;
          d.name = expect_name("a dim name");
          if (accept(TokenKind::Assign)) {
            bool negative = accept(TokenKind::Minus);
            d.value_loc = peek().loc;
            const Token& v = expect(TokenKind::Int, fmt::format(" as the default of dim {}", d.name).c_str());
            if (v.int_value > static_cast<std::uint64_t>(INT64_MAX))
              fail(d.value_loc, fmt::format("the default of dim {} is too large (the largest is 9223372036854775807)", d.name));
            d.default_value = negative ? -static_cast<std::int64_t>(v.int_value) : static_cast<std::int64_t>(v.int_value);
          }
          decl.dims.push_back(std::move(d));
        } while (accept(TokenKind::Comma));
        return;
      case TokenKind::KwConst:
        next();
        do {
          ast::ConstDecl c;
          c.loc = peek().loc;
          c.name = expect_name("a const name");
          expect(TokenKind::Colon, fmt::format(" and a type after const {} (e.g. `{}: int = 1`)", c.name, c.name).c_str());
          c.type_loc = peek().loc;
          c.type = expect_name("a const type (int, f32, bool)");
          if (accept(TokenKind::Assign)) c.default_value = expr();
          decl.consts.push_back(std::move(c));
        } while (accept(TokenKind::Comma));
        return;
      case TokenKind::KwIn: {
        next();
        ast::InputDecl in;
        in.loc = peek().loc;
        in.name = expect_name("an input name after 'in'");
        expect(TokenKind::Colon, fmt::format(" and a type after input {} (e.g. `{}: f32[N]`)", in.name, in.name).c_str());
        in.type = type();
        decl.inputs.push_back(std::move(in));
        return;
      }
      case TokenKind::KwLet:
      case TokenKind::KwOut: {
        next();
        ast::Binding b;
        b.is_output = kw.kind == TokenKind::KwOut;
        b.loc = peek().loc;
        b.name = expect_name(b.is_output ? "an output name after 'out'" : "a name after 'let'");
        if (b.is_output && accept(TokenKind::Colon)) b.type = type();
        if (b.is_output && b.type && peek().kind != TokenKind::Assign) {
          decl.bindings.push_back(std::move(b));   // declared only; the checker reports it
          return;
        }
        expect(TokenKind::Assign, fmt::format(" after {} {}", b.is_output ? "out" : "let", b.name).c_str());
        b.value = expr();
        decl.bindings.push_back(std::move(b));
        return;
      }
      default:
        fail(kw.loc, fmt::format("expected a statement (dims, const, in, let, out) or '}}', found {}", describe(kw)));
    }
  }

  ast::TypeRef type() {
    ast::TypeRef t;
    t.loc = peek().loc;
    t.dtype = expect_name("a type (f32, f16, bf16, f64, i32, i64, u64, bool)");
    if (!accept(TokenKind::LBracket)) return t;
    t.has_shape = true;
    ir::SourceLoc open = prev_.loc;
    if (peek().kind != TokenKind::RBracket) {
      do {
        t.shape.push_back(extent_sum());
      } while (accept(TokenKind::Comma));
    }
    if (peek().kind != TokenKind::RBracket)
      fail(peek().loc, fmt::format("expected ']' to close the shape started at {}, found {}", at(open), describe(peek())));
    next();
    return t;
  }

  // ---- extents in a shape: sum < product < name, integer or parenthesized sum
  ast::TypeRef::Entry extent_binary(char op, ast::TypeRef::Entry lhs, ast::TypeRef::Entry rhs, ir::SourceLoc loc) {
    ast::TypeRef::Entry e;
    e.is_name = false;
    e.op = op;
    e.loc = loc;
    e.height = std::max(lhs.height, rhs.height) + 1;
    if (e.height > kMaxNesting)
      fail(loc, fmt::format("the extent is nested too deeply (more than {} levels): a chain of operators counts one "
                            "level per operator",
                            kMaxNesting));
    e.operands.push_back(std::move(lhs));
    e.operands.push_back(std::move(rhs));
    return e;
  }

  // A left-associative chain of `operand`s joined by one precedence level's two operators.
  template <class Operand>
  ast::TypeRef::Entry extent_chain(Operand operand, TokenKind first, char first_op, TokenKind second, char second_op) {
    ast::TypeRef::Entry e = operand();
    while (peek().kind == first || peek().kind == second) {
      const Token op = next();
      e = extent_binary(op.kind == first ? first_op : second_op, std::move(e), operand(), op.loc);
    }
    return e;
  }

  ast::TypeRef::Entry extent_sum() {
    DepthGuard guard(*this, peek().loc);
    return extent_chain([this] { return extent_product(); }, TokenKind::Plus, '+', TokenKind::Minus, '-');
  }

  ast::TypeRef::Entry extent_product() {
    return extent_chain([this] { return extent_primary(); }, TokenKind::Star, '*', TokenKind::Slash, '/');
  }

  ast::TypeRef::Entry extent_primary() {
    ast::TypeRef::Entry e;
    e.loc = peek().loc;
    if (peek().kind == TokenKind::Int) {
      e.is_name = false;
      if (peek().int_value > static_cast<std::uint64_t>(INT64_MAX))
        fail(peek().loc, "a dim in a shape is too large (the largest is 9223372036854775807)");
      e.value = static_cast<std::int64_t>(next().int_value);
    } else if (peek().kind == TokenKind::Ident) {
      e.name = next().text;
    } else if (accept(TokenKind::LParen)) {
      const ir::SourceLoc open = prev_.loc;
      e = extent_sum();
      if (!accept(TokenKind::RParen))
        fail(peek().loc, fmt::format("expected ')' to close the '(' at {}, found {}", at(open), describe(peek())));
    } else {
      fail(peek().loc, fmt::format("expected a dim name, an integer or '(' in the shape, found {}", describe(peek())));
    }
    return e;
  }

  // ---- expressions: comparison < additive < multiplicative < unary < primary
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser, ir::SourceLoc loc) : p(parser) {
      if (++p.depth_ > kMaxNesting) {
        --p.depth_;
        p.fail(loc, fmt::format("expression is nested too deeply (more than {} levels)", kMaxNesting));
      }
    }
    ~DepthGuard() { --p.depth_; }
  };

  ExprPtr make(ExprKind kind, ir::SourceLoc loc) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->loc = loc;
    return e;
  }
  // Left-associative chains grow the tree without recursing in the parser, so
  // the height is checked here too: later passes recurse on it.
  void add_child(Expr& parent, ExprPtr child) {
    if (parent.args.size() >= kMaxItems)
      fail(child->loc, fmt::format("too many items (more than {}) in one list or call", kMaxItems));
    parent.height = std::max(parent.height, child->height + 1);
    if (parent.height > kMaxNesting)
      fail(parent.loc, fmt::format("expression is nested too deeply (more than {} levels): a chain of operators "
                                   "counts one level per operator; split it with let",
                                   kMaxNesting));
    parent.args.push_back(std::move(child));
  }

  ExprPtr expr() {
    DepthGuard guard(*this, peek().loc);
    ExprPtr lhs = additive();
    ast::BinaryOp op;
    switch (peek().kind) {
      case TokenKind::EqEq: op = ast::BinaryOp::Eq; break;
      case TokenKind::NotEq: op = ast::BinaryOp::Ne; break;
      case TokenKind::Less: op = ast::BinaryOp::Lt; break;
      case TokenKind::LessEq: op = ast::BinaryOp::Le; break;
      case TokenKind::Greater: op = ast::BinaryOp::Gt; break;
      case TokenKind::GreaterEq: op = ast::BinaryOp::Ge; break;
      default: return lhs;
    }
    auto e = make(ExprKind::Binary, next().loc);
    e->binary_op = op;
    add_child(*e, std::move(lhs));
    add_child(*e, additive());
    switch (peek().kind) {
      case TokenKind::EqEq: case TokenKind::NotEq: case TokenKind::Less:
      case TokenKind::LessEq: case TokenKind::Greater: case TokenKind::GreaterEq:
        fail(peek().loc, "comparisons do not chain; use and(a < b, b < c)");
      default: break;
    }
    return e;
  }

  ExprPtr additive() {
    ExprPtr lhs = multiplicative();
    while (peek().kind == TokenKind::Plus || peek().kind == TokenKind::Minus) {
      auto e = make(ExprKind::Binary, peek().loc);
      e->binary_op = next().kind == TokenKind::Plus ? ast::BinaryOp::Add : ast::BinaryOp::Sub;
      add_child(*e, std::move(lhs));
      add_child(*e, multiplicative());
      lhs = std::move(e);
    }
    return lhs;
  }

  // '*', '/' and '@' (Python's matrix product: a call of matmul), left to right at one precedence.
  ExprPtr multiplicative() {
    ExprPtr lhs = unary();
    while (peek().kind == TokenKind::Star || peek().kind == TokenKind::Slash || peek().kind == TokenKind::At) {
      if (peek().kind == TokenKind::At) {
        auto e = make(ExprKind::Call, next().loc);
        e->text = "matmul";
        add_child(*e, std::move(lhs));
        add_child(*e, unary());
        lhs = std::move(e);
        continue;
      }
      auto e = make(ExprKind::Binary, peek().loc);
      e->binary_op = next().kind == TokenKind::Star ? ast::BinaryOp::Mul : ast::BinaryOp::Div;
      if (e->binary_op == ast::BinaryOp::Mul && peek().kind == TokenKind::Star)
        fail(e->loc, "'**' is not an operator; write pow(a, b) for a power");
      add_child(*e, std::move(lhs));
      add_child(*e, unary());
      lhs = std::move(e);
    }
    return lhs;
  }

  ExprPtr unary() {
    if (peek().kind != TokenKind::Minus) return postfix();
    DepthGuard guard(*this, peek().loc);
    auto e = make(ExprKind::Unary, next().loc);
    add_child(*e, unary());
    return e;
  }

  // A primary, refusing what PyTorch code writes after one but kiln has no syntax for.
  ExprPtr postfix() {
    ExprPtr e = primary();
    if (peek().kind == TokenKind::LBracket)
      fail(peek().loc, "subscripts (x[...]) are not part of the language: gather(x, index, axis=k) or "
                       "take_along_axis(x, index, axis=k) reads by an index tensor");
    return e;
  }

  ExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Int: {
        auto e = make(ExprKind::Int, t.loc);
        e->int_value = t.int_value;
        e->text = t.text;
        next();
        return e;
      }
      case TokenKind::Float: {
        auto e = make(ExprKind::Float, t.loc);
        e->float_value = t.float_value;
        e->text = t.text;
        next();
        return e;
      }
      case TokenKind::KwTrue:
      case TokenKind::KwFalse: {
        auto e = make(ExprKind::Bool, t.loc);
        e->bool_value = t.kind == TokenKind::KwTrue;
        e->text = t.text;
        next();
        return e;
      }
      case TokenKind::String: {
        auto e = make(ExprKind::String, t.loc);
        e->text = t.text;
        next();
        return e;
      }
      case TokenKind::LParen: {
        ir::SourceLoc open = next().loc;
        ExprPtr inner = expr();
        if (peek().kind != TokenKind::RParen)
          fail(peek().loc, fmt::format("expected ')' to close the '(' at {}, found {}", at(open), describe(peek())));
        next();
        return inner;
      }
      case TokenKind::LBracket: {
        DepthGuard guard(*this, t.loc);
        auto e = make(ExprKind::List, next().loc);
        if (peek().kind != TokenKind::RBracket) {
          do {
            if (peek().kind == TokenKind::RBracket) break;   // trailing comma
            add_child(*e, expr());
          } while (accept(TokenKind::Comma));
        }
        if (peek().kind != TokenKind::RBracket)
          fail(peek().loc, fmt::format("expected ']' to close the list started at {}, found {}", at(e->loc), describe(peek())));
        next();
        return e;
      }
      case TokenKind::Ident: {
        if (peek(1).kind != TokenKind::LParen) {
          auto e = make(ExprKind::Name, t.loc);
          e->text = t.text;
          next();
          return e;
        }
        DepthGuard guard(*this, t.loc);
        auto e = make(ExprKind::Call, t.loc);
        e->text = t.text;
        next();
        next();   // '('
        if (peek().kind != TokenKind::RParen) {
          do {
            if (peek().kind == TokenKind::RParen) break;   // trailing comma
            if (peek().kind == TokenKind::Ident && peek(1).kind == TokenKind::Assign) {
              ast::KeywordArg kw;
              kw.loc = peek().loc;
              kw.name = next().text;
              next();   // '='
              ExprPtr value = expr();
              e->height = std::max(e->height, value->height + 1);
              kw.value = std::move(value);
              if (e->kwargs.size() >= kMaxItems)
                fail(kw.loc, fmt::format("too many items (more than {}) in one list or call", kMaxItems));
              e->kwargs.push_back(std::move(kw));
            } else {
              if (!e->kwargs.empty())
                fail(peek().loc, fmt::format("positional argument after keyword arguments in the call to {}()", e->text));
              add_child(*e, expr());
            }
          } while (accept(TokenKind::Comma));
        }
        if (peek().kind != TokenKind::RParen)
          fail(peek().loc, fmt::format("expected ')' to close the call started at {}, found {}", at(e->loc), describe(peek())));
        next();
        return e;
      }
      default:
        fail(t.loc, fmt::format("expected an expression, found {}", describe(t)));
    }
  }

  Lexer& lexer_;
  Diagnostics& diag_;
  std::deque<Token> lookahead_;
  Token prev_;
  int depth_ = 0;
};

}  // namespace

ast::File parse(Lexer& lexer, Diagnostics& diagnostics) {
  return Parser(lexer, diagnostics).file();
}

}  // namespace kiln
