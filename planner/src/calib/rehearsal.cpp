#include "vramplan/calib/rehearsal.hpp"

#include <fstream>

#include "vramplan/core/error.hpp"
#include "vramplan/io/json_file.hpp"

namespace vramplan::calib {
namespace {

using nlohmann::json;

struct DtypeSize {
  std::string_view name;
  std::uint64_t bytes;
};
constexpr DtypeSize kDtypeSizes[] = {{"bf16", 2}, {"fp16", 2}, {"fp8_e4m3", 1}};
static_assert(std::size(kDtypeSizes) == std::size(kRehearsalDtypes));

std::string known_dtypes() {
  std::string out;
  for (const auto& d : kDtypeSizes) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

const DtypeSize* find_dtype(std::string_view name) {
  for (const auto& d : kDtypeSizes)
    if (d.name == name) return &d;
  return nullptr;
}

// Operand bytes of one GEMM, so a shape that cannot exist (overflowing u64) is refused up front.
void check_gemm_bytes(const RehearsalGemm& g) {
  const auto elem = rehearsal_dtype_bytes(g.dtype);
  checked_mul(checked_mul(g.m, g.k, "rehearsal GEMM A"), elem, "rehearsal GEMM A");
  checked_mul(checked_mul(g.k, g.n, "rehearsal GEMM B"), elem, "rehearsal GEMM B");
  checked_mul(checked_mul(g.m, g.n, "rehearsal GEMM C"), 2, "rehearsal GEMM C");
}

}  // namespace

std::uint64_t rehearsal_dtype_bytes(std::string_view dtype) {
  if (const auto* d = find_dtype(dtype)) return d->bytes;
  throw_usage("unknown GEMM dtype '" + std::string(dtype) + "' (known: " + known_dtypes() + ")");
}

Bytes RehearsalInput::total() const {
  const std::uint64_t kv = checked_mul(kv_block.count(), kv_blocks, "rehearsal KV cache");
  return Bytes(checked_add(checked_add(weights.count(), kv, "rehearsal total"),
                           activation_workspace.count(), "rehearsal total"));
}

json rehearsal_to_json(const RehearsalInput& input) {
  input.total();  // throws on overflow
  json gemms = json::array();
  for (std::size_t i = 0; i < input.gemms.size(); ++i) {
    const auto& g = input.gemms[i];
    const std::string where = "rehearsal GEMM " + std::to_string(i) + " (" + g.name + ")";
    if (g.m == 0 || g.n == 0 || g.k == 0) throw_usage(where + ": m, n and k must be positive");
    check_gemm_bytes(g);
    gemms.push_back({{"name", g.name}, {"dtype", g.dtype}, {"m", g.m}, {"n", g.n}, {"k", g.k}});
  }
  json out = {{"schema", kRehearsalSchema},
              {"label", input.label},
              {"weights_bytes", input.weights.count()},
              {"kv_block_bytes", input.kv_block.count()},
              {"kv_blocks", input.kv_blocks},
              {"activation_workspace_bytes", input.activation_workspace.count()},
              {"gemms", gemms}};
  out["predicted_peak_bytes"] = input.predicted_peak ? json(input.predicted_peak->count()) : json(nullptr);
  return out;
}

RehearsalInput rehearsal_from_json(const json& doc, const std::string& origin) {
  const JsonView root(doc, origin);
  if (!root.is_object()) root.fail("expected a JSON object");
  const std::string schema = root.req_string("schema");
  if (schema != kRehearsalSchema)
    root.fail_at("schema", "expected \"" + std::string(kRehearsalSchema) + "\", got \"" + schema + "\"");
  RehearsalInput in;
  in.label = root.req_string("label");
  in.weights = Bytes(root.req_u64("weights_bytes"));
  in.kv_block = Bytes(root.req_u64("kv_block_bytes"));
  in.kv_blocks = root.req_u64("kv_blocks");
  in.activation_workspace = Bytes(root.req_u64("activation_workspace_bytes"));
  if (const auto peak = root.opt_u64("predicted_peak_bytes")) in.predicted_peak = Bytes(*peak);
  try {
    in.total();
  } catch (const Error& e) {
    root.fail_at("kv_blocks", e.what());
  }
  for (const auto& g : root.at("gemms").items()) {
    RehearsalGemm gemm;
    gemm.name = g.req_string("name");
    gemm.dtype = g.req_string("dtype");
    if (!find_dtype(gemm.dtype))
      g.fail_at("dtype", "unknown dtype '" + gemm.dtype + "' (known: " + known_dtypes() + ")");
    const std::pair<const char*, std::uint64_t*> dims[] = {{"m", &gemm.m}, {"n", &gemm.n}, {"k", &gemm.k}};
    for (const auto& [key, dim] : dims) {
      *dim = g.req_u64(key);
      if (*dim == 0) g.fail_at(key, "expected a positive integer");
    }
    try {
      check_gemm_bytes(gemm);
    } catch (const Error& e) {
      g.fail(e.what());
    }
    in.gemms.push_back(std::move(gemm));
  }
  return in;
}

void write_rehearsal(const RehearsalInput& input, const std::filesystem::path& path) {
  const json doc = rehearsal_to_json(input);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Io, path.string() + ": cannot open for writing");
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out.close();
  if (!out) throw Error(ErrorKind::Io, path.string() + ": write failed");
}

RehearsalInput load_rehearsal(const std::filesystem::path& path) {
  return rehearsal_from_json(read_json_file(path), path.string());
}

}  // namespace vramplan::calib
