// Live activations of diffusers' convolution blocks in inference (torch.no_grad: a tensor is freed
// when its last Python reference goes), per output pixel, in elements. Shared by the UNet and the
// VAE walks.
//
// A convolution's cuDNN workspace. PyTorch allocates it through the caching allocator, so
// torch.cuda.max_memory_allocated() counts it (aten/src/ATen/native/cudnn/Conv_v8.cpp,
// run_conv_plan: at::empty(plan.getWorkspaceSize())); its size is the engine's, chosen by cuDNN's
// heuristics, which are closed. NVIDIA's cuDNN documentation (developer guide, "Data and Filter
// Formats": https://docs.nvidia.com/deeplearning/cudnn/developer/legacy-api.html) states that
// cuDNN "may use padding, folding, and NCHW-to-NHWC transformations to call the Tensor Core
// operations"; diffusers' tensors are NCHW, so the workspace is taken as NHWC copies of the
// convolution's input and output. Checked (not fitted) against the diffusers-torchao FLUX.1-dev
// runs (tests/accuracy/data/diffusion_measured.jsonl): at 4 and 8 images the decode costs
// 1,028 - 1,031 channels per pixel and image, this model's last-up-block conv1 1,024 (+ ~6 MiB of
// latents, embeddings and image per image); the engine is chosen per shape (1 image: ~1,230, 16
// images: ~960), which no source states.
#pragma once

#include <algorithm>
#include <cstdint>

namespace vramplan::diffusion {

//! NHWC copies of a convolution's input and output channels.
constexpr std::uint64_t conv_workspace(std::uint64_t in, std::uint64_t out) { return in + out; }

//! ResnetBlock2D.forward (diffusers models/resnet.py), per pixel, for `in` -> `out` channels; the
//! caller keeps the block's input alive throughout (its own `hidden_states`):
//!  * norm1 then SiLU: input, norm1 output, SiLU output (3 in);
//!  * conv1: input, SiLU output, conv1 output + workspace (2 in + out + in + out);
//!  * conv2: input, norm2/SiLU output, conv2 output + workspace (in + 2 out + 2 out);
//!  * conv_shortcut (in != out, 1x1): input, hidden, its output + workspace (in + 2 out + in + out);
//!  * (input_tensor + hidden_states) / output_scale_factor: input, shortcut, hidden, the sum and
//!    the quotient (in + 4 out).
//! (nn.GroupNorm allocates only its output and N x groups statistics: aten native_group_norm.)
constexpr std::uint64_t resnet_live_per_pixel(std::uint64_t in, std::uint64_t out) {
  const std::uint64_t conv1 = 2 * in + out + conv_workspace(in, out);
  const std::uint64_t conv2 = in + 2 * out + conv_workspace(out, out);
  const std::uint64_t shortcut = in != out ? in + 2 * out + conv_workspace(in, out) : 0;
  return std::max({3 * in, conv1, conv2, shortcut, in + 4 * out});
}

}  // namespace vramplan::diffusion
