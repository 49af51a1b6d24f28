// The kiln CLI: one file per subcommand, each adding itself to the app.
// Exit codes: 0 success, 1 the work failed (spec errors, wrong results, ...), 2 bad usage.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::cli {

// Each add_* registers a subcommand whose callback stores its exit code in `exit_code`.
void add_check_command(CLI::App& app, int& exit_code);   // tools/cmd_check.cpp
void add_ref_command(CLI::App& app, int& exit_code);     // tools/cmd_ref.cpp
void add_gen_command(CLI::App& app, int& exit_code);     // tools/cmd_gen.cpp
void add_build_command(CLI::App& app, int& exit_code);   // tools/cmd_build.cpp
void add_run_command(CLI::App& app, int& exit_code);     // tools/cmd_run.cpp
void add_cache_command(CLI::App& app, int& exit_code);   // tools/cmd_cache.cpp
void add_bench_command(CLI::App& app, int& exit_code);   // tools/cmd_bench.cpp
void add_tune_command(CLI::App& app, int& exit_code);    // tools/cmd_tune.cpp

}  // namespace kiln::cli
