#include "cli/pipeline_options.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "cli/terminal_reporter.h"

namespace cw::cli {

CLI::Option* add_trace_format_option(CLI::App* cmd, std::string& format, bool format_alias) {
  const auto forms = CLI::IsMember({"auto", "binary", "text", "perf-script"});
  if (format_alias) cmd->add_option("--format", format)->check(forms)->group("");
  return cmd
      ->add_option("--trace-format", format,
                   "the trace's form: auto (by content), binary, text, or perf-script (the output "
                   "of perf script)")
      ->default_val("auto")
      ->check(forms);
}

CLI::Option* add_compress_option(CLI::App* cmd, std::string& text, TraceWriterOptions& writer,
                                 const std::string& default_spec) {
  std::string help =
      "the binary form's chunks: zstd (level 3), zstd=LEVEL (1 fastest .. 22 smallest), or "
      "none (trace format 1.2, which older causeway versions read)";
  if (default_spec != "zstd")
    help += "; default " + default_spec +
            " (zstd's fastest level: compressing is half of the recorder's own CPU time, "
            "and level 1 writes about a tenth more bytes than level 3)";
  // The validator sets `writer`, also when default_val runs it here: commands that share
  // one `writer` would see the last one's default, so a default other than "zstd" is only
  // shown, and applied after parsing (cmd_record.cc, recording_writer).
  return cmd->add_option("--compress", text, help)
      ->default_val("zstd")
      ->default_str(default_spec)
      ->check(CLI::Validator(
          [&writer](std::string& value) {
            std::string why;
            return parse_trace_compression(value, writer, &why) ? std::string() : why;
          },
          "none|zstd[=LEVEL]", "compression"));
}

CLI::Option* add_no_cache_option(CLI::App* cmd, bool& no_cache) {
  return cmd->add_flag("--no-cache", no_cache,
                       "neither use nor write the cache beside the trace of its decoded events "
                       "and built graphs (TRACE.cwcache/, docs/cache.md; also "
                       "CAUSEWAY_CACHE=off)");
}

session::CacheSession::Use cache_use(bool no_cache) {
  session::CacheSession::Use use;
  use.off = no_cache;
  const char* env = std::getenv("CAUSEWAY_CACHE");
  use.wait_for_saves = env && std::string_view(env) == "verbose";
  use.verbose = isatty(STDERR_FILENO) != 0 || use.wait_for_saves || timings_asked();
  return use;
}

session::SessionConfig session_config(const TraceArgs& a, bool unnamed_frames_per_diagnosis) {
  session::SessionConfig c;
  c.trace_path = a.trace;
  c.format = a.format;
  c.packs = a.rules;
  c.no_stdlib = a.no_stdlib;
  c.cache = cache_use(a.no_cache);
  c.unnamed_frames_per_diagnosis = unnamed_frames_per_diagnosis;
  return c;
}

void add_graph_input_options(CLI::App* cmd, std::string& trace, std::vector<std::string>& rules,
                             bool& no_stdlib) {
  cmd->add_option("TRACE", trace,
                  "trace file (binary or text form), or an always-on recorder's ring folder")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--rules", rules, "add rule packs (files or folders), in order")
      ->type_name("PACK")
      ->check(CLI::ExistingPath);
  cmd->add_flag("--no-stdlib", no_stdlib, "do not load stdlib-rules");
}

}  // namespace cw::cli
