#include "generator/frontend/lexer.h"

#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace kiln {

const char* token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::Ident: return "identifier";
    case TokenKind::Int: return "integer";
    case TokenKind::Float: return "number";
    case TokenKind::String: return "string";
    case TokenKind::KwOp: return "'op'";
    case TokenKind::KwDims: return "'dims'";
    case TokenKind::KwDyn: return "'dyn'";
    case TokenKind::KwConst: return "'const'";
    case TokenKind::KwIn: return "'in'";
    case TokenKind::KwLet: return "'let'";
    case TokenKind::KwOut: return "'out'";
    case TokenKind::KwTrue: return "'true'";
    case TokenKind::KwFalse: return "'false'";
    case TokenKind::LParen: return "'('";
    case TokenKind::RParen: return "')'";
    case TokenKind::LBrace: return "'{'";
    case TokenKind::RBrace: return "'}'";
    case TokenKind::LBracket: return "'['";
    case TokenKind::RBracket: return "']'";
    case TokenKind::Comma: return "','";
    case TokenKind::Colon: return "':'";
    case TokenKind::Assign: return "'='";
    case TokenKind::Plus: return "'+'";
    case TokenKind::Minus: return "'-'";
    case TokenKind::Star: return "'*'";
    case TokenKind::Slash: return "'/'";
    case TokenKind::At: return "'@'";
    case TokenKind::EqEq: return "'=='";
    case TokenKind::NotEq: return "'!='";
    case TokenKind::Less: return "'<'";
    case TokenKind::LessEq: return "'<='";
    case TokenKind::Greater: return "'>'";
    case TokenKind::GreaterEq: return "'>='";
    case TokenKind::End: return "end of file";
  }
  return "?";
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::Ident: return fmt::format("identifier '{}'", token.text);
    case TokenKind::Int:
    case TokenKind::Float: return fmt::format("number {}", token.text);
    case TokenKind::String: return "a string";
    default: return token_kind_name(token.kind);
  }
}

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

// Length of a valid UTF-8 sequence at s[i], 0 when invalid (overlongs and
// surrogates included).
std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  unsigned char c1 = b(i + 1);
  if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
  if (c == 0xED && c1 >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && c1 < 0x90) return 0;   // overlong
  if (c == 0xF4 && c1 >= 0x90) return 0;  // > U+10FFFF
  return n;
}

}  // namespace

struct Lexer::Impl {
  Impl(const SourceFile& source, Diagnostics& diagnostics) : src_(source), text_(source.text), diag_(diagnostics) {
    // A UTF-8 byte-order mark, as some editors write, is not part of the text.
    if (text_.compare(0, 3, "\xef\xbb\xbf") == 0) pos_ = 3;
  }

  Token next() {
    while (true) {
      skip_space_and_comments();
      if (pos_ >= text_.size() || diag_.too_many()) break;
      Token token;
      if (lex_one(token)) return token;
    }
    Token end;
    end.kind = TokenKind::End;
    end.loc = loc_at(text_.size());
    return end;
  }

