// The kiln CLI. Every failure leaves through one mapping to the exit-code contract
// (kiln::ExitCode, the README's table): a subcommand either returns its code or throws.
#include <cstdio>
#include <exception>
#include <new>

#include "kiln/kiln.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: shape-specialized CUDA kernels from op specs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", KILN_VERSION);
  int exit_code = 0;
  kiln::cli::add_check_command(app, exit_code);
  kiln::cli::add_ref_command(app, exit_code);
  kiln::cli::add_gen_command(app, exit_code);
  kiln::cli::add_build_command(app, exit_code);
  kiln::cli::add_run_command(app, exit_code);
  kiln::cli::add_cache_command(app, exit_code);
  kiln::cli::add_bench_command(app, exit_code);
  kiln::cli::add_tune_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(kiln::ExitCode::usage);   // --help is success
  } catch (const std::exception& e) {
    const kiln::ExitCode code = kiln::exit_code_of(e);
    // kiln's own messages are complete; others get the program's name.
    std::fprintf(stderr, "%s%s\n", dynamic_cast<const kiln::Error*>(&e) ? "" : "kiln: ", e.what());
    if (code == kiln::ExitCode::internal)
      std::fprintf(stderr, "kiln: this is a bug in kiln; please report it with the command and the spec\n");
    return static_cast<int>(code);
  }
  return exit_code;
}
