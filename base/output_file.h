// Opening a file to write output as a tool run as root must: a symlink at the
// path is refused, never followed (root writing `causeway.cwt` in a shared folder would
// otherwise truncate whatever file it points to), and so are a file with other hard links
// and anything not a regular file (a FIFO would block, a device would be written). The
// file is truncated only after those checks, and gets `mode` whether it existed or not.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace cw {

// An open descriptor (close-on-exec) on `path`, empty and ready to write; -1 with `why`
// ("PATH: refusing to write through a symbolic link", "PATH: cannot create: ...") if not.
int open_output_file(const std::string& path, mode_t mode, std::string* why);

// Writes `data` to `path` as open_output_file opens it; false with `why` if it cannot.
bool write_output_file(const std::string& path, std::string_view data, mode_t mode,
                       std::string* why);

}  // namespace cw
