// SGLang's DeepSeek sparse attention pool by release; the rules and their sources are in
// vramplan/memory/sglang_dsa.hpp.
#include "vramplan/memory/sglang_dsa.hpp"

#include "vramplan/core/bytes.hpp"
#include "vramplan/core/version.hpp"
#include "vramplan/memory/component.hpp"
#include "vramplan/model/dsa_cache_rows.hpp"

namespace vramplan::memory {

SglangRelease SglangRelease::parse(std::string_view release, bool assumed) {
  SglangRelease r;
  if (assumed) return r;
  r.numbers = release_numbers(release);  // empty: "nightly" or another name, the newest release
  if (r.numbers.size() < 3) {
    r.numbers.clear();  // "0.5": the newest release of the series, the newest there is
    return r;
  }
  // 0.5.3rc2 and 0.5.3 budget the latent alone; 0.5.3.post1 adds the indexer (the version's
  // suffix is not part of its numbers).
  r.before_053_post1 = r.numbers == std::vector<std::uint64_t>{0, 5, 3} && release.find("post") == std::string_view::npos;
  return r;
}

bool SglangRelease::at_least(std::vector<std::uint64_t> v) const { return !released_before(numbers, v); }

SglangDsaPool sglang_dsa_pool(const SglangRelease& release, std::string_view vendor, int cc_major) {
  SglangDsaPool out;
  // server_args.py: page_size 64 for the NSA pool on CUDA (memory_pool.py asserts it); on ROCm 1
  // from 0.5.8, 64 before.
  out.page_size = vendor == "amd" && release.at_least({0, 5, 8}) ? 1 : 64;
  // 0.5.10 (server_args.py _set_default_nsa_backends) makes trtllm the NSA decode backend of an
  // fp8 cache on compute capability 10+; trtllm keeps the latent as plain 576 B rows
  // (model_runner_kv_cache_mixin.py calculate_mla_kv_cache_dim, 0.5.9).
  if (vendor == "nvidia" && cc_major >= 10 && release.at_least({0, 5, 10})) out.fp8_latent = DsaFp8Latent::Plain;
  // 0.5.3 server_args.py _handle_model_specific_adjustments: mem_fraction_static = 0.8 for these
  // models, whatever was asked (removed in 0.5.3.post1).
  if (release.before_053_post1) out.forced_mem_fraction = 0.8;
  return out;
}

std::uint64_t sglang_dsa_budget_bytes(const SglangRelease& release, const ModelArch& arch, const KvLayout& kv,
                                      std::uint64_t element_bytes, std::string& explain) {
  if (release.at_least({0, 5, 17})) return kv.bytes_per_token;  // pool_configurator.py: what is allocated
  // Before 0.5.17 the cell size counts the latent as (kv_lora_rank + rope) x element size
  // whatever layout the pool allocates, and from 0.5.3.post1 the indexer key of every layer.
  const std::uint64_t latent = checked_mul(arch.kv_lora_rank + arch.qk_rope_head_dim, element_bytes, "SGLang cell size");
  const std::uint64_t indexer = release.before_053_post1 ? 0 : dsa_indexer_row(arch);
  const std::uint64_t budget = checked_mul(checked_add(latent, indexer, "SGLang cell size"), arch.num_layers, "SGLang cell size");
  if (budget != kv.bytes_per_token)
    explain = "this release sizes the pool with " + grouped(budget) + " B a token (" + std::to_string(arch.num_layers) +
              " layers x (" + std::to_string(arch.kv_lora_rank + arch.qk_rope_head_dim) + " x " +
              std::to_string(element_bytes) + " B" + (indexer ? " + " + std::to_string(indexer) + " B indexer" : "") +
              ")) but allocates " + grouped(kv.bytes_per_token) +
              " B: the pool holds budget / cell size tokens at the allocated size, beyond its share "
              "(model_runner.py profile_max_num_token; exact from 0.5.17)";
  return budget;
}

}  // namespace vramplan::memory
