// The ops of the dyn conv spatial extent tests ([Note: dyn conv spatial extents] in
// generator/plan/plan_contraction.cpp), shared by the CPU suite
// (tests/generator/test_dyn_conv_spatial.cpp) and the GPU one (tests/gpu/test_dyn_gpu.cpp):
// f32 convs of one group on sm_90a take the TMA engine (3xTF32 with a fused bias and relu; a
// residual side operand of y's dyn extents; tf32, strided, with a dyn batch, 72 out channels, a
// bias and relu; a tf32 conv1d with 64 channels) or, under 8 input channels, WgConvNchw (tf32
// without padding, strided and dilated: the gather's path without bounds tests; a strided tf32
// conv1d with a dyn batch, 130 out channels); a tf32 conv of 32 channels takes WgConvNchw under
// the flops class's threshold (N*H*W under 58255) and the TMA engine from it; the others and
// sm_80 ConvNchw (f16 strided over a square side with a dyn batch;
// grouped and strided, tf32; a dilated bf16 conv1d) and DepthwiseDirect (NCHW, NHWC).
#pragma once

namespace kiln_test {

constexpr const char* kDynConvSpatialSpec = R"(op conv_hw {
  dims N = 2, C = 16, dyn H = 20, dyn W = 20, K = 32
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  in  b: f32[K, 1, 1]
  out y = relu(conv2d(x, w, padding=1) + b)
}
op conv_s2_f16 {
  dims dyn N = 3, C = 8, dyn S = 33, K = 24
  in  x: f16[N, C, S, S]
  in  w: f16[K, C, 3, 3]
  out y = conv2d(x, w, stride=2, padding=1)
}
op conv_res {
  dims N = 2, C = 8, dyn H = 9, W = 17, K = 16
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  in  r: f32[N, K, H, W]
  out y = conv2d(x, w, padding=1) + r
}
op depthwise {
  dims N = 2, C = 16, dyn H = 30, dyn W = 31
  in  x: f32[N, C, H, W]
  in  w: f32[C, 1, 5, 5]
  out y = conv2d(x, w, padding=2, groups=16)
}
op dw_nhwc {
  dims N = 2, dyn H = 30, dyn W = 31, C = 16
  in  x: f32[N, H, W, C]
  in  w: f32[C, 1, 3, 3]
  out y = conv2d(x, w, padding=[1, 1], groups=16, layout="NHWC")
}
op conv1d_bf16 {
  dims N = 2, C = 8, dyn L = 100, K = 16
  in  x: bf16[N, C, L]
  in  w: bf16[K, C, 7]
  out y = conv1d(x, w, padding=3, dilation=2)
}
op grouped {
  dims N = 2, C = 16, dyn H = 21, dyn W = 19, K = 32
  in  x: f32[N, C, H, W]
  in  w: f32[K, 4, 3, 3]
  out y = conv2d(x, w, stride=[2, 1], groups=4, precision="tf32")
}
op valid_tf32 {
  dims N = 2, C = 4, dyn H = 20, dyn W = 23, K = 72
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  out y = conv2d(x, w, stride=2, dilation=2, precision="tf32")
}
op conv1d_tf32 {
  dims dyn N = 3, C = 4, dyn L = 100, K = 130
  in  x: f32[N, C, L]
  in  w: f32[K, C, 5]
  out y = conv1d(x, w, stride=3, precision="tf32")
}
op conv1d_tma {
  dims N = 2, C = 64, dyn L = 100, K = 40
  in  x: f32[N, C, L]
  in  w: f32[K, C, 5]
  in  b: f32[K, 1]
  out y = conv1d(x, w, stride=2, padding=2, precision="tf32") * b
}
op tma_tf32 {
  dims dyn N = 2, C = 64, dyn H = 20, dyn W = 20, K = 72
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  in  b: f32[K, 1, 1]
  out y = relu(conv2d(x, w, stride=2, padding=1, precision="tf32") + b)
}
op small_tf32 {
  dims dyn N = 2, C = 32, dyn H = 20, dyn W = 20, K = 32
  in  x: f32[N, C, H, W]
  in  w: f32[K, C, 3, 3]
  out y = conv2d(x, w, padding=1, precision="tf32")
}
)";

}  // namespace kiln_test
