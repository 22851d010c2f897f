// vramplan/diffusion/component.hpp — one component of a diffusers pipeline (a text encoder, the
// denoiser, the VAE) as its config.json describes it: the class, exact parameter counts from the
// class's module layout, and the shape figures the memory and step-time models need.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vramplan::diffusion {

enum class Role { TextEncoder, Denoiser, Vae };
std::string_view role_name(Role role);

//! Where a forward pass runs: image size in pixels, batch, text tokens the denoiser attends to,
//! bytes per activation element and whether attention materialises its score matrix.
struct Geometry {
  std::uint64_t batch = 1;        //!< samples in the forward (CFG already applied by the caller)
  std::uint64_t height = 1024;    //!< pixels
  std::uint64_t width = 1024;     //!< pixels
  std::uint64_t text_tokens = 0;  //!< tokens of the conditioning sequence (denoiser) or input (encoder)
  std::uint64_t act_bytes = 2;    //!< bytes per activation element (compute dtype)
  bool eager_attention = false;   //!< true: QK^T and its softmax are materialised (no SDPA kernel)
  std::uint64_t vae_scale = 8;    //!< pixels per latent pixel: 2^(len(vae block_out_channels) - 1)
  std::uint64_t frames = 1;       //!< latent frames of a video pipeline (1 for images)
  std::uint64_t latent_h() const { return height / vae_scale; }
  std::uint64_t latent_w() const { return width / vae_scale; }
};

//! One nn.ModuleList / nn.Sequential that diffusers' block-level group offloading splits into groups
//! (hooks/group_offloading.py _apply_group_offloading_block_level: the direct children of the
//! component, or of a `_group_offload_block_modules` child such as AutoencoderKL's decoder).
struct BlockList {
  std::string name;                   //!< "transformer_blocks", "decoder.up_blocks"
  std::vector<std::uint64_t> blocks;  //!< parameters + buffers of each block, in execution order
  std::uint64_t owner = 0;            //!< parameters + buffers of the module holding the list (0: the component)
};

//! Sums over a module tree walked once: parameters (exact), the share in nn.Linear weights (what
//! 8-bit / NF4 / fp8 schemes store in fewer bytes), the largest single leaf module (what
//! sequential offload keeps on the GPU), and, for a Geometry, FLOPs and the largest live set of
//! activation elements of one forward pass.
struct Tally {
  std::uint64_t params = 0;
  std::uint64_t buffers = 0;         //!< floating persistent buffers moved by .to() (SD3 pos_embed)
  std::uint64_t linear_weights = 0;  //!< elements of nn.Linear weight matrices
  std::uint64_t linear_rows = 0;     //!< output rows of those matrices (per-row scales)
  std::uint64_t largest_leaf = 0;    //!< parameters of the largest leaf module
  double flops = 0;                  //!< one forward pass at the geometry (0 without one)
  std::uint64_t peak_elements = 0;   //!< largest live activation set, elements (0 without a geometry)
  std::string peak_where;            //!< which layer holds it
  std::vector<BlockList> block_lists; //!< the lists block-level group offloading groups (block())

  //! nn.Linear(in, out) applied to `tokens` rows (0: parameters only).
  void linear(std::uint64_t in, std::uint64_t out, bool bias = true, std::uint64_t tokens = 0);
  //! nn.Conv2d(in, out, k x k) applied at `pixels` output positions; `k_t` > 1: nn.Conv3d with a
  //! k_t x k x k kernel (`pixels` then counts output frames x pixels).
  void conv(std::uint64_t in, std::uint64_t out, std::uint64_t k, std::uint64_t pixels = 0, std::uint64_t k_t = 1);
  //! Norm / embedding parameters (not a linear weight); `leaf` counts it as one module.
  void other(std::uint64_t n);
  void buffer(std::uint64_t n);
  //! One block of the list `list` held `elements` parameters + buffers (appended in call order);
  //! `owner`: the elements of the module holding the list when it is not the component itself.
  void block(std::string_view list, std::uint64_t elements, std::uint64_t owner = 0);
  std::uint64_t elements() const { return params + buffers; }
  //! A live set of `elements` activation elements at `where` (computed in double so that no
  //! product wraps; Error(Usage) beyond 2^62 elements); keeps the largest.
  void live(double elements, std::string_view where);
  void add_flops(double f) { flops += f; }
  //! Another tally's parameters (and FLOPs / peaks) into this one.
  void absorb(const Tally& other);
};

//! One component of a pipeline: model_index.json's entry and its config.json.
struct Component {
  std::string name;        //!< "text_encoder_2", "unet", "transformer", "vae"
  std::string library;     //!< "transformers" / "diffusers"
  std::string class_name;  //!< "CLIPTextModelWithProjection", ...
  Role role = Role::TextEncoder;
  nlohmann::json config;   //!< its config.json
  std::string config_file; //!< where it was read (error messages)
  Tally inventory;         //!< parameters (no geometry)
  //! Elements in the component's safetensors headers (diffusion_pytorch_model / model
  //! .safetensors, or the shards of its .index.json), when the directory holds weights.
  std::optional<std::uint64_t> checkpoint_elements;
};

//! The component classes vramplan builds, in one table (components.cpp): role, the diffusers /
//! transformers file the module layout is read from, and the walk.
struct ComponentClass {
  std::string_view name;
  Role role;
  std::string_view source;  //!< the model file whose __init__ / forward the walk follows
  Tally (*walk)(const nlohmann::json& config, const std::string& file, const Geometry* geometry);
};
const ComponentClass* find_component_class(std::string_view class_name);
std::string supported_component_classes();  //!< "CLIPTextModel, ..." for error messages

//! Walks `c` at a geometry (FLOPs and live activations of one forward).
Tally walk_at(const Component& c, const Geometry& g);

}  // namespace vramplan::diffusion
