// vramplan/io/format_table.hpp — the one table of storage formats (data/quant_formats.json).
//
// It lives in io because the file readers need it: a GGUF tensor's bytes are its ggml type's
// block size times its shape (ggml_nbytes), a safetensors dtype is checked against it, and model/
// sums the inventory with it. It depends on core and io/json_file only; quant/format.hpp adds the
// weight schemes on top (QuantCatalog), so model/ and io/ never include quant/.
//
// Like ggml's type traits: one row per format, every size a lookup. No other code switches on a
// format to get a size; adding a format means adding a row (and, for a new layout family, one
// formula in io/format_table.cpp). Rows are keyed by name; the GGUF type id is a field.
// Parametric families (GPTQ / AWQ / Marlin / compressed-tensors / HQQ with any bits and group
// size) are one template each: "gptq-4bit-g128", "awq-marlin-4bit-g64", "gptq-3bit-g-1-actorder"
// are generated from their template on first lookup (FormatTable::find).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vramplan {

//! How a format lays bytes out; each layout has one size formula in tensor_bytes().
enum class QuantLayout {
  //! Fixed-size blocks of `block_elems` contiguous row elements taking `block_bytes` each
  //! (plain floats/ints have block_elems = 1; GGUF, MXFP4, NVFP4 blocks carry their scales).
  //! A per-tensor scale of `tensor_scale_bytes` is added once per tensor.
  Block,
  //! Group-wise integer weights (GPTQ / AWQ / Marlin / compressed-tensors / HQQ): `bits` per
  //! weight packed into int32 words (or `values_per_int32` per word), one scale (scale_bytes)
  //! and, if `has_zero_point`, one zero per group of `group_size` input elements per output row
  //! (packed at `bits` unless `zero_point_bytes` gives an unpacked size); `g_idx_bytes` per input
  //! element (GPTQ's int32 g_idx; Marlin act-order keeps g_idx + sort indices = 8 B).
  GroupInt,
  //! bitsandbytes 4-bit (NF4/FP4): 4-bit weights, one absmax per `group_size` (blocksize 64)
  //! weights; with double quantization the absmax are 8-bit with an fp32 per 256 absmax.
  Bnb4,
  //! Per-output-channel scaled 8-bit (LLM.int8, W8A8, fp8 per-channel): 1 B per weight plus
  //! scale_bytes per output row.
  PerChannel,
  //! 2-D block scaled (DeepSeek-V3 fp8 128x128): 1 B per weight plus scale_bytes per
  //! block_rows x block_cols tile (ceil on both dims).
  Block2D,
};

struct QuantFormat {
  std::string name;                  //!< canonical name: "bf16", "Q4_K", "gptq-4bit-g128", ...
  std::vector<std::string> aliases;  //!< other accepted spellings ("bfloat16", "BF16")
  std::string description;
  QuantLayout layout = QuantLayout::Block;

  std::uint64_t block_elems = 1;  //!< Block: elements per block
  std::uint64_t block_bytes = 0;  //!< Block: bytes per block
  //! Extra bytes once per 2-D matrix, any layout (a stacked expert tensor {E, out, in} has E):
  //! per-tensor fp8 scale, NVFP4 global + input scale, compressed-tensors weight_shape.
  std::uint64_t tensor_scale_bytes = 0;

  std::uint32_t bits = 0;          //!< GroupInt / Bnb4: bits per weight
  std::uint64_t group_size = 0;    //!< GroupInt / Bnb4: weights per scale; 0 = one group per row
  std::uint64_t scale_bytes = 0;   //!< bytes per scale
  bool has_zero_point = false;     //!< GroupInt: zero point per group
  std::uint64_t zero_point_bytes = 0;  //!< GroupInt: unpacked zero size (HQQ fp16); 0 = packed at `bits`
  std::uint64_t g_idx_bytes = 0;   //!< GroupInt: bytes per input element for g_idx / sort indices
  std::uint32_t values_per_int32 = 0;  //!< GroupInt: packing override (HQQ 3-bit: 10); 0 = 32/bits
  bool act_order = false;          //!< GroupInt: generated with "-actorder" (desc_act)
  bool double_quant = false;       //!< Bnb4: 8-bit absmax + fp32 per 256 absmax
  std::uint64_t block_rows = 0, block_cols = 0;  //!< Block2D tile

