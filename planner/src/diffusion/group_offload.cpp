// diffusers group offloading, read from src/diffusers/hooks/group_offloading.py at diffusers 58eb52c0:
//  * block level (_apply_group_offloading_block_level): every nn.ModuleList / nn.Sequential among
//    the module's DIRECT children (named_children) is cut into groups of num_blocks_per_group
//    consecutive blocks; a group is onloaded by its first block's pre_forward and offloaded by its
//    last block's post_forward (GroupOffloadingHook), so one group is on the GPU at a time.
//    Everything else — the unmatched children and the module's own parameters / buffers
//    (_gather_parameters_with_no_group_offloading_parent) — is one "unmatched" group whose onload
//    and offload leader is the module itself: it stays on the GPU for the module's whole forward.
//    A child named in the class's `_group_offload_block_modules` (AutoencoderKL, AutoencoderKLWan:
//    quant_conv, post_quant_conv, encoder, decoder) is treated the same way recursively, so the VAE
//    decode holds the decoder's unmatched group (conv_in, mid_block, conv_norm_out, conv_out) and
//    one group of its up_blocks. A component without such a child (the transformers text encoders:
//    T5EncoderModel's children are `shared` and the T5Stack `encoder`) is one group: all of it.
//    The hooks wrap forward only (hooks/hooks.py HookRegistry): AutoencoderKLCogVideoX has no
//    block modules, so its decode() reaches no group hook — block level is refused for it.
//  * leaf level (_apply_group_offloading_leaf_level): one group per Conv / Linear / Embedding
//    (_GO_LC_SUPPORTED_PYTORCH_LAYERS in hooks/_common.py), the other parameters (norms, tables)
//    grouped by the module holding them: the largest leaf is what is on the GPU (the walk's
//    largest leaf, as for sequential offload).
//  * use_stream: the onload leader of group i onloads group i + 1 on a side stream
//    (GroupOffloadingHook.pre_forward, next_group set by LazyPrefetchGroupOffloadingHook after the
//    first forward), so two consecutive groups are resident; with block level num_blocks_per_group
//    is set to 1 (a warning in _apply_group_offloading_block_level). The first forward of a module
//    runs without the prefetch; the plan takes the steady state (two groups).
//  * record_stream: the offloaded group's memory returns to the caching allocator when the compute
//    stream has passed it — reserved, not allocated: max_memory_allocated does not change.
#include "vramplan/diffusion/group_offload.hpp"

#include <algorithm>
#include <charconv>

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/error.hpp"

namespace vramplan::diffusion {

namespace {

constexpr std::uint64_t kMaxBlocksPerGroup = 1u << 20;

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw_usage("--offload group:" + std::string(text) + ": " + why +
              "; expected group:block:N, group:leaf or group:gpu per component, each with optional +stream "
              "(+record needs +stream), then /<component>=<setting>..., e.g. group:leaf+stream/text_encoder=block:2");
}

GroupSetting parse_setting(std::string_view whole, std::string_view text, bool component) {
  GroupSetting s;
  std::string_view base = text.substr(0, text.find('+'));
  std::string_view rest = base.size() < text.size() ? text.substr(base.size()) : std::string_view{};
  if (base == "leaf") {
    s.level = GroupSetting::Level::Leaf;
  } else if (base == "gpu") {
    if (!component) bad(whole, "gpu (kept on the GPU) applies to one component, e.g. group:leaf/vae=gpu");
    s.level = GroupSetting::Level::OnGpu;
  } else if (base.rfind("block:", 0) == 0) {
    s.level = GroupSetting::Level::Block;
    const std::string_view n = base.substr(6);
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), s.blocks_per_group);
    if (ec != std::errc() || end != n.data() + n.size() || s.blocks_per_group == 0 ||
        s.blocks_per_group > kMaxBlocksPerGroup)
      bad(whole, "num_blocks_per_group '" + std::string(n) + "' is not a count from 1 to " +
                     std::to_string(kMaxBlocksPerGroup));
  } else {
    bad(whole, "'" + std::string(base) + "' is not block:N, leaf or gpu");
  }
  while (!rest.empty()) {
    const std::size_t next = rest.find('+', 1);
    const std::string_view opt = rest.substr(1, next == std::string_view::npos ? std::string_view::npos : next - 1);
    if (opt == "stream") {
      s.stream = true;
    } else if (opt == "record") {
      s.record_stream = true;
    } else {
      bad(whole, "'+" + std::string(opt) + "' is not +stream or +record");
    }
    rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next);
  }
  if (s.level == GroupSetting::Level::OnGpu && (s.stream || s.record_stream))
    bad(whole, "gpu takes no +stream / +record");
  // apply_group_offloading: "`record_stream` cannot be True when `use_stream=False`".
  if (s.record_stream && !s.stream) bad(whole, "+record needs +stream (record_stream without use_stream is an error in diffusers)");
  return s;
}

}  // namespace

