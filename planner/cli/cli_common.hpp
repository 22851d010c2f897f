// cli_common.hpp — what every subcommand shares: output format, common options, parsing, emitting.
#pragma once

#include <filesystem>
#include <iosfwd>
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
void add_common_options(po::options_description& desc, bool markdown_allowed = false, bool csv_allowed = false);

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

//! The data root for this process (VRAMPLAN_DATA, else next to the executable or the folder given to
//! look_for_data_in), found once on first use.
const DataRoot& data_root();
//! Where data_root() looks when VRAMPLAN_DATA is not set, instead of <executable>/../share/vramplan: the
//! Python module, whose executable is the interpreter, names the folder its wheel installed data/ in.
void look_for_data_in(const std::filesystem::path& folder);

//! Where commands write their output and messages: std::cout / std::cerr unless a ScopedStreams is alive
//! (run_captured in dispatch.hpp). Commands never name std::cout or std::cerr themselves.
std::ostream& out();
std::ostream& err();

//! Sends out() and err() to two other streams for its lifetime (one at a time: not nested, not threaded).
class ScopedStreams {
 public:
  ScopedStreams(std::ostream& out, std::ostream& err);
  ~ScopedStreams();
  ScopedStreams(const ScopedStreams&) = delete;
  ScopedStreams& operator=(const ScopedStreams&) = delete;

 private:
  std::ostream* saved_out_;
  std::ostream* saved_err_;
};

//! One option a command declares, as its parser knows it.
struct OptionInfo {
  std::string name;     //!< long name, without dashes
  bool is_switch;       //!< takes no value (--limits)
  bool repeatable;      //!< may be given several times (--tenant, --feature)
};

//! While alive, parse_args records the options of the command being run into `sink` and returns false
//! (as for --help) without parsing or printing: declared_options (dispatch.hpp) runs a command this way.
class ScopedOptionSink {
 public:
  explicit ScopedOptionSink(std::vector<OptionInfo>& sink);
  ~ScopedOptionSink();
  ScopedOptionSink(const ScopedOptionSink&) = delete;
  ScopedOptionSink& operator=(const ScopedOptionSink&) = delete;
};

}  // namespace vramplan::cli
