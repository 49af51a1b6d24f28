#!/usr/bin/env bash
# The wheel of the Python package, built from an existing build folder (BUILD, configured by
# `make`, so nothing is compiled twice: scikit-build-core reuses it), installed into a fresh
# virtual environment with no compiler reachable, where the CPU tests of python/tests run against
# the installed package (not the source tree) and the `kiln` command is on PATH.
#   bash scripts/test_wheel.sh [BUILD]        (default: build)
# A user builds the same wheel with `pip wheel .` (its own build folder, Release).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(cd "${1:-build}" && pwd)
PY="$BUILD/pyenv/bin/python"
[ -x "$PY" ] || { echo "test_wheel: $PY is missing: run make first" >&2; exit 1; }
"$PY" -m pip install -q scikit-build-core
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The same configuration as the build folder's, so that scikit-build-core's configure changes nothing
# that would rebuild it.
"$PY" -m pip wheel . -q --no-build-isolation --no-deps -w "$WORK/wheel" -Cbuild-dir="$BUILD" \
  -Ccmake.build-type=RelWithDebInfo -Ccmake.define.KILN_BUILD_TESTS=ON -Ccmake.define.KILN_INSTALL=ON
wheel=$(ls "$WORK"/wheel/kiln-*.whl)
"$PY" -m venv "$WORK/venv"
CC=/bin/false CXX=/bin/false "$WORK/venv/bin/python" -m pip install -q "$wheel" pytest numpy
cp -r python/tests "$WORK/tests"
(cd "$WORK" && PATH="$WORK/venv/bin:$PATH" KILN_SPECS="$OLDPWD/specs" "$WORK/venv/bin/python" - <<'PY'
import pathlib, subprocess, sys
import kiln
where = pathlib.Path(kiln.__file__).resolve()
assert "venv" in where.parts, f"kiln was imported from {where}, not the installed wheel"
assert where.with_name("_kiln.pyi").is_file() and where.with_name("py.typed").is_file(), "stubs missing from the wheel"
version = subprocess.run(["kiln", "--version"], capture_output=True, text=True, check=True).stdout
assert kiln.__version__ in version, version
print(f"test_wheel: kiln {kiln.__version__} from {where.parent}; `kiln --version`: {version.strip()}")
PY
)
cd "$WORK" && PATH="$WORK/venv/bin:$PATH" KILN_SPECS="$OLDPWD/specs" "$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider tests
