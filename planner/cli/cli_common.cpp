#include "cli_common.hpp"

#include <unistd.h>

#include <iostream>
#include <mutex>
#include <optional>
#include <string_view>

#include "commands.hpp"
#include "decision_options.hpp"
#include "vramplan/memory/flag_equivalents.hpp"
#include "vramplan/core/error.hpp"
#include "vramplan/core/table.hpp"
#include "vramplan/core/text.hpp"

namespace vramplan::cli {

namespace {

std::ostream* g_out = &std::cout;
std::ostream* g_err = &std::cerr;
std::vector<OptionInfo>* g_option_sink = nullptr;

}  // namespace

std::ostream& out() { return *g_out; }
std::ostream& err() { return *g_err; }

ScopedStreams::ScopedStreams(std::ostream& out, std::ostream& err) : saved_out_(g_out), saved_err_(g_err) {
  g_out = &out;
  g_err = &err;
}

ScopedStreams::~ScopedStreams() {
  g_out = saved_out_;
  g_err = saved_err_;
}

ScopedOptionSink::ScopedOptionSink(std::vector<OptionInfo>& sink) { g_option_sink = &sink; }
ScopedOptionSink::~ScopedOptionSink() { g_option_sink = nullptr; }

void add_common_options(po::options_description& desc, bool markdown_allowed, bool csv_allowed) {
  // A command without a Markdown rendering refuses the format instead of printing its table; an
  // unknown one is refused with the formats this command writes.
  auto check = [markdown_allowed, csv_allowed](const std::string& f) {
    const std::string listed = std::string("table, json") + (markdown_allowed ? ", markdown" : "") + (csv_allowed ? ", csv" : "");
    if (!markdown_allowed && (f == "markdown" || f == "md"))
      throw Error(ErrorKind::Usage, csv_allowed ? "--format markdown: this command writes a table, json or csv (--format table|json|csv)"
                                                : "--format markdown: this command writes a table or json (--format table|json)");
    if (f != "table" && f != "text" && f != "json" && f != "markdown" && f != "md" && !(csv_allowed && f == "csv"))
      throw Error(ErrorKind::Usage, "--format: unknown format '" + f + "' (" + listed + ")");
  };
  desc.add_options()
      ("format", po::value<std::string>()->default_value("table")->notifier(check),
       markdown_allowed ? "output format: table, json or markdown"
                        : (csv_allowed ? "output format: table, json or csv" : "output format: table or json"))
      ("json", po::bool_switch(), "same as --format json")
      ("quiet,q", po::bool_switch(), "no progress output")
      ("help,h", po::bool_switch(), "the main options and two examples")
      ("help-all", po::bool_switch(), "every option");
}

namespace {

// Help text is at most kHelpWidth columns, so that it reads in an 80-100 column terminal.
constexpr std::size_t kHelpWidth = 100;

// `text` wrapped at kHelpWidth, the lines after the first indented by `indent`; with `join`
// (" \\" for a shell command, so that a wrapped example still pastes as one command) at the end
// of every line but the last.
std::string wrapped(const std::string& text, std::size_t indent, std::string_view join = "") {
  std::string out;
  for (const auto& line : wrap_words(text, kHelpWidth - join.size(), indent))
    out += (out.empty() ? "" : std::string(join) + "\n") + line;
  return out + "\n";
}

// --help: the command's main options (commands.cpp lists them) on one screen, then two examples;
// --help-all: every option. Both end with the examples, which run as written.
void print_help(const std::string& command, const std::string& synopsis, const po::options_description& desc,
                bool all) {
  const Command* c = find_command(command);
  out() << wrapped("usage: vramplan " + command + " " + synopsis, 9);
  if (c != nullptr) out() << "\n" << wrapped(std::string(c->summary), 0);
  out() << "\n";
  if (all || c == nullptr || c->main_options.empty()) {
    out() << desc << "\n";
  } else {
    po::options_description main("Main options", kHelpWidth, kHelpWidth / 2);
    for (const std::string_view name : c->main_options)
      for (const auto& o : desc.options())
        if (o->long_name() == name) main.add(o);
    const std::size_t more = desc.options().size() - main.options().size();
    out() << main << "\n"
              << more << " more options (engine flags, output, tuning): vramplan " << command << " --help-all\n";
  }
  if (c != nullptr && !c->examples.empty()) {
    out() << "\nexamples:\n";
    for (const std::string_view e : c->examples) out() << wrapped("  vramplan " + std::string(e), 6, " \\");
  }
}

}  // namespace

namespace {

// Boost reads an unsigned option through lexical_cast, which takes "-1" and wraps it to
// 2^64 - 1: --requests -1 would run (nearly) forever. A count given as a negative number is a
// usage error naming the option.
void refuse_negative_counts(const po::options_description& desc, const po::parsed_options& parsed) {
  for (const auto& o : parsed.options) {
    const auto* d = o.string_key.empty() ? nullptr : desc.find_nothrow(o.string_key, false);
    if (d == nullptr) continue;
    const auto& semantic = *d->semantic();
    const bool unsigned_value = dynamic_cast<const po::typed_value<std::uint64_t>*>(&semantic) != nullptr ||
                                dynamic_cast<const po::typed_value<std::uint32_t>*>(&semantic) != nullptr ||
                                dynamic_cast<const po::typed_value<unsigned long long>*>(&semantic) != nullptr;
    if (!unsigned_value) continue;
    for (const auto& v : o.value) {
      const auto first = v.find_first_not_of(" \t");
      if (first != std::string::npos && v[first] == '-')
        throw Error(ErrorKind::Usage, "--" + o.string_key + ": must not be negative, got '" + v + "'");
    }
  }
}

}  // namespace

bool parse_args(const std::string& command, const std::string& synopsis,
                const po::options_description& desc, const std::vector<std::string>& args,
                po::variables_map& vm, const po::positional_options_description* positional) {
  if (g_option_sink != nullptr) {
    for (const auto& o : desc.options()) {
      const auto& semantic = *o->semantic();
      // A vector-valued option accumulates its occurrences (Boost's validate for std::vector).
      const bool vector = dynamic_cast<const po::typed_value<std::vector<std::string>>*>(&semantic) != nullptr;
      g_option_sink->push_back({o->long_name(), semantic.max_tokens() == 0, vector || semantic.is_composing()});
    }
    return false;
  }
  try {
    po::command_line_parser parser(args);
    // Long options may be written with one dash (-tp 2, -ngl 99, as vLLM and llama.cpp users type
    // them); prefix guessing is off so "-q" never matches "--quantization".
    parser.options(desc).style((po::command_line_style::default_style |
                                po::command_line_style::allow_long_disguise) &
                               ~po::command_line_style::allow_guessing);
    if (positional != nullptr) parser.positional(*positional);
    const po::parsed_options parsed = parser.run();
    // Without a positional description Boost keeps stray words (the 4 of "--tp 2 4") as nameless
    // options and store() drops them: refuse them instead of planning something else.
    for (const auto& o : parsed.options)
      if (positional == nullptr && o.string_key.empty() && !o.original_tokens.empty())
        throw Error(ErrorKind::Usage, "vramplan " + command + ": unexpected argument '" + o.original_tokens.front() +
                                          "' (each option takes one value; lists are comma-separated)");
    refuse_negative_counts(desc, parsed);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    // --offload names a diffusers memory mode (diffusion_commands.cpp) or train's CPU offload.
    // vLLM's own --cpu-offload-gb (weights kept in host memory, read over UVA) is a flag of its own,
    // not modelled: said as such, not as diffusion's --offload.
    const std::string name = e.get_option_name();
    std::string hint = name == "--cpu-offload-gb" || name == "cpu-offload-gb"
                           ? ": vLLM's --cpu-offload-gb (weights offloaded to host memory, read over UVA) is not "
                             "modelled"
                       : name.find("offload") != std::string::npos
                           ? ": --offload is a memory mode of diffusion pipelines (none, model, sequential, "
                             "group:...) and of train, not of an LLM's " + command
                           : "";
    // Another engine's flag (--max-model-len under --engine sglang): whose it is, and this engine's.
    if (hint.empty() && desc.find_nothrow("engine", false) != nullptr)
      hint = memory::foreign_flag_hint(e.get_option_name(), engine_spec_of(args), data_root().data());
    throw Error(ErrorKind::Usage, "vramplan " + command + ": " + e.what() + hint +
                                      " (see 'vramplan " + command + " --help')");
  } catch (const po::error& e) {
    throw Error(ErrorKind::Usage, "vramplan " + command + ": " + e.what() +
                                      " (see 'vramplan " + command + " --help')");
  }
  const bool help_all = vm.count("help-all") && vm["help-all"].as<bool>();
  if (help_all || (vm.count("help") && vm["help"].as<bool>())) {
    print_help(command, synopsis, desc, help_all);
    return false;
  }
  return true;
}

CommonOptions read_common_options(const po::variables_map& vm) {
  CommonOptions opts;
  const std::string format = vm.count("format") ? vm["format"].as<std::string>() : "table";
  if (format == "table" || format == "text") opts.format = OutputFormat::Table;
  else if (format == "json") opts.format = OutputFormat::Json;
  else if (format == "markdown" || format == "md") opts.format = OutputFormat::Markdown;
  else throw Error(ErrorKind::Usage, "--format: unknown format '" + format + "' (table, json, markdown)");
  if (vm.count("json") && vm["json"].as<bool>()) {
    // Two requests for two formats: refused like other contradictions, not one silently kept.
    if (vm.count("format") && !vm["format"].defaulted() && opts.format != OutputFormat::Json)
      throw Error(ErrorKind::Usage, "--json and --format " + format + " ask for two output formats: give one");
    opts.format = OutputFormat::Json;
  }
  opts.quiet = vm.count("quiet") && vm["quiet"].as<bool>();
  return opts;
}

void emit(const CommonOptions& opts, const nlohmann::json& json, const std::string& text) {
  // The documents echo the user's bytes (a path, a model id), which need not be UTF-8: a bad
  // byte is written as U+FFFD (error_handler_t::replace) instead of aborting the dump.
  if (opts.format == OutputFormat::Json) {
    // nlohmann::json keeps keys sorted; put "schema" first so a reader sees what the document is.
    if (json.is_object() && json.contains("schema")) {
      nlohmann::ordered_json ordered;
      ordered["schema"] = json.at("schema");
      for (auto it = json.begin(); it != json.end(); ++it)
        if (it.key() != "schema") ordered[it.key()] = it.value();
      out() << ordered.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    } else {
      out() << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
  } else {
    // The text echoes the user's bytes too (a model path, a log's model name): control
    // characters (C1 included) and bytes that are not UTF-8 are written \xHH, as in errors.
    const std::string safe = escape_control_keep_lines(text);
    out() << safe;
    if (!safe.empty() && safe.back() != '\n') out() << "\n";
  }
  out().flush();
}

bool show_progress(const CommonOptions& opts) {
  return !opts.quiet && opts.format != OutputFormat::Json && isatty(STDERR_FILENO) &&
         isatty(STDOUT_FILENO);
}

namespace {

struct DataRootChoice {
  std::mutex mutex;  // sweep and simulate workers may ask first
  std::filesystem::path folder;  // look_for_data_in's, or empty: next to the executable
  std::optional<DataRoot> found;
};

DataRootChoice& data_root_choice() {
  static DataRootChoice choice;
  return choice;
}

}  // namespace

const DataRoot& data_root() {
  auto& choice = data_root_choice();
  const std::lock_guard lock(choice.mutex);
  if (!choice.found) choice.found = choice.folder.empty() ? find_data_root() : find_data_root_in(choice.folder);
  return *choice.found;
}

void look_for_data_in(const std::filesystem::path& folder) {
  auto& choice = data_root_choice();
  const std::lock_guard lock(choice.mutex);
  choice.folder = folder;
  choice.found.reset();
}

}  // namespace vramplan::cli
