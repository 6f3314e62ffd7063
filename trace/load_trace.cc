// Reading a trace file in any of its forms (binary, text, `perf script` output), mapped
// into memory rather than read into a buffer.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/source.h"
#include "trace/binary_format.h"
#include "trace/binary_format_internal.h"
#include "trace/perf_script.h"
#include "trace/text_format.h"

namespace cw {

namespace {

// A read-only mapping of a whole file, unmapped on scope exit.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw TraceFormatError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      throw TraceFormatError(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        throw TraceFormatError(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
      }
      data_ = static_cast<const char*>(p);
      ::madvise(p, size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {data_ ? data_ : "", size_}; }

  // Drops the pages before `offset` from memory (they are re-read from the file if
  // touched again): a 19 M-event trace would otherwise hold the whole ~900 MB file
  // resident beside the trace built from it. Done in steps of 64 MiB.
  void release_before(uint64_t offset) {
    constexpr uint64_t kStep = 64u << 20;
    uint64_t upto = offset & ~(kStep - 1);
    if (!data_ || upto <= released_) return;
    ::madvise(const_cast<char*>(data_) + released_, upto - released_, MADV_DONTNEED);
    released_ = upto;
  }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
  uint64_t released_ = 0;
};

}  // namespace

ReadReport read_trace(const std::string& path, Trace& out) {
  MappedFile file(path);
  return binary_format::read_binary_trace(file.bytes(), out, path,
                                          [&file](uint64_t pos) { file.release_before(pos); });
}

std::optional<TraceInputFormat> parse_trace_input_format(std::string_view name) {
  if (name == "auto") return TraceInputFormat::Auto;
  if (name == "binary") return TraceInputFormat::Binary;
  if (name == "text") return TraceInputFormat::Text;
  if (name == "perf-script") return TraceInputFormat::PerfScript;
  return std::nullopt;
}

ReadReport load_trace(const std::string& path, Trace& out, TraceInputFormat format) {
  MappedFile file(path);
  std::string_view bytes = file.bytes();
  if (format == TraceInputFormat::Auto) {
    const bool binary = bytes.starts_with(std::string_view(binary_format::kFileMagic, 8));
    if (binary)
      format = TraceInputFormat::Binary;
    else if (bytes.starts_with(kTextTraceHeader))
      format = TraceInputFormat::Text;
    // A header line is short; 64 KiB leaves room for perf script --header's comments.
    else if (looks_like_perf_script(bytes.substr(0, 65536)))
      format = TraceInputFormat::PerfScript;
    else
      format = TraceInputFormat::Binary;  // its reader says why it is not a trace
  }
  ReadReport report;
  switch (format) {
    case TraceInputFormat::Auto:
    case TraceInputFormat::Binary:
      return binary_format::read_binary_trace(bytes, out, path,
                                              [&file](uint64_t pos) { file.release_before(pos); });
    case TraceInputFormat::Text:
      out = parse_text_trace(make_source(path, std::string(bytes)));
      break;
    case TraceInputFormat::PerfScript:
      out = parse_perf_script(make_source(path, std::string(bytes)), &report.notes);
      report.perf_script = true;
      break;
  }
  report.major = Trace::kFormatMajor;  // the text form's version
  report.events_read = out.events.size();
  return report;
}

}  // namespace cw
