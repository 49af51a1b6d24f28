#!/bin/bash
# A/B: the embedded templates (HEAD) against the working tree's (KILN_TEMPLATE_PATH)
export PYTHONPATH=.gpu/python
echo "== baseline (embedded)"; python .gpu/sweep.py .gpu/att_sweep.kiln 2>&1 | grep -v "warning\|\^\|out o"
echo "== new (templates/)"; KILN_TEMPLATE_PATH=$PWD/templates python .gpu/sweep.py .gpu/att_sweep.kiln nocudnn 2>&1 | grep -v "warning\|\^\|out o"
echo "== checks (new)"
export KILN_TEMPLATE_PATH=$PWD/templates
K=.gpu/bin/kiln
$K run specs/attention.kiln --check 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --small 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_causal_bf16 -D S=1 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_causal_bf16 -D S=129 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_causal_bf16 -D S=1000 -D B=1 -D H=2 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_f16 -D S=7 -D T=1000 -D B=1 -D H=2 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_f16 -D S=1000 -D T=33 -D B=1 -D H=2 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_f16 -D S=300 -D T=129 -D B=2 -D H=2 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_causal_d256 -D S=1000 -D BH=2 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_causal_d256 -D S=256 -D BH=140 2>&1 | grep -v "warning\|\^\|out o\|let s"
$K run specs/attention.kiln --check --op attention_bshd_f16 -D S=1000 2>&1 | grep -v "warning\|\^\|out o\|let s"