  std::optional<std::uint32_t> gguf_type_id;      //!< ggml_type id when this is a GGUF type
  std::optional<std::string> safetensors_dtype;    //!< safetensors header dtype ("BF16", "F8_E4M3")
  bool is_float = false;   //!< a plain floating-point type (usable as compute precision)
  bool quantized = false;  //!< carries scales / needs dequantization
  //! Format family, the unit of the compatibility rules (data/compat/formats.json /families):
  //! "float", "int", "fp8", "gguf", "gptq", "gptq-marlin", "awq", "awq-marlin",
  //! "compressed-tensors", "bitsandbytes", "hqq", "mxfp4", "nvfp4".
  std::string family;
  std::string source;        //!< where the layout is defined (URL / file)

  //! Bits per weight for a row of `row_len` elements (scales included), for display.
  double bits_per_weight(std::uint64_t row_len = 4096, std::uint64_t rows = 4096) const;
};

//! A parametric family: "<prefix>-<bits>bit-g<group>[-actorder][-asym]" names generate rows.
struct QuantTemplate {
  std::string prefix;  //!< "gptq", "gptq-marlin", "awq", "awq-marlin", "ct", "hqq"
  std::string description;
  std::string family;
  std::vector<std::uint32_t> bits;  //!< accepted bit widths
  std::uint64_t scale_bytes = 2;
  bool zero_point = false;            //!< zeros by default (AWQ, HQQ)
  bool asym_allowed = false;          //!< "-asym" adds zeros (compressed-tensors, Marlin)
  std::uint64_t zero_point_bytes = 0;  //!< unpacked zero size (HQQ); 0 = packed
  std::uint64_t g_idx_bytes = 0;        //!< per input element, always (GPTQ checkpoint g_idx)
  std::uint64_t actorder_g_idx_bytes = 0;  //!< per input element with "-actorder"
  bool actorder_allowed = false;
  std::uint64_t tensor_scale_bytes = 0;
  //! {bits, values per int32} packing overrides (HQQ 3-bit packs 10 values per int32).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> packing;
  std::string source;
};

class FormatTable {
 public:
  //! Loads and validates data/quant_formats.json (every row checked: block sizes > 0, unique
  //! names/aliases/GGUF ids, layout-specific fields present). Errors name file, pointer, row.
  static FormatTable load(const std::filesystem::path& file);

  //! By canonical name or alias (case-insensitive), or a template-generated name
  //! ("gptq-4bit-g128"). Throws Error(UnknownName) listing names and templates.
  const QuantFormat& get(std::string_view name) const;
  //! nullptr when unknown. Generated formats stay valid for the catalogue's lifetime.
  const QuantFormat* find(std::string_view name) const;
  const QuantFormat* find_gguf(std::uint32_t gguf_type_id) const;
  const QuantFormat* find_safetensors(std::string_view dtype) const;
  const std::vector<QuantFormat>& all() const { return formats_; }
  const std::vector<QuantTemplate>& templates() const { return templates_; }

 private:
  struct Generated;  // formats made from templates, shared by copies of the catalogue
  std::vector<QuantFormat> formats_;
  std::unordered_map<std::string, std::size_t> index_;  //!< lower-case name or alias -> formats_ row
  std::vector<QuantTemplate> templates_;
  std::shared_ptr<Generated> generated_;
};

//! Exact bytes of a tensor of `shape` (outermost first; the last dim is the contiguous row)
//! stored in `format`. Throws Error(Usage) when the row length is not a multiple of a Block
//! format's block (as ggml_row_size asserts) — callers that fall back to another type check
//! row_fits() first. `what` names the tensor in messages.
std::uint64_t tensor_bytes(const QuantFormat& format, std::span<const std::uint64_t> shape,
                           std::string_view what);
//! True when a row of `row_len` elements can be stored in `format` (block divides it).
bool row_fits(const QuantFormat& format, std::uint64_t row_len);

}  // namespace vramplan
