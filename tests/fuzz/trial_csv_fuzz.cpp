// A trial CSV with measured columns (plan/trial.cpp read_trial_csv, `trial --compare`): every row
// read, then shown as text and JSON, the paths a file's own fields reach.
#include "fuzz_support.hpp"
#include "vramplan/plan/trial.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vramplan;
  const auto path = fuzz::write_input(data, size, "trial.csv");
  return fuzz::refuse_cleanly([&] {
    const auto rows = plan::read_trial_csv(path);
    (void)plan::trial_comparison_text(rows);
    // As the CLI writes JSON (cli_common.cpp): a byte that is not UTF-8 becomes U+FFFD.
    (void)plan::trial_comparison_json(rows).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}
