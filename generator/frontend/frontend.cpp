#include "generator/frontend/frontend.h"

#include <fmt/format.h>

#include "generator/frontend/checker.h"
#include "generator/support/diagnostics.h"
#include "generator/support/file_read.h"
#include "generator/frontend/lexer.h"
#include "generator/frontend/parser.h"

namespace kiln {

std::vector<std::string> SpecFile::op_names() const {
  std::vector<std::string> names;
  if (ast)
    for (const auto& op : ast->ops) names.push_back(op.name);
  return names;
}

SpecFile parse_spec(std::string text, std::string file_name) {
  auto source = std::make_shared<const SourceFile>(std::move(file_name), std::move(text));
  Diagnostics diagnostics(source);
  Lexer lexer(*source, diagnostics);
  auto file = std::make_shared<ast::File>(parse(lexer, diagnostics));
  std::map<std::string, ir::SourceLoc> seen;
  for (const auto& op : file->ops) {
    if (op.name.empty()) continue;
    auto [it, inserted] = seen.emplace(op.name, op.loc);
    if (!inserted)
      diagnostics.error(op.loc, fmt::format("duplicate op '{}': already declared at {}:{}", op.name, it->second.line,
                                            it->second.column));
  }
  if (diagnostics.has_errors()) diagnostics.throw_errors();
  return SpecFile{std::move(source), std::move(file)};
}

SpecFile load_spec_file(const std::string& path) {
  return parse_spec(read_regular_file(path, kMaxSpecBytes, "spec file"), path);
}

namespace {

const ast::OpDecl& find_op(const SpecFile& spec, std::string_view name) {
  for (const auto& op : spec.ast->ops)
    if (op.name == name) return op;
  std::string names;
  for (const auto& op : spec.ast->ops) names += (names.empty() ? "" : ", ") + op.name;
  throw ArgumentError(fmt::format("no op named '{}' in {}{} (it has: {})", name, spec.source->name,
                                  did_you_mean(name, spec.op_names()), names.empty() ? "no ops" : names));
}

void finish(const Diagnostics& diagnostics, std::vector<std::string>* warnings) {
  if (warnings) {
    auto w = diagnostics.rendered_warnings();
    warnings->insert(warnings->end(), w.begin(), w.end());
  }
  if (diagnostics.has_errors()) diagnostics.throw_errors();
}

}  // namespace

std::shared_ptr<const ir::Ir> check_op(const SpecFile& spec, std::string_view op_name,
                                       const Consts& consts, std::vector<std::string>* warnings) {
  const ast::OpDecl& op = find_op(spec, op_name);
  Diagnostics diagnostics(spec.source);
  auto ir = check(op, spec.source, consts, diagnostics);
  finish(diagnostics, warnings);
  return ir;
}

std::vector<std::shared_ptr<const ir::Ir>> check_all(const SpecFile& spec, const Consts& consts,
                                                     std::vector<std::string>* warnings) {
  Diagnostics diagnostics(spec.source);
  std::vector<std::shared_ptr<const ir::Ir>> result;
  for (const auto& op : spec.ast->ops) {
    auto ir = check(op, spec.source, consts, diagnostics);
    if (ir) result.push_back(std::move(ir));
  }
  finish(diagnostics, warnings);
  return result;
}

}  // namespace kiln
