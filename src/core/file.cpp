#include "impulse/core/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace impulse {

std::string read_regular_file_or_throw(const std::string& path, std::size_t max_bytes, const char* what,
                                       void (*raise)(const std::string& message)) {
  const std::string head = std::string(what) + " '" + path + "': ";
  struct stat st {};
  // stat follows symbolic links: a link to a regular file is fine, a link to a device is not.
  // Checked before opening, since opening some devices has effects of its own.
  if (::stat(path.c_str(), &st) != 0) {
    raise(head + (errno == ENOENT ? std::string("file not found") : std::string(std::strerror(errno))));
  }
  if (S_ISDIR(st.st_mode)) raise(head + "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) raise(head + "is not a regular file (device, FIFO or socket)");
  // opened without blocking and checked again on the descriptor, which is what is read (a FIFO
  // swapped in after the stat would block a plain open until a writer comes)
  std::uint64_t size = 0;
  const int fd = open_regular_file_or_throw(path, what, size, raise);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (size > max_bytes) {
    raise(head + "is " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) raise(head + "read error: " + std::strerror(errno));
    if (n == 0) raise(head + "read error: the file shrank while it was read");
    done += static_cast<std::size_t>(n);
  }
  // a file that grew while reading is cut at the size fstat reported (never beyond the limit)
  return bytes;
}

int open_regular_file_or_throw(const std::string& path, const char* what, std::uint64_t& size,
                               void (*raise)(const std::string& message)) {
  const std::string head = std::string(what) + " '" + path + "': ";
  // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; fstat of the
  // descriptor (not of the name, which may change in between) then rejects anything not regular
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    raise(head + (e == ENOENT ? std::string("file not found") : std::string(std::strerror(e))));
  }
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    problem = "is a directory, not a file";
  } else if (!S_ISREG(st.st_mode)) {
    problem = "is not a regular file (device, FIFO or socket)";
  }
  if (!problem.empty()) {
    ::close(fd);
    raise(head + problem);
  }
  size = static_cast<std::uint64_t>(st.st_size);
  return fd;
}

}  // namespace impulse
