#include "impulse/core/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace impulse {

std::string read_regular_file_or_throw(const std::string& path, std::size_t max_bytes, const char* what,
                                       void (*raise)(const std::string& message)) {
  const std::string head = std::string(what) + " '" + path + "': ";
  struct stat st {};
  // stat follows symbolic links: a link to a regular file is fine, a link to a device is not
  if (::stat(path.c_str(), &st) != 0) {
    raise(head + (errno == ENOENT ? std::string("file not found") : std::string(std::strerror(errno))));
  }
  if (S_ISDIR(st.st_mode)) raise(head + "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) raise(head + "is not a regular file (device, FIFO or socket)");
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    raise(head + "is " + std::to_string(st.st_size) + " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) raise(head + "cannot open the file for reading");
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(st.st_size));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.gcount() != static_cast<std::streamsize>(bytes.size())) raise(head + "read error");
  // a file that grew while reading is cut at the size stat reported (never beyond the limit)
  return bytes;
}

int open_regular_file_or_throw(const std::string& path, const char* what, std::uint64_t& size,
                               void (*raise)(const std::string& message)) {
  const std::string head = std::string(what) + " '" + path + "': ";
  // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; fstat of the
  // descriptor (not of the name, which may change in between) then rejects anything not regular
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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
