#include <cstdio>
#include <exception>

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;   // --help is success; any other parse failure is bad usage
  } catch (const kiln::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
