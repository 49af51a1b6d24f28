"""bench/bench.py's exit rule (README, "Exit codes"): the rows that fail a run are those whose
kiln or Triton output failed its check; a row that could not run (correct None, a kiln error
noted on the row) is not one. Runs without a GPU or PyTorch (bench.py imports them lazily)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import bench  # noqa: E402

rows = [
    {"problem": "a", "precision": "fp32", "correct": True},
    {"problem": "b", "precision": "tf32", "correct": False},
    {"problem": "c", "precision": "fp32", "correct": None, "note": "unsupported"},
    {"problem": "d", "precision": "bf16", "correct": True, "triton_correct": False},
    {"problem": "e", "precision": "bf16", "correct": True, "triton_correct": None},
]
got = bench.wrong_rows({"rows": rows})
assert got == ["b (tf32)", "d (bf16)"], got
assert bench.wrong_rows({"rows": rows[:1] + rows[2:3]}) == []
print("bench.wrong_rows: ok")
