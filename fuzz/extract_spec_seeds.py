#!/usr/bin/env python3
"""Extracts the specs the test suite holds as string literals (quoted, adjacent quoted pieces
joined, and raw R"(...)" strings) into seed files for the spec fuzzers:

    python3 fuzz/extract_spec_seeds.py fuzz/corpus/spec tests/generator/*.cpp tests/runtime/*.cpp tests/tools/*.cpp

Each literal that starts with `op` (after comments) becomes <test file>_<n>.kiln. The seeds are
committed; rerun this when the malformed-spec tables grow."""
import re, sys, os, codecs
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
lit = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
n = 0
for path in sys.argv[2:]:
    src = open(path).read()
    # join adjacent literals: find runs of literals separated by whitespace only
    pos = 0; runs = []
    for m in lit.finditer(src):
        if runs and src[runs[-1][1]:m.start()].strip() == "" :
            runs[-1] = (runs[-1][0], m.end(), runs[-1][2] + m.group(1))
        else:
            runs.append((m.start(), m.end(), m.group(1)))
    raws = [m.group(1) for m in re.finditer(r'R"\((.*?)\)"', src, re.S)]
    base = os.path.splitext(os.path.basename(path))[0].replace("test_", "")
    seen = set()
    texts = raws[:]
    for _, _, body in runs:
        try: texts.append(codecs.decode(body.encode('latin-1', 'backslashreplace'), 'unicode_escape'))
        except Exception: continue
    for text in texts:
        if not re.match(r'\s*(#.*\n\s*)*op\b', text) or text in seen: continue
        seen.add(text); n += 1
        open(os.path.join(out, f"{base}_{len(seen):03d}.kiln"), "w", encoding='latin-1').write(text)
print(n, "specs")
