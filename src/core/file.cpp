#include "impulse/core/file.hpp"

#include <sys/stat.h>

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

}  // namespace impulse