const GroupSetting& GroupOffload::setting(std::string_view component) const {
  for (const auto& [name, s] : components)
    if (name == component) return s;
  return all;
}

GroupOffload parse_group_offload(std::string_view text) {
  GroupOffload g;
  std::size_t slash = text.find('/');
  g.all = parse_setting(text, text.substr(0, slash), false);
  while (slash != std::string_view::npos) {
    const std::size_t next = text.find('/', slash + 1);
    const std::string_view part = text.substr(slash + 1, next == std::string_view::npos ? std::string_view::npos : next - slash - 1);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) bad(text, "'" + std::string(part) + "' is not <component>=<setting>");
    const std::string name(part.substr(0, eq));
    for (const auto& [seen, s] : g.components)
      if (seen == name) bad(text, "names " + name + " twice");
    g.components.emplace_back(name, parse_setting(text, part.substr(eq + 1), true));
    slash = next;
  }
  return g;
}

std::string group_setting_text(const GroupSetting& s) {
  std::string out = s.level == GroupSetting::Level::Leaf    ? "leaf"
                    : s.level == GroupSetting::Level::OnGpu ? "gpu"
                                                            : "block:" + std::to_string(s.blocks_per_group);
  if (s.stream) out += "+stream";
  if (s.record_stream) out += "+record";
  return out;
}

std::string group_offload_text(const GroupOffload& g) {
  std::string out = group_setting_text(g.all);
  for (const auto& [name, s] : g.components) out += "/" + name + "=" + group_setting_text(s);
  return out;
}

GroupResident group_resident(const Component& c, const GroupSetting& s) {
  GroupResident r;
  const Tally& t = c.inventory;
  if (s.level == GroupSetting::Level::OnGpu) {
    r.elements = t.elements();
    r.detail = "kept on the GPU";
    return r;
  }
  if (s.level == GroupSetting::Level::Leaf) {
    r.leaves = s.stream ? 2 : 1;
    r.detail = s.stream ? "leaf level: the largest leaf module and the next one prefetched" : "leaf level: the largest leaf module";
    return r;
  }
  if (t.block_lists.empty()) {
    if (c.role == Role::Vae)
      throw_usage("--offload group: block level on " + c.name + " (" + c.class_name +
                  "): the class names no _group_offload_block_modules, so its decode() reaches no group hook (the "
                  "hooks wrap forward); give the VAE leaf level, e.g. group:block:1/" + c.name + "=leaf");
    r.elements = t.elements();
    r.detail = "block level: no nn.ModuleList among its direct children, the whole model is one group";
    return r;
  }
  // The unmatched group: the module holding the lists, less every block of them.
  const std::uint64_t owner = t.block_lists.front().owner ? t.block_lists.front().owner : t.elements();
  std::uint64_t in_blocks = 0;
  for (const auto& l : t.block_lists)
    for (const auto b : l.blocks) in_blocks = checked_add(in_blocks, b, "block elements");
  const std::uint64_t unmatched = owner > in_blocks ? owner - in_blocks : 0;
  std::uint64_t largest = 0;
  std::string where;
  if (s.stream) {
    // num_blocks_per_group 1; the current block and the next in execution order (across lists).
    std::vector<std::pair<std::uint64_t, std::string>> order;
    for (const auto& l : t.block_lists)
      for (std::size_t i = 0; i < l.blocks.size(); ++i) order.emplace_back(l.blocks[i], l.name + "." + std::to_string(i));
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::uint64_t pair = order[i].first + (i + 1 < order.size() ? order[i + 1].first : 0);
      if (pair > largest) {
        largest = pair;
        where = order[i].second + (i + 1 < order.size() ? " + " + order[i + 1].second + " (prefetched)" : "");
      }
    }
  } else {
    for (const auto& l : t.block_lists)
      for (std::size_t i = 0; i < l.blocks.size(); i += s.blocks_per_group) {
        std::uint64_t sum = 0;
        const std::size_t end = std::min<std::size_t>(l.blocks.size(), i + s.blocks_per_group);
        for (std::size_t j = i; j < end; ++j) sum += l.blocks[j];
        if (sum > largest) {
          largest = sum;
          where = l.name + "." + std::to_string(i) + (end - i > 1 ? "-" + std::to_string(end - 1) : "");
        }
      }
  }
  r.elements = checked_add(unmatched, largest, "group elements");
  r.detail = "block level: " + std::to_string(unmatched) + " unmatched elements + group " + where;
  return r;
}

}  // namespace vramplan::diffusion
