#include "vramplan/quant/format.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct LayoutRow {
  std::string_view name;
  QuantLayout layout;
};
constexpr LayoutRow kLayouts[] = {
    {"block", QuantLayout::Block},           {"group-int", QuantLayout::GroupInt},
    {"bnb4", QuantLayout::Bnb4},             {"per-channel", QuantLayout::PerChannel},
    {"block-2d", QuantLayout::Block2D},
};

QuantLayout parse_layout(const JsonView& row) {
  const std::string name = row.req_string("layout");
  for (const auto& l : kLayouts)
    if (l.name == name) return l.layout;
  row.fail_at("layout", "unknown layout '" + name + "' (block, group-int, bnb4, per-channel, block-2d)");
}

// Product of all dimensions but the last (the number of rows), and the row length.
struct Rows {
  std::uint64_t rows = 1;
  std::uint64_t row_len = 1;
};
Rows split_rows(std::span<const std::uint64_t> shape, std::string_view what) {
  Rows r;
  if (shape.empty()) return r;  // a scalar: one element
  r.row_len = shape.back();
  for (std::size_t k = 0; k + 1 < shape.size(); ++k) r.rows = checked_mul(r.rows, shape[k], what);
  return r;
}

QuantFormat parse_row(const JsonView& row) {
  QuantFormat f;
  f.name = row.req_string("name");
  if (f.name.empty()) row.fail_at("name", "must not be empty");
  if (auto aliases = row.get("aliases"))
    for (const auto& a : aliases->items()) f.aliases.push_back(a.as_string());
  f.description = row.opt_string("description").value_or("");
  f.layout = parse_layout(row);
  f.source = row.req_string("source");
  f.is_float = row.opt_bool("is_float").value_or(false);
  f.quantized = row.opt_bool("quantized").value_or(false);
  f.min_hardware = row.opt_string("min_hardware").value_or("");
  if (auto id = row.opt_u64("gguf_type_id")) {
    if (*id > 1023) row.fail_at("gguf_type_id", "out of range");
    f.gguf_type_id = static_cast<std::uint32_t>(*id);
  }
  f.safetensors_dtype = row.opt_string("safetensors_dtype");
  auto positive = [&](std::string_view key) {
    const std::uint64_t v = row.req_u64(key);
    if (v == 0) row.fail_at(key, "must be positive");
    return v;
  };
  switch (f.layout) {
    case QuantLayout::Block:
      f.block_elems = positive("block_elems");
      f.block_bytes = positive("block_bytes");
      f.tensor_scale_bytes = row.opt_u64("tensor_scale_bytes").value_or(0);
      break;
    case QuantLayout::GroupInt:
      f.bits = static_cast<std::uint32_t>(positive("bits"));
      if (f.bits > 16) row.fail_at("bits", "must be at most 16");
      f.group_size = row.req_u64("group_size");  // 0 = one group per row (per-channel)
      f.scale_bytes = positive("scale_bytes");
      f.has_zero_point = row.req_bool("has_zero_point");
      f.act_order = row.opt_bool("act_order").value_or(false);
      break;
    case QuantLayout::Bnb4:
      f.bits = 4;
      f.group_size = positive("group_size");
      f.double_quant = row.req_bool("double_quant");
      break;
    case QuantLayout::PerChannel:
      f.scale_bytes = positive("scale_bytes");
      break;
    case QuantLayout::Block2D:
      f.block_rows = positive("block_rows");
      f.block_cols = positive("block_cols");
      f.scale_bytes = positive("scale_bytes");
      break;
  }
  return f;
}

}  // namespace

QuantCatalog QuantCatalog::load(const std::filesystem::path& file) {
  const auto doc = read_json_file(file);
  const JsonView root(doc, file.string());
  QuantCatalog cat;
  std::set<std::string> names;
  std::set<std::uint32_t> gguf_ids;
  for (const auto& row : root.at("formats").items()) {
    QuantFormat f = parse_row(row);
    for (const auto& n : [&] {
           std::vector<std::string> all{f.name};
           all.insert(all.end(), f.aliases.begin(), f.aliases.end());
           return all;
         }()) {
      if (!names.insert(lower(n)).second)
        row.fail("duplicate format name or alias '" + n + "' (in row '" + f.name + "')");
    }
    if (f.gguf_type_id && !gguf_ids.insert(*f.gguf_type_id).second)
      row.fail_at("gguf_type_id", "duplicate GGUF type id " + std::to_string(*f.gguf_type_id));
    cat.formats_.push_back(std::move(f));
  }
  if (cat.formats_.empty()) root.fail_at("formats", "no formats defined");
  return cat;
}

