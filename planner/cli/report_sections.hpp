// report_sections.hpp — `vramplan report`: plan, sweep, simulator and training results turned
// into the HTML page's sections (report/html_page.hpp) and charts (report/chart.hpp). The
// figures come from the library as they are; these functions only choose and label them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vramplan/plan/capacity_report.hpp"
#include "vramplan/plan/check.hpp"
#include "vramplan/plan/sweep.hpp"
#include "vramplan/report/chart.hpp"
#include "vramplan/report/html_page.hpp"
#include "vramplan/sim/simulator.hpp"
#include "vramplan/train/train_plan.hpp"

namespace vramplan::cli {

//! One GPU option of the report: a fitting sweep row (its index in the sweep) and the full check
//! of its configuration.
struct ReportOption {
  std::size_t row = 0;
  plan::CheckOutcome check;
};

//! The recommended layout (row 0), the alternatives table with the cost of every period, lots
//! and price bases, and what does not fit.
void add_options_section(report::HtmlPage& page, const plan::SweepResult& sweep, std::size_t top);

//! Per option: needed (expected), needed (upper bound) and held, stacked by component, with the
//! card's capacity as the group's limit line. GiB per GPU.
report::StackedBarChart memory_chart(const plan::SweepResult& sweep, const std::vector<ReportOption>& options);
void add_memory_section(report::HtmlPage& page, const plan::SweepResult& sweep, const std::vector<ReportOption>& options);

//! The recommended option's batch table (check --batch-range) and its throughput and latency charts.
void add_batch_section(report::HtmlPage& page, const plan::CheckOutcome& recommended);

//! The simulated run of the recommended layout: its figures and the timeline charts.
void add_simulation_section(report::HtmlPage& page, const plan::SimulateAnswers& answers,
                            const std::vector<sim::TimelineSample>& timeline);

//! A training plan: the components per phase as stacked bars against the card, and the table.
void add_training_section(report::HtmlPage& page, const train::TrainPlan& plan);

//! What the figures rest on: the engine profile, the model source, the upper-bound margins of
//! data/accuracy_bounds.json with the records they come from, expected vs upper bound per option.
void add_accuracy_section(report::HtmlPage& page, const plan::SweepResult& sweep, const std::vector<ReportOption>& options);

}  // namespace vramplan::cli
