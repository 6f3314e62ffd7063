// `causeway convert IN -o OUT [--to text|binary] [--compress none|zstd[=LEVEL]]`: between
// the binary and text trace forms.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "base/output_file.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/pipeline_options.h"
#include "cli/terminal_reporter.h"
#include "engine/session/trace_load.h"
#include "trace/binary_format.h"
#include "trace/host_join.h"
#include "trace/text_format.h"

namespace cw::cli {

Command add_convert(CLI::App& app) {
  struct Args {
    std::string in, out, to, format = "auto", compress = "zstd";
    TraceWriterOptions writer;
    int64_t shift_ns = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "convert",
      "convert a trace between the binary and text forms, or perf script output to either");
  cmd->add_option("TRACE", args->in, "input trace (either form, or perf script output)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->out, "output file")->required();
  cmd->add_option("--to", args->to, "output form (default: the other one)")
      ->check(CLI::IsMember({"text", "binary"}));
  add_trace_format_option(cmd, args->format, /*format_alias=*/true);
  add_compress_option(cmd, args->compress, args->writer);
  cmd->add_option("--shift-clock", args->shift_ns,
                  "add NS nanoseconds (negative: take them) to every time in the trace: to put "
                  "it on another host's clock when that offset is known")
      ->type_name("NS");
  cmd->footer(
      "Exit status: 0 done, 1 the input trace was wrong (the message says where), 2 the "
      "output cannot be written.");
  return {cmd, [args] {
            Trace trace;
            TerminalReporter reporter;
            const ReadReport report =
                session::read_trace(args->in, trace, reporter, nullptr, args->format);
            try {
              shift_clock(trace, args->shift_ns);
            } catch (const std::out_of_range&) {
              std::cerr << fmt::format(
                  "causeway: --shift-clock {}: the trace's first times would fall before 0\n",
                  args->shift_ns);
              return kExitBadInput;
            }
            std::string to = args->to;
            // The other form; perf script output becomes the binary form.
            if (to.empty())
              to = session::is_text_trace_file(args->in) || report.perf_script ? "binary" : "text";
            try {
              if (to == "text") {
                // 0600 like the binary form: traces hold other users' data.
                std::string why;
                if (!write_output_file(args->out, write_text_trace(trace), 0600, &why))
                  throw std::runtime_error(why);
              } else {
                write_trace(trace, args->out, args->writer);
              }
            } catch (const std::exception& e) {
              std::cerr << "causeway: " << e.what() << "\n";
              return kExitEnvironment;
            }
            std::cerr << fmt::format("{} events written to {} ({} form)\n", trace.events.size(),
                                     args->out, to);
            return kExitOk;
          }};
}

}  // namespace cw::cli