const QuantFormat* QuantCatalog::find(std::string_view name) const {
  const std::string key = lower(name);
  for (const auto& f : formats_) {
    if (lower(f.name) == key) return &f;
    for (const auto& a : f.aliases)
      if (lower(a) == key) return &f;
  }
  return nullptr;
}

const QuantFormat& QuantCatalog::get(std::string_view name) const {
  if (const auto* f = find(name)) return *f;
  std::string known;
  for (const auto& f : formats_) known += (known.empty() ? "" : ", ") + f.name;
  throw_unknown("unknown weight/storage format '" + std::string(name) + "' (known: " + known + ")");
}

const QuantFormat* QuantCatalog::find_gguf(std::uint32_t id) const {
  for (const auto& f : formats_)
    if (f.gguf_type_id == id) return &f;
  return nullptr;
}

const QuantFormat* QuantCatalog::find_safetensors(std::string_view dtype) const {
  for (const auto& f : formats_)
    if (f.safetensors_dtype && *f.safetensors_dtype == dtype) return &f;
  return nullptr;
}

bool row_fits(const QuantFormat& format, std::uint64_t row_len) {
  return format.layout != QuantLayout::Block || row_len % format.block_elems == 0;
}

std::uint64_t tensor_bytes(const QuantFormat& f, std::span<const std::uint64_t> shape,
                           std::string_view what) {
  const std::string ctx = "bytes of " + std::string(what);
  const Rows r = split_rows(shape, ctx);
  const std::uint64_t n = checked_mul(r.rows, r.row_len, ctx);
  switch (f.layout) {
    case QuantLayout::Block: {
      if (r.row_len % f.block_elems != 0)
        throw_usage(std::string(what) + ": row of " + std::to_string(r.row_len) +
                    " elements is not a multiple of " + f.name + "'s block of " +
                    std::to_string(f.block_elems));
      const std::uint64_t blocks = checked_mul(r.rows, r.row_len / f.block_elems, ctx);
      return checked_add(checked_mul(blocks, f.block_bytes, ctx), f.tensor_scale_bytes, ctx);
    }
    case QuantLayout::GroupInt: {
      // Matrix {out, in}: packed weights along `in` (int32 words), one scale and (optionally)
      // one packed zero point per group of `group_size` inputs per output.
      const std::uint64_t out = r.rows, in = r.row_len;
      const std::uint64_t groups = f.group_size == 0 ? 1 : ceil_div(in, f.group_size);
      const std::uint64_t qweight = checked_mul(ceil_div(checked_mul(in, f.bits, ctx), 32) * 4, out, ctx);
      const std::uint64_t scales = checked_mul(checked_mul(groups, out, ctx), f.scale_bytes, ctx);
      const std::uint64_t zeros =
          f.has_zero_point ? checked_mul(groups, ceil_div(checked_mul(out, f.bits, ctx), 32) * 4, ctx) : 0;
      const std::uint64_t g_idx = f.act_order ? checked_mul(in, 4, ctx) : 0;
      return checked_add(checked_add(qweight, scales, ctx), checked_add(zeros, g_idx, ctx), ctx);
    }
    case QuantLayout::Bnb4: {
      // Flattened: n/2 bytes of nibbles; absmax per group_size weights, fp32 or (double quant)
      // uint8 plus one fp32 scale per 256 absmax values.
      const std::uint64_t absmax_count = ceil_div(n, f.group_size);
      const std::uint64_t absmax = f.double_quant ? absmax_count + ceil_div(absmax_count, 256) * 4
                                                  : checked_mul(absmax_count, 4, ctx);
      return checked_add(ceil_div(n, 2), absmax, ctx);
    }
    case QuantLayout::PerChannel:
      return checked_add(n, checked_mul(r.rows, f.scale_bytes, ctx), ctx);
    case QuantLayout::Block2D: {
      // Leading dims (e.g. experts) multiply the tiles of each {out, in} matrix.
      std::uint64_t lead = 1, out = 1;
      if (shape.size() >= 2) {
        out = shape[shape.size() - 2];
        for (std::size_t k = 0; k + 2 < shape.size(); ++k) lead = checked_mul(lead, shape[k], ctx);
      }
      const std::uint64_t tiles =
          checked_mul(lead, checked_mul(ceil_div(out, f.block_rows), ceil_div(r.row_len, f.block_cols), ctx), ctx);
      return checked_add(n, checked_mul(tiles, f.scale_bytes, ctx), ctx);
    }
  }
  throw_internal("unhandled quant layout");
}

double QuantFormat::bits_per_weight(std::uint64_t row_len, std::uint64_t rows) const {
  const std::uint64_t shape[2] = {rows, row_len};
  const double bytes = static_cast<double>(tensor_bytes(*this, shape, name));
  return bytes * 8.0 / (static_cast<double>(rows) * static_cast<double>(row_len));
}

}  // namespace vramplan
