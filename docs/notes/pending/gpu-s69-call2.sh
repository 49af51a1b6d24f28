cd /work/main 2>/dev/null || true
source docs/notes/pending/s65-env.sh
KILN_CACHE_DIR=$(mktemp -d) timeout 150 .gpu/bin/kiln_test_gpu_new -tc="gpu: every covered spec's wgmma path*" --duration=true > $logs/new_wgmma.txt 2>&1
echo "[$SECONDS s] new wgmma-path rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/new_wgmma.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/new_wgmma.txt)"
grep -E 'FAIL|ERROR|test cases|assertions' $logs/new_wgmma.txt | head -8
for K in kiln kiln_new; do for r in 1 2; do echo "$K $r $(KILN_CACHE_DIR=/tmp/c-$K timeout 40 .gpu/bin/$K run specs/conv_nd.kiln --op conv1d_padded_dilated_bias --precision tf32 --iters 20 2>&1 | grep -E 'median|FAIL|rror|max' | tr '\n' ' ')"; done; done
KILN_CACHE_DIR=$(mktemp -d) timeout 60 compute-sanitizer --error-exitcode 86 .gpu/bin/kiln_new run specs/conv_nd.kiln --op conv1d_padded_dilated_bias --precision tf32 -D N=2 -D L=30000 --iters 1 > $logs/new_sanitizer.txt 2>&1
echo "[$SECONDS s] sanitizer rc=$?"; grep -E "ERROR SUMMARY|ok|FAIL" $logs/new_sanitizer.txt | head -4
KILN_CACHE_DIR=$(mktemp -d) timeout 60 compute-sanitizer --error-exitcode 86 .gpu/bin/kiln_new run specs/conv_nd.kiln --op conv_transpose1d_k3 --precision tf32 -D N=2 --iters 1 > $logs/new_sanitizer2.txt 2>&1
echo "[$SECONDS s] sanitizer convT1d rc=$?"; grep -E "ERROR SUMMARY|ok|FAIL" $logs/new_sanitizer2.txt | head -4
KILN_CACHE_DIR=$(mktemp -d) KILN_GPU_SPECS=conv_nd timeout 200 .gpu/bin/kiln_test_gpu_new -tc="gpu: every covered spec matches*" > $logs/new_conv.txt 2>&1
echo "[$SECONDS s] new conv specs rc=$? ok=$(grep -cE '^gpu-check .* ok ' $logs/new_conv.txt) failed=$(grep -cE '^gpu-check .* FAIL' $logs/new_conv.txt)"
grep -E 'FAIL|test cases|assertions' $logs/new_conv.txt | head -6
# The m- or n-major operand realigned (realign-mn.patch, .gpu/bin/kiln_realign) against HEAD's
for round in 1 2; do for K in kiln kiln_realign; do for op in mm_6007x3336x4800 mm_6007x3392x4800; do
  echo "$K round $round $op $(KILN_CACHE_DIR=/tmp/c-$K timeout 30 .gpu/bin/$K run docs/notes/pending/irr-shapes.kiln --op $op --iters 50 2>&1 | grep -E 'median|FAIL|rror' | tr '\n' ' ')"
done; done; done
KILN_CACHE_DIR=/tmp/c-kiln_realign timeout 60 .gpu/bin/kiln_realign bench docs/notes/pending/irr-shapes.kiln --op mm_6007x3336x4800 2>&1 | tail -12