 private:
  SourceLoc loc_at(std::size_t offset) const {
    auto [line, col] = src_.position(offset);
    return {line, col};
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        // Comments may hold any UTF-8, but not invalid bytes: a file that is not
        // text should be reported, not silently half-read.
        while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') {
          std::size_t n = utf8_sequence(text_, pos_);
          if (n == 0 || text_[pos_] == '\0') {
            bad_byte(pos_);
            n = 1;
          }
          pos_ += n;
        }
      } else {
        return;
      }
    }
  }

  void bad_byte(std::size_t at) {
    unsigned char c = static_cast<unsigned char>(text_[at]);
    if (c == 0)
      diag_.error(loc_at(at), "unexpected NUL byte; spec files are UTF-8 text");
    else
      diag_.error(loc_at(at), fmt::format("invalid UTF-8 byte 0x{:02X}; spec files are UTF-8 text", c));
  }

  bool lex_one(Token& token) {
    std::size_t start = pos_;
    token.loc = loc_at(start);
    char c = text_[pos_];
    if (is_ident_start(c)) {
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
      // Names reach the generated source (kernel symbols, fields): NVRTC 13 corrupts its heap
      // on a 1 MB identifier, so a name is capped here, where the error has a location.
      if (pos_ - start > kMaxNameLength)
        diag_.error(token.loc, fmt::format("a name of {} characters; names are at most {}", pos_ - start,
                                           kMaxNameLength));
      token.text = text_.substr(start, std::min<std::size_t>(pos_ - start, kMaxNameLength));
      token.kind = keyword_or_ident(token.text);
      return true;
    }
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) return lex_number(token);
    if (c == '"') return lex_string(token);
    ++pos_;
    auto two = [&](char next, TokenKind yes, TokenKind no) {
      if (pos_ < text_.size() && text_[pos_] == next) {
        ++pos_;
        return yes;
      }
      return no;
    };
    switch (c) {
      case '(': token.kind = TokenKind::LParen; break;
      case ')': token.kind = TokenKind::RParen; break;
      case '{': token.kind = TokenKind::LBrace; break;
      case '}': token.kind = TokenKind::RBrace; break;
      case '[': token.kind = TokenKind::LBracket; break;
      case ']': token.kind = TokenKind::RBracket; break;
      case ',': token.kind = TokenKind::Comma; break;
      case ':': token.kind = TokenKind::Colon; break;
      case '+': token.kind = TokenKind::Plus; break;
      case '-': token.kind = TokenKind::Minus; break;
      case '*': token.kind = TokenKind::Star; break;
      case '/': token.kind = TokenKind::Slash; break;
      case '@': token.kind = TokenKind::At; break;
      case '=': token.kind = two('=', TokenKind::EqEq, TokenKind::Assign); break;
      case '<': token.kind = two('=', TokenKind::LessEq, TokenKind::Less); break;
      case '>': token.kind = two('=', TokenKind::GreaterEq, TokenKind::Greater); break;
      case '!':
        if (two('=', TokenKind::NotEq, TokenKind::End) == TokenKind::NotEq) {
          token.kind = TokenKind::NotEq;
          break;
        }
        diag_.error(token.loc, "unexpected character '!'; use not(x) for logical negation or != for inequality");
        return false;
      default: {
        unsigned char u = static_cast<unsigned char>(c);
        if (u >= 0x80) {
          std::size_t n = utf8_sequence(text_, start);
          if (n == 0) {
            bad_byte(start);
            return false;
          }
          pos_ = start + n;
          diag_.error(token.loc, fmt::format("unexpected character '{}'; names are ASCII letters, digits and '_'",
                                             text_.substr(start, n)));
          return false;
        }
        if (u == 0) {
          bad_byte(start);
          return false;
        }
        if (u < 0x20 || u == 0x7F)
          diag_.error(token.loc, fmt::format("unexpected control byte 0x{:02X}", u));
        else if (c == '.')   // (a number's '.' is read with the number)
          diag_.error(token.loc, "unexpected character '.': attributes (x.shape, x.T) are not part of the language; "
                                 "a dim's name is its extent, transpose(x) swaps the last two axes");
        else
          diag_.error(token.loc, fmt::format("unexpected character '{}'", c));
        return false;
      }
    }
    token.text = text_.substr(start, pos_ - start);
    return true;
  }

  static TokenKind keyword_or_ident(const std::string& s) {
    if (s == "op") return TokenKind::KwOp;
    if (s == "dims") return TokenKind::KwDims;
    if (s == "dyn") return TokenKind::KwDyn;
    if (s == "const") return TokenKind::KwConst;
    if (s == "in") return TokenKind::KwIn;
    if (s == "let") return TokenKind::KwLet;
    if (s == "out") return TokenKind::KwOut;
    if (s == "true") return TokenKind::KwTrue;
    if (s == "false") return TokenKind::KwFalse;
    return TokenKind::Ident;
  }

  bool lex_number(Token& token) {
    std::size_t start = pos_;
    bool is_float = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      std::size_t save = pos_++;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (pos_ < text_.size() && is_digit(text_[pos_])) {
        is_float = true;
        while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
      } else {
        pos_ = save;
      }
    }
    token.text = text_.substr(start, pos_ - start);
    // A malformed number is reported once and still yields a number token, so the parser goes
    // on without a cascade of "expected an expression" errors (the spec is rejected anyway).
    if (pos_ < text_.size() && is_ident_char(text_[pos_])) {
      std::size_t bad = pos_;
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
      diag_.error(loc_at(bad), fmt::format("unexpected '{}' after number {}", text_.substr(bad, pos_ - bad), token.text));
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (!is_float) {
      token.kind = TokenKind::Int;
      // Exact over the whole u64 range; the checker decides what fits the type it meets.
      auto [ptr, ec] = std::from_chars(first, last, token.int_value);
      if (ec != std::errc()) {
        diag_.error(token.loc, fmt::format("integer literal {} is too large (the largest is 18446744073709551615)",
                                           token.text.size() > 40 ? token.text.substr(0, 40) + "..." : token.text));
        token.int_value = 1;
      }
      return true;
    }
    token.kind = TokenKind::Float;
    auto [ptr, ec] = std::from_chars(first, last, token.float_value);
    if (ec != std::errc() || !std::isfinite(token.float_value)) {
      diag_.error(token.loc, fmt::format("number {} is out of range for a 64-bit float",
                                         token.text.size() > 40 ? token.text.substr(0, 40) + "..." : token.text));
      token.float_value = 1.0;
    }
    return true;
  }

  bool lex_string(Token& token) {
    ++pos_;
    std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n' && text_[pos_] != '\r') {
      std::size_t n = utf8_sequence(text_, pos_);
      if (n == 0 || text_[pos_] == '\0') {
        bad_byte(pos_);
        n = 1;
      }
      pos_ += n;
    }
    if (pos_ >= text_.size() || text_[pos_] != '"') {
      diag_.error(token.loc, "unterminated string literal; expected a closing '\"' on the same line");
      return false;
    }
    token.kind = TokenKind::String;
    token.text = text_.substr(start, pos_ - start);
    ++pos_;
    return true;
  }

  const SourceFile& src_;
  const std::string& text_;
  Diagnostics& diag_;
  std::size_t pos_ = 0;
};

Lexer::Lexer(const SourceFile& source, Diagnostics& diagnostics) : impl_(std::make_unique<Impl>(source, diagnostics)) {}
Lexer::~Lexer() = default;
Token Lexer::next() { return impl_->next(); }

std::vector<Token> lex(const SourceFile& source, Diagnostics& diagnostics) {
  Lexer lexer(source, diagnostics);
  std::vector<Token> tokens;
  do tokens.push_back(lexer.next());
  while (tokens.back().kind != TokenKind::End);
  return tokens;
}

}  // namespace kiln
