// Helpers shared by the kiln subcommands.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::ir {
struct Ir;
}

namespace kiln::cli {

// `--small` of kiln run and kiln build: every dim of the op not already in
// `dims` (not given with -D) is capped at kSmallDim, so one quick specialization per op is the
// same whichever command asks for it (a pack built with --small serves run --small).
inline constexpr std::int64_t kSmallDim = 64;
void cap_small_dims(const ir::Ir& ir, std::map<std::string, std::int64_t>& dims);

// "-D NAME=VALUE" items. Throws CLI::ValidationError (bad usage, exit 2) when malformed.
std::map<std::string, std::string> parse_defines(const std::vector<std::string>& items);

// Splits defines into the op's dims and consts; names the op lacks are skipped
// (a -D may be meant for another op of the file). `used` collects the names taken.
Bindings bindings_for(const std::vector<std::string>& dim_names, const std::vector<std::string>& const_names,
                      const std::map<std::string, std::string>& defines, std::map<std::string, bool>* used = nullptr);
inline Bindings bindings_for(const Op& op, const std::map<std::string, std::string>& defines,
                             std::map<std::string, bool>* used = nullptr) {
  return bindings_for(op.dim_names(), op.const_names(), defines, used);
}

// Throws CLI::ValidationError (exit code 2, usage) naming every -D that no op of the run used.
void check_all_used(const std::map<std::string, std::string>& defines, const std::map<std::string, bool>& used);

Precision parse_precision(const std::string& text);   // ieee, tf32, 3xtf32, fp32 (accurate)

// One line of a --shapes file (kiln build, kiln tune): "OP NAME=VALUE ..." ("*" for every op);
// '#' starts a comment.
struct ShapeLine {
  std::string op;
  std::map<std::string, std::string> values;
  int line = 0;
  bool selected = false;          // an op being built is this line's op (or it is "*")
  std::set<std::string> known;    // the dims and consts of the ops it selects
};
// Throws ArgumentError naming the file and line for a malformed item.
std::vector<ShapeLine> read_shapes(const std::string& path);

}  // namespace kiln::cli
