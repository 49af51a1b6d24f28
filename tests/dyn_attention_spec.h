// The ops of the dyn fused attention tests ([Note: dyn attention] in
// generator/plan/plan_contraction.cpp), shared by the CPU suite (tests/generator/test_dyn_attention.cpp)
// and the GPU one (tests/gpu/test_dyn_gpu.cpp): dyn B and S of self-attention; a causal mask over
// a dyn S; [B, S, H, D] views with a scalar divisor (permuted strides as expressions of the dims);
// one batch dim with a k every batch shares and dyn keys (head dim 256); a residual epilogue over
// dyn B and S; q shared by the batches; k shared by the batches and v by the heads; dyn heads and
// S with a residual.
#pragma once

namespace kiln_test {

constexpr const char* kDynAttentionSpec = R"(
op att {
  const scale: f32 = 0.08838834764831845
  dims dyn B, H = 4, dyn S
  in  q: f16[B, H, S, 128]
  in  k: f16[B, H, S, 128]
  in  v: f16[B, H, S, 128]
  out o = matmul(softmax(matmul(q, transpose(k)) * scale, axis=-1), v)
}
op att_causal {
  dims B = 2, H = 3, dyn S
  in  q: bf16[B, H, S, 64]
  in  k: bf16[B, H, S, 64]
  in  v: bf16[B, H, S, 64]
  let s = matmul(q, transpose(k)) * 0.125
  let keep = iota(S, S, axis=1) <= iota(S, S, axis=0)
  out o = matmul(softmax(where(keep, s, -3.4e38), axis=-1), v)
}
op att_bshd {
  dims dyn B, dyn S, H = 4
  in  q: f16[B, S, H, 64]
  in  k: f16[B, S, H, 64]
  in  v: f16[B, S, H, 64]
  in  temperature: f16
  let qh = permute(q, [0, 2, 1, 3])
  let kh = permute(k, [0, 2, 1, 3])
  let vh = permute(v, [0, 2, 1, 3])
  out o = matmul(softmax(matmul(qh, transpose(kh)) / temperature, axis=-1), vh)
}
op att_d256 {
  dims dyn BH, S = 200, dyn T
  in  q: f16[BH, S, 256]
  in  k: f16[T, 256]
  in  v: f16[BH, T, 256]
  out o = matmul(softmax(matmul(q, transpose(k)) * 0.0625, axis=-1), v)
}
op att_epi {
  dims dyn B, H = 2, dyn S, T = 300
  in  q: bf16[B, H, S, 64]
  in  k: bf16[B, H, T, 64]
  in  v: bf16[B, H, T, 64]
  in  r: bf16[B, H, S, 64]
  out o = relu(matmul(softmax(matmul(q, transpose(k)) * 0.125, axis=-1), v) + r)
}
op att_q_shared {
  dims dyn B, dyn S
  in  q: f16[S, 64]
  in  k: f16[B, S, 64]
  in  v: f16[B, S, 64]
  out o = matmul(softmax(matmul(q, transpose(k)), axis=-1), v)
}
op att_bcast {
  dims dyn B, H = 2, dyn S, T = 70
  in  q: f16[B, H, S, 64]
  in  k: f16[1, H, T, 64]
  in  v: f16[B, 1, T, 64]
  out o = matmul(softmax(matmul(q, transpose(k)), axis=-1), v)
}
op att_heads {
  dims B = 2, dyn H, dyn S
  in  q: f16[B, H, S, 64]
  in  k: f16[B, H, S, 64]
  in  v: f16[B, H, S, 64]
  in  r: f16[B, H, S, 64]
  out o = matmul(softmax(matmul(q, transpose(k)) * 0.125, axis=-1), v) + r
}
)";

}  // namespace kiln_test
