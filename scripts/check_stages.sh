#!/usr/bin/env bash
# Checks that each stage of the generator includes only itself and earlier stages, and that
# reference/ needs only the IR (generator/README.md, reference/README.md). Prints every
# include that breaks the order, with file:line, and exits 1 if there is one.
#   scripts/check_stages.sh [ROOT]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"

# Stage order: a file under generator/<stage>/ may include generator/<earlier or same>/ only.
stages=(support ir frontend plan emit)
rank() {
  local i
  for i in "${!stages[@]}"; do [ "${stages[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo -1
}

bad=0
report() { echo "$1: $2"; bad=1; }

for dir in generator/*/; do
  stage=$(basename "$dir")
  r=$(rank "$stage")
  [ "$r" -ge 0 ] || { report "$dir" "a folder that is not a stage (${stages[*]}): add it to the order here and in generator/README.md"; continue; }
  while IFS=: read -r file line text; do
    inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$text")
    case "$inc" in
      generator/*/*)
        other=$(cut -d/ -f2 <<<"$inc")
        ro=$(rank "$other")
        if [ "$ro" -lt 0 ] || [ "$ro" -gt "$r" ]; then
          report "$file:$line" "stage '$stage' includes $inc, a later stage"
        fi ;;
      runtime/* | reference/* | tools/*)
        report "$file:$line" "the generator includes $inc (it may include only generator/, kiln/ and templates/kiln/)" ;;
    esac
  done < <(grep -Hn '^#include "' "$dir"* || true)
done
ls generator/*.h generator/*.cpp >/dev/null 2>&1 && report generator "files directly under generator/: put each in its stage's folder"

# reference/: the IR (and what the IR includes) and the shared device headers, nothing else.
while IFS=: read -r file line text; do
  inc=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$text")
  case "$inc" in
    reference/* | generator/ir/* | generator/support/* | kiln/* | templates/kiln/*) ;;
    *) report "$file:$line" "reference/ includes $inc (it may include generator/ir, generator/support, templates/kiln and itself)" ;;
  esac
done < <(grep -Hn '^#include "' reference/* || true)

if [ "$bad" -ne 0 ]; then
  echo "check_stages: the include order is broken (see above)" >&2
  exit 1
fi
echo "check_stages: every include follows the stage order (${stages[*]}; reference on ir)"
