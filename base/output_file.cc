#include "base/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cw {

int open_output_file(const std::string& path, mode_t mode, std::string* why) {
  // O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader before the
  // check below could refuse it. No O_TRUNC: nothing is cut before the checks.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == ELOOP)
      *why = path + ": refusing to write through a symbolic link (remove it, or write elsewhere)";
    else if (errno == ENXIO)
      *why = path + ": not a regular file (a FIFO or socket): refusing to write to it";
    else
      *why = path + ": cannot create: " + std::strerror(errno);
    return -1;
  }
  auto refuse = [&](const std::string& message) {
    ::close(fd);
    *why = path + ": " + message;
    return -1;
  };
  struct stat info {};
  if (::fstat(fd, &info) != 0) return refuse(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return refuse("not a regular file: refusing to write to it");
  if (info.st_nlink > 1)
    return refuse("has other hard links: refusing to overwrite a file that also lives elsewhere");
  // Back to blocking writes, then empty it and give it `mode` (an existing file keeps its
  // own through open).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || ::ftruncate(fd, 0) != 0 ||
      ::fchmod(fd, mode) != 0)
    return refuse(std::string("cannot prepare for writing: ") + std::strerror(errno));
  return fd;
}

bool write_output_file(const std::string& path, std::string_view data, mode_t mode,
                       std::string* why) {
  const int fd = open_output_file(path, mode, why);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *why = path + ": cannot write: " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    *why = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace cw
