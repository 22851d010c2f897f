// cli_common.hpp — what every subcommand shares: output format, common options, parsing, emitting.
#pragma once

#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "vramplan/io/data_root.hpp"

namespace vramplan::cli {

namespace po = boost::program_options;

enum class OutputFormat { Table, Json, Markdown };

struct CommonOptions {
  OutputFormat format = OutputFormat::Table;
  bool quiet = false;  //!< no progress output (implied by JSON and by a non-terminal stdout)
};

//! Adds --format, --json, --quiet, --help (main options + examples) and --help-all to a subcommand's options.
void add_common_options(po::options_description& desc, bool markdown_allowed = false);

//! Parses `args` against `desc` (and positional options, if any). Returns false when --help or --help-all was
//! given (help already printed to stdout). Throws Error(Usage) on unknown or malformed options.
bool parse_args(const std::string& command, const std::string& synopsis,
                const po::options_description& desc, const std::vector<std::string>& args,
                po::variables_map& vm,
                const po::positional_options_description* positional = nullptr);

CommonOptions read_common_options(const po::variables_map& vm);

//! Prints a result: JSON (pretty, with the "schema" key first) or the text rendering.
void emit(const CommonOptions& opts, const nlohmann::json& json, const std::string& text);

//! True when progress indicators may be drawn (stderr is a terminal and output is not JSON/quiet).
bool show_progress(const CommonOptions& opts);

//! The data root for this process (VRAMPLAN_DATA or next to the executable), found once.
const DataRoot& data_root();

}  // namespace vramplan::cli
