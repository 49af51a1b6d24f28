#!/usr/bin/env bash
# Session 63, call 8: call 7 again with the walker polling its mbarrier (test_wait, where call 7's
# waited by try_wait), without the cummax case and memcheck.
SCAN_CASES="--op cumsum_long_rows;--op cumsum_long_rows -D B=4 -D N=67108864;--op cumsum_long_rows -D B=1 -D N=33554432;--op cumsum_reverse -D B=2 -D N=4194304" \
  SANITIZER_TOOLS=racecheck bash "$(dirname "$0")/gpu-s63-call7.sh"
