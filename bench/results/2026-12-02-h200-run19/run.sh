set -x
export KILN_SOURCE_DIR=$PWD
mkdir -p $OUT/parts
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
# correctness first, in parallel: specs, odd sizes, dyn rows and lengths of the memory-bound family
(KILN_GPU_SPECS=min_reduce,reductions,norms timeout 300 .gpu/bin/kiln_test_gpu -tc="gpu: every covered spec matches*" > $OUT/parts/specs_red.txt 2>&1; echo "rc=$?" >> $OUT/parts/specs_red.txt) &
(KILN_GPU_SPECS=min_reduce,reductions,norms timeout 300 .gpu/bin/kiln_test_gpu -tc="gpu: memory-bound specs on odd sizes*" > $OUT/parts/odd_red.txt 2>&1; echo "rc=$?" >> $OUT/parts/odd_red.txt) &
(timeout 300 .gpu/bin/kiln_test_gpu -tc="gpu: dyn rows of reductions*,gpu: dyn lengths of reductions*,gpu: an executable with dyn rows*" > $OUT/parts/dyn_red.txt 2>&1; echo "rc=$?" >> $OUT/parts/dyn_red.txt) &
wait
tail -3 $OUT/parts/*.txt
grep -a -E "ERROR|FAIL" $OUT/parts/*.txt | head -20
# the standalone harness: phased vs shuffled vs copy on the seed shape, odd shapes checked
timeout 200 .gpu/bin/memtpl_check > $OUT/parts/memtpl_check.txt 2>&1; echo "memtpl rc=$?"
grep -a -E "min ax1|odd|copy|FAIL|rc" $OUT/parts/memtpl_check.txt | head -40
PYTHONPATH=.gpu/python timeout 200 python3 bench/shapes_bench.py --only memory --ops min_reduce,sum_rows --out $OUT/shapes 2>&1 | grep -v "^{" | tail -15
cat $OUT/shapes/*.md 2>/dev/null | head -20
PYTHONPATH=.gpu/python timeout 240 python3 bench/bench.py --only min_reduce --out $OUT/bench 2>&1 | tail -15
