// Placeholder until the `kiln build` command lands.
#include "tools/commands.h"

namespace kiln::cli {

void add_build_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("build", "(not built yet)");
  cmd->callback([&exit_code] { exit_code = 2; });
}

}  // namespace kiln::cli
