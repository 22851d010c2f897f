#include "vramplan/model/tp_validity.hpp"

#include "vramplan/core/error.hpp"

namespace vramplan {

TpCheck check_tp(const ModelArch& arch, std::uint64_t tp) {
  TpCheck c;
  c.tp = tp;
  const auto fail = [&](std::string why) {
    c.valid = false;
    c.why = std::move(why);
    return c;
  };
  if (tp == 0) return fail("TP must be >= 1");
  const std::string t = std::to_string(tp);
  if (arch.num_heads % tp != 0)
    return fail("attention heads (" + std::to_string(arch.num_heads) + ") must be divisible by TP " + t);
  const bool mla = arch.kv_lora_rank > 0;
  const std::uint64_t kv = arch.num_kv_heads;
  if (!mla && kv > 0 && kv % tp != 0 && tp % kv != 0)
    return fail("KV heads (" + std::to_string(kv) + ") must divide TP " + t + " or be a multiple of it");
  if (arch.intermediate_size > 0 && arch.num_experts == 0 && arch.intermediate_size % tp != 0)
    return fail("MLP intermediate size (" + std::to_string(arch.intermediate_size) + ") must be divisible by TP " + t);
  return c;
}

std::string check_pp(const ModelArch& arch, std::uint64_t pp) {
  if (pp == 0) return "PP must be >= 1";
  if (arch.num_layers > 0 && pp > arch.num_layers)
    return "PP " + std::to_string(pp) + " exceeds the " + std::to_string(arch.num_layers) + " decoder layers";
  return "";
}

void require_valid_split(const ModelArch& arch, const std::string& model_id, std::uint64_t tp, std::uint64_t pp) {
  if (const TpCheck tc = check_tp(arch, tp); !tc.valid)
    throw Error(ErrorKind::Usage, "TP " + std::to_string(tp) + " is invalid for " + model_id + ": " + tc.why);
  if (const std::string why = check_pp(arch, pp); !why.empty()) throw Error(ErrorKind::Usage, why);
}

}  // namespace vramplan
