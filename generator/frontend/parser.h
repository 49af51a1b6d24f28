// Tokens -> ast::File. Recovers at statement boundaries so one pass reports
// several errors; every recursion is bounded (kMaxNesting) so no input can
// exhaust the stack.
#pragma once

#include "generator/frontend/ast.h"
#include "generator/support/diagnostics.h"
#include "generator/frontend/lexer.h"

namespace kiln {

inline constexpr int kMaxNesting = 200;
// Lists and calls hold at most this many items: axes, permutations and
// arguments are short, and the bound keeps garbage input from costing memory.
inline constexpr std::size_t kMaxItems = 1024;

// Parses every op; errors go to `diagnostics`. Ops whose statements failed are
// still returned with what parsed (the caller stops when there are errors).
ast::File parse(Lexer& lexer, Diagnostics& diagnostics);

}  // namespace kiln
