set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
PYTHONPATH=$PWD/.gpu/python timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py python/tests/test_package.py > $OUT/pytest.log 2>&1; echo rc=$?
grep -n "FAILED\|passed\|failed\|Error" $OUT/pytest.log | tail -12
