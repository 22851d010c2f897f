#include "vramplan/io/format_table.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <deque>
#include <mutex>
#include <set>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/text.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan {
namespace {

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
  f.family = row.opt_string("family").value_or("");
  f.tensor_scale_bytes = row.opt_u64("tensor_scale_bytes").value_or(0);
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
      break;
    case QuantLayout::GroupInt:
      f.bits = static_cast<std::uint32_t>(positive("bits"));
      if (f.bits > 16) row.fail_at("bits", "must be at most 16");
      f.group_size = row.req_u64("group_size");  // 0 = one group per row (per-channel)
      f.scale_bytes = positive("scale_bytes");
      f.has_zero_point = row.req_bool("has_zero_point");
      f.zero_point_bytes = row.opt_u64("zero_point_bytes").value_or(0);
      f.g_idx_bytes = row.opt_u64("g_idx_bytes").value_or(0);
      f.values_per_int32 = static_cast<std::uint32_t>(row.opt_u64("values_per_int32").value_or(0));
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


QuantTemplate parse_template(const JsonView& row) {
  QuantTemplate t;
  t.prefix = to_lower(row.req_string("prefix"));
  if (t.prefix.empty()) row.fail_at("prefix", "must not be empty");
  t.description = row.opt_string("description").value_or("");
  t.family = row.req_string("family");
  for (const auto& b : row.at("bits").items()) {
    const std::uint64_t v = b.as_u64();
    if (v == 0 || v > 16) b.fail("bits must be 1..16");
    t.bits.push_back(static_cast<std::uint32_t>(v));
  }
  t.scale_bytes = row.req_u64("scale_bytes");
  if (t.scale_bytes == 0) row.fail_at("scale_bytes", "must be positive");
  t.zero_point = row.req_bool("zero_point");
  t.asym_allowed = row.opt_bool("asym_allowed").value_or(false);
  t.zero_point_bytes = row.opt_u64("zero_point_bytes").value_or(0);
  t.g_idx_bytes = row.opt_u64("g_idx_bytes").value_or(0);
  t.actorder_allowed = row.opt_bool("actorder_allowed").value_or(false);
  t.actorder_g_idx_bytes = row.opt_u64("actorder_g_idx_bytes").value_or(t.g_idx_bytes);
  t.tensor_scale_bytes = row.opt_u64("tensor_scale_bytes").value_or(0);
  if (auto packing = row.get("values_per_int32"))
    for (const auto& [bits, n] : packing->members())
      t.packing.emplace_back(static_cast<std::uint32_t>(std::stoul(bits)),
                             static_cast<std::uint32_t>(n.as_u64()));
  t.source = row.req_string("source");
  return t;
}

// "<prefix>-<bits>bit-g<group>[-actorder][-asym]" where group is a positive integer or -1.
struct TemplateName {
  std::uint32_t bits = 0;
  std::uint64_t group = 0;  // 0 = one group per row ("g-1")
  bool actorder = false;
  bool asym = false;
};

std::optional<std::uint64_t> parse_uint(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<TemplateName> parse_template_name(std::string_view rest) {
  // rest = "<bits>bit-g<group>[suffixes]"
  TemplateName n;
  const auto bit = rest.find("bit-g");
  if (bit == std::string_view::npos) return std::nullopt;
  const auto bits = parse_uint(rest.substr(0, bit));
  if (!bits || *bits == 0 || *bits > 16) return std::nullopt;
  n.bits = static_cast<std::uint32_t>(*bits);
  rest.remove_prefix(bit + 5);
  if (rest.starts_with("-1")) {
    rest.remove_prefix(2);
  } else {
    const auto dash = rest.find('-');
    const auto group = parse_uint(rest.substr(0, dash));
    if (!group || *group == 0) return std::nullopt;
    n.group = *group;
    rest.remove_prefix(dash == std::string_view::npos ? rest.size() : dash);
  }
  while (!rest.empty()) {
    if (rest.starts_with("-actorder")) {
      n.actorder = true;
      rest.remove_prefix(9);
    } else if (rest.starts_with("-asym")) {
      n.asym = true;
      rest.remove_prefix(5);
    } else {
      return std::nullopt;
    }
  }
  return n;
}

std::optional<QuantFormat> generate(const QuantTemplate& t, const TemplateName& n) {
  if (std::find(t.bits.begin(), t.bits.end(), n.bits) == t.bits.end()) return std::nullopt;
  if (n.actorder && !t.actorder_allowed) return std::nullopt;
  if (n.asym && !t.asym_allowed) return std::nullopt;
  QuantFormat f;
  f.name = t.prefix + "-" + std::to_string(n.bits) + "bit-g" +
           (n.group == 0 ? std::string("-1") : std::to_string(n.group)) +
           (n.actorder ? "-actorder" : "") + (n.asym ? "-asym" : "");
  f.description = t.description;
  f.layout = QuantLayout::GroupInt;
  f.family = t.family;
  f.bits = n.bits;
  f.group_size = n.group;
  f.scale_bytes = t.scale_bytes;
  f.has_zero_point = t.zero_point || n.asym;
  f.zero_point_bytes = t.zero_point_bytes;
  f.g_idx_bytes = n.actorder ? t.actorder_g_idx_bytes : t.g_idx_bytes;
  f.act_order = n.actorder;
  for (const auto& [bits, per_word] : t.packing)
    if (bits == n.bits) f.values_per_int32 = per_word;
  f.tensor_scale_bytes = t.tensor_scale_bytes;
  f.quantized = true;
  f.source = t.source;
  return f;
}

}  // namespace

struct FormatTable::Generated {
  std::mutex mutex;
  std::deque<QuantFormat> formats;  // deque: pointers stay valid as it grows
};

FormatTable FormatTable::load(const std::filesystem::path& file) {
  const auto doc = read_json_file(file);
  const JsonView root(doc, file.string());
  FormatTable cat;
  std::set<std::uint32_t> gguf_ids;
  for (const auto& row : root.at("formats").items()) {
    QuantFormat f = parse_row(row);
    for (const auto& n : [&] {
           std::vector<std::string> all{f.name};
           all.insert(all.end(), f.aliases.begin(), f.aliases.end());
           return all;
         }()) {
      if (!cat.index_.emplace(to_lower(n), cat.formats_.size()).second)
        row.fail("duplicate format name or alias '" + n + "' (in row '" + f.name + "')");
    }
    if (f.gguf_type_id && !gguf_ids.insert(*f.gguf_type_id).second)
      row.fail_at("gguf_type_id", "duplicate GGUF type id " + std::to_string(*f.gguf_type_id));
    cat.formats_.push_back(std::move(f));
  }
  if (cat.formats_.empty()) root.fail_at("formats", "no formats defined");
  if (auto templates = root.get("templates")) {
    for (const auto& row : templates->items()) {
      QuantTemplate t = parse_template(row);
      for (const auto& other : cat.templates_)
        if (other.prefix == t.prefix) row.fail_at("prefix", "duplicate template prefix '" + t.prefix + "'");
      cat.templates_.push_back(std::move(t));
    }
  }
  cat.generated_ = std::make_shared<Generated>();
  return cat;
}

const QuantFormat* FormatTable::find(std::string_view name) const {
  const std::string key = to_lower(name);
  if (const auto it = index_.find(key); it != index_.end()) return &formats_[it->second];
  // Longest prefix first, so "gptq-marlin-4bit-g128" is not read as prefix "gptq".
  const QuantTemplate* best = nullptr;
  for (const auto& t : templates_)
    if (key.starts_with(t.prefix + "-") && (!best || t.prefix.size() > best->prefix.size())) best = &t;
  if (!best || !generated_) return nullptr;
  const auto parsed = parse_template_name(std::string_view(key).substr(best->prefix.size() + 1));
  if (!parsed) return nullptr;
  auto made = generate(*best, *parsed);
  if (!made) return nullptr;
  const std::lock_guard lock(generated_->mutex);
  for (const auto& f : generated_->formats)
    if (f.name == made->name) return &f;
  return &generated_->formats.emplace_back(std::move(*made));
}

const QuantFormat& FormatTable::get(std::string_view name) const {
  if (const auto* f = find(name)) return *f;
  std::string known;
  for (const auto& f : formats_) known += (known.empty() ? "" : ", ") + f.name;
  for (const auto& t : templates_) known += ", " + t.prefix + "-<bits>bit-g<group|-1>";
  throw_unknown("unknown weight/storage format '" + std::string(name) + "' (known: " + known + ")");
}

const QuantFormat* FormatTable::find_gguf(std::uint32_t id) const {
  for (const auto& f : formats_)
    if (f.gguf_type_id == id) return &f;
  return nullptr;
}

const QuantFormat* FormatTable::find_safetensors(std::string_view dtype) const {
  for (const auto& f : formats_)
    if (f.safetensors_dtype && *f.safetensors_dtype == dtype) return &f;
  return nullptr;
}

bool row_fits(const QuantFormat& format, std::uint64_t row_len) {
  return format.layout != QuantLayout::Block || row_len % format.block_elems == 0;
}

namespace {

// Matrix geometry: `lead` stacked matrices (experts) of {out, in}; rows = lead * out.
struct Matrices {
  std::uint64_t lead = 1, out = 1, in = 1;
};

std::uint64_t group_int_bytes(const QuantFormat& f, const Matrices& m, std::string_view ctx) {
  // Per matrix {out, in}: weights packed along `in` into int32 words, one scale and (optionally)
  // one zero per group of `group_size` inputs per output; zeros are packed along `out` at `bits`
  // (GPTQ/AWQ qzeros [in/g, out*b/32] int32) unless stored unpacked (HQQ fp16 zeros).
  const std::uint64_t groups = f.group_size == 0 ? 1 : ceil_div(m.in, f.group_size);
  const std::uint64_t words_per_row =
      f.values_per_int32 != 0 ? ceil_div(m.in, f.values_per_int32) : ceil_div(checked_mul(m.in, f.bits, ctx), 32);
  const std::uint64_t qweight = checked_mul(checked_mul(words_per_row, 4, ctx), m.out, ctx);
  const std::uint64_t scales = checked_mul(checked_mul(groups, m.out, ctx), f.scale_bytes, ctx);
  std::uint64_t zeros = 0;
  if (f.has_zero_point)
    zeros = f.zero_point_bytes != 0
                ? checked_mul(checked_mul(groups, m.out, ctx), f.zero_point_bytes, ctx)
                : checked_mul(groups, ceil_div(checked_mul(m.out, f.bits, ctx), 32) * 4, ctx);
  const std::uint64_t g_idx = checked_mul(m.in, f.g_idx_bytes, ctx);
  const std::uint64_t one = checked_add(checked_add(qweight, scales, ctx), checked_add(zeros, g_idx, ctx), ctx);
  return checked_mul(one, m.lead, ctx);
}

std::uint64_t payload_bytes(const QuantFormat& f, const Matrices& m, std::string_view what,
                            std::string_view ctx) {
  const std::uint64_t rows = checked_mul(m.lead, m.out, ctx);
  const std::uint64_t n = checked_mul(rows, m.in, ctx);
  switch (f.layout) {
    case QuantLayout::Block: {
      if (m.in % f.block_elems != 0)
        throw_usage(std::string(what) + ": row of " + std::to_string(m.in) +
                    " elements is not a multiple of " + f.name + "'s block of " +
                    std::to_string(f.block_elems));
      return checked_mul(checked_mul(rows, m.in / f.block_elems, ctx), f.block_bytes, ctx);
    }
    case QuantLayout::GroupInt:
      return group_int_bytes(f, m, ctx);
    case QuantLayout::Bnb4: {
      // Flattened: n/2 bytes of nibbles; absmax per group_size weights, fp32 or (double quant)
      // uint8 plus one fp32 scale per 256 absmax values.
      const std::uint64_t absmax_count = ceil_div(n, f.group_size);
      const std::uint64_t absmax = f.double_quant ? absmax_count + ceil_div(absmax_count, 256) * 4
                                                  : checked_mul(absmax_count, 4, ctx);
      return checked_add(ceil_div(n, 2), absmax, ctx);
    }
    case QuantLayout::PerChannel:
      return checked_add(n, checked_mul(rows, f.scale_bytes, ctx), ctx);
    case QuantLayout::Block2D: {
      const std::uint64_t tiles = checked_mul(
          m.lead, checked_mul(ceil_div(m.out, f.block_rows), ceil_div(m.in, f.block_cols), ctx), ctx);
      return checked_add(n, checked_mul(tiles, f.scale_bytes, ctx), ctx);
    }
  }
  throw_internal("unhandled quant layout");
}

}  // namespace

std::uint64_t tensor_bytes(const QuantFormat& f, std::span<const std::uint64_t> shape,
                           std::string_view what) {
  // "bytes of <what>" names an overflow. It is built for every tensor but read only on error, so
  // a name that fits goes on the stack (a million GGUF tensor infos: a million allocations otherwise).
  constexpr std::string_view kPrefix = "bytes of ";
  std::array<char, 160> stack_ctx;
  std::string heap_ctx;
  std::string_view ctx;
  if (what.size() <= stack_ctx.size() - kPrefix.size()) {
    const auto end = std::copy(what.begin(), what.end(), std::copy(kPrefix.begin(), kPrefix.end(), stack_ctx.begin()));
    ctx = std::string_view(stack_ctx.data(), static_cast<std::size_t>(end - stack_ctx.begin()));
  } else {
    heap_ctx = std::string(kPrefix) + std::string(what);
    ctx = heap_ctx;
  }
  Matrices m;
  if (!shape.empty()) m.in = shape.back();
  if (shape.size() >= 2) m.out = shape[shape.size() - 2];
  for (std::size_t k = 0; k + 2 < shape.size(); ++k) m.lead = checked_mul(m.lead, shape[k], ctx);
  const std::uint64_t per_matrix = checked_mul(m.lead, f.tensor_scale_bytes, ctx);
  return checked_add(payload_bytes(f, m, what, ctx), per_matrix, ctx);
}

double QuantFormat::bits_per_weight(std::uint64_t row_len, std::uint64_t rows) const {
  const std::uint64_t shape[2] = {rows, row_len};
  const double bytes = static_cast<double>(tensor_bytes(*this, shape, name));
  return bytes * 8.0 / (static_cast<double>(rows) * static_cast<double>(row_len));
}

}  // namespace vramplan
