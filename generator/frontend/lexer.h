// Spec text -> tokens. Newlines are not tokens: every statement starts with a
// keyword, so the grammar needs no terminators.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "generator/support/diagnostics.h"

namespace kiln {

enum class TokenKind : std::uint8_t {
  Ident, Int, Float, String,
  KwOp, KwDims, KwDyn, KwConst, KwIn, KwLet, KwOut, KwTrue, KwFalse,
  LParen, RParen, LBrace, RBrace, LBracket, RBracket, Comma, Colon, Assign,
  Plus, Minus, Star, Slash, At, EqEq, NotEq, Less, LessEq, Greater, GreaterEq,
  End,
};

// The longest name (op, dim, const, input, let, output) a spec may use.
inline constexpr std::size_t kMaxNameLength = 255;

const char* token_kind_name(TokenKind kind);   // "identifier", "'('", "end of file", ...

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;          // the spelling (string literals: the contents)
  std::uint64_t int_value = 0;   // Int: the exact value (literals have no sign)
  double float_value = 0;        // Float
  SourceLoc loc;
};

// Produces tokens on demand, so a 10 MB file never holds all its tokens at
// once. Errors go to `diagnostics` and the offending bytes are skipped; at the
// end (or past the error cap) next() returns End tokens forever.
class Lexer {
 public:
  Lexer(const SourceFile& source, Diagnostics& diagnostics);
  ~Lexer();
  Lexer(const Lexer&) = delete;
  Lexer& operator=(const Lexer&) = delete;
  Token next();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Lexes the whole file (for tests and tools); ends with an End token.
std::vector<Token> lex(const SourceFile& source, Diagnostics& diagnostics);

// How a token is quoted in "found ..." messages: 'in', identifier 'x', end of file.
std::string describe(const Token& token);

}  // namespace kiln
