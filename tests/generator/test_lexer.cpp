#include <doctest/doctest.h>

#include "generator/frontend/lexer.h"

namespace {

using kiln::TokenKind;

struct Lexed {
  std::vector<kiln::Token> tokens;
  std::vector<kiln::Diagnostic> diagnostics;
};

Lexed lex_text(std::string text) {
  auto source = std::make_shared<const kiln::SourceFile>("t.kiln", std::move(text));
  kiln::Diagnostics diagnostics(source);
  Lexed out;
  out.tokens = kiln::lex(*source, diagnostics);
  out.diagnostics = diagnostics.all();
  return out;
}

std::vector<TokenKind> kinds(const Lexed& l) {
  std::vector<TokenKind> k;
  for (const auto& t : l.tokens) k.push_back(t.kind);
  return k;
}

}  // namespace

TEST_CASE("lexer: keywords, names, punctuation and operators") {
  auto l = lex_text("op dims dyn const in let out true false f32 _x9 ( ) { } [ ] , : = + - * / == != < <= > >=");
  CHECK(l.diagnostics.empty());
  std::vector<TokenKind> want = {
      TokenKind::KwOp, TokenKind::KwDims, TokenKind::KwDyn, TokenKind::KwConst, TokenKind::KwIn,
      TokenKind::KwLet, TokenKind::KwOut, TokenKind::KwTrue, TokenKind::KwFalse, TokenKind::Ident,
      TokenKind::Ident, TokenKind::LParen, TokenKind::RParen, TokenKind::LBrace, TokenKind::RBrace,
      TokenKind::LBracket, TokenKind::RBracket, TokenKind::Comma, TokenKind::Colon, TokenKind::Assign,
      TokenKind::Plus, TokenKind::Minus, TokenKind::Star, TokenKind::Slash, TokenKind::EqEq,
      TokenKind::NotEq, TokenKind::Less, TokenKind::LessEq, TokenKind::Greater, TokenKind::GreaterEq,
      TokenKind::End};
  CHECK(kinds(l) == want);
  CHECK(l.tokens[9].text == "f32");
  CHECK(l.tokens[10].text == "_x9");
}

TEST_CASE("lexer: numbers") {
  auto l = lex_text("0 42 9223372036854775807 1.5 .25 2e3 1e-5 3.");
  REQUIRE(l.diagnostics.empty());
  CHECK(l.tokens[0].kind == TokenKind::Int);
  CHECK(l.tokens[2].int_value == INT64_MAX);
  CHECK(l.tokens[3].kind == TokenKind::Float);
  CHECK(l.tokens[3].float_value == 1.5);
  CHECK(l.tokens[4].float_value == 0.25);
  CHECK(l.tokens[5].kind == TokenKind::Float);
  CHECK(l.tokens[5].float_value == 2000.0);
  CHECK(l.tokens[6].float_value == doctest::Approx(1e-5));
  CHECK(l.tokens[7].float_value == 3.0);
}

TEST_CASE("lexer: names are at most 255 characters") {
  // A 1 MB op name once reached NVRTC, which corrupted its heap and aborted kiln build.
  auto ok = lex_text(std::string(255, 'a'));
  CHECK(ok.diagnostics.empty());
  auto l = lex_text("op " + std::string(1000000, 'a') + " {");
  REQUIRE(l.diagnostics.size() == 1);
  CHECK(l.diagnostics[0].message == "a name of 1000000 characters; names are at most 255");
  CHECK(l.diagnostics[0].column == 4);
}

TEST_CASE("lexer: a leading UTF-8 byte-order mark is skipped") {
  auto l = lex_text("\xef\xbb\xbfop a");
  REQUIRE(l.diagnostics.empty());
  REQUIRE(l.tokens.size() == 3);
  CHECK(l.tokens[0].text == "op");
  CHECK(l.tokens[0].loc.line == 1);
}

TEST_CASE("lexer: strings, comments and locations") {
  auto l = lex_text("# a comment with UTF-8: é ∑\n  layout=\"NHWC\" # trailing\nx");
  REQUIRE(l.diagnostics.empty());
  REQUIRE(l.tokens.size() == 5);
  CHECK(l.tokens[0].loc.line == 2);
  CHECK(l.tokens[0].loc.column == 3);
  CHECK(l.tokens[2].kind == TokenKind::String);
  CHECK(l.tokens[2].text == "NHWC");
  CHECK(l.tokens[3].loc.line == 3);
  CHECK(l.tokens[4].kind == TokenKind::End);
}

TEST_CASE("lexer: errors are located and lexing goes on") {
  auto l = lex_text("x $ y\n99999999999999999999 z\n\"open\n1e999 \xff ?");
  REQUIRE(l.diagnostics.size() == 6);
  CHECK(l.diagnostics[0].message == "unexpected character '$'");
  CHECK(l.diagnostics[0].column == 3);
  CHECK(l.diagnostics[1].message == "integer literal 99999999999999999999 is too large (the largest is 18446744073709551615)");
  CHECK(l.diagnostics[1].line == 2);
  CHECK(l.diagnostics[2].message == "unterminated string literal; expected a closing '\"' on the same line");
  CHECK(l.diagnostics[3].message == "number 1e999 is out of range for a 64-bit float");
  CHECK(l.diagnostics[4].message == "invalid UTF-8 byte 0xFF; spec files are UTF-8 text");
  CHECK(l.diagnostics[4].line == 4);
  CHECK(l.diagnostics[4].column == 7);
  CHECK(l.diagnostics[5].message == "unexpected character '?'");
}

TEST_CASE("lexer: NUL bytes and invalid UTF-8 in comments are errors") {
  static const char text[] = "x\0y # ok \xc3\xa9 bad \xc3\x28";
  auto l = lex_text(std::string(text, sizeof text - 1));
  REQUIRE(l.diagnostics.size() == 2);
  CHECK(l.diagnostics[0].message == "unexpected NUL byte; spec files are UTF-8 text");
  CHECK(l.diagnostics[0].column == 2);
  CHECK(l.diagnostics[1].message == "invalid UTF-8 byte 0xC3; spec files are UTF-8 text");
}

TEST_CASE("lexer: diagnostics stop at the cap on garbage") {
  std::string garbage(100000, '$');
  auto l = lex_text(garbage);
  CHECK(l.diagnostics.size() == kiln::Diagnostics::kMaxErrors + 1);
  CHECK(l.diagnostics.back().message.find("too many errors") != std::string::npos);
}
