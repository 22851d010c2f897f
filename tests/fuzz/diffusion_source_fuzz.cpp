// A diffusion catalogue entry's source.json (diffusion/pipeline_load.cpp read_catalogue_source:
// _id, _source, _configs, _published_params, _defaults with torch_dtype, steps, guidance, T5
// tokens), then what reads it downstream: inspect and a plan at the entry's defaults
// (diffusion_plan.cpp plan_diffusion), so fuzzed defaults reach the memory and step arithmetic.
//
// The scratch directory is a data root: models/diffusion/ a copy of the repository's catalogue,
// data/ a link to the repository's data/. The input becomes the source.json of the entry its
// "_id" names (any other input goes to the first entry), so the real files of every pipeline
// class are seeds (tools/fuzz.sh).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "vramplan/diffusion/diffusion_plan.hpp"

namespace {

namespace fs = std::filesystem;

// The catalogue ids, after copying models/diffusion/ into the scratch root (once per process).
const std::vector<std::string>& catalogue_ids() {
  static const std::vector<std::string> ids = [] {
    const fs::path source = fs::path(VRAMPLAN_SOURCE_DIR);
    const fs::path root = vramplan::fuzz::scratch_dir();
    fs::create_directories(root / "models");
    fs::copy(source / "models" / "diffusion", root / "models" / "diffusion",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    if (!fs::exists(root / "data")) fs::create_directory_symlink(source / "data", root / "data");
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(root / "models" / "diffusion"))
      if (e.is_directory()) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }();
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto& ids = catalogue_ids();
  std::string id = ids.front();
  const auto parsed = nlohmann::json::parse(data, data + size, nullptr, false);
  if (parsed.is_object() && parsed.contains("_id") && parsed["_id"].is_string() &&
      std::find(ids.begin(), ids.end(), parsed["_id"].get<std::string>()) != ids.end())
    id = parsed["_id"].get<std::string>();
  fuzz::write_input(data, size, "models/diffusion/" + id + "/source.json");
  const DataRoot root{fuzz::scratch_dir()};
  return fuzz::refuse_cleanly([&] {
    const diffusion::Pipeline p = diffusion::load_pipeline(id, root);
    (void)diffusion::pipeline_inspect_json(p);
    diffusion::DiffusionRequest req;
    req.model = id;
    req.gpu = "h100";
    const diffusion::DiffusionPlan plan = diffusion::plan_diffusion(req, root);
    (void)diffusion::diffusion_plan_json(plan);
    (void)diffusion::diffusion_plan_text(plan);
  });
}
