// Reading input files safely. Every loader (URDF, world files, meshes) reads through here, so a
// path that names a device, a FIFO or a directory, or a file larger than the limit, is rejected
// with one clear error instead of hanging or exhausting memory (`impulse inspect /dev/zero`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace impulse {

// Default size limit of a text description (URDF, world file): 64 MiB.
inline constexpr std::size_t kMaxDescriptionBytes = std::size_t(64) << 20;
// Default size limit of a mesh file: 512 MiB.
inline constexpr std::size_t kMaxMeshBytes = std::size_t(512) << 20;

// The whole content of the regular file `path`. Throws `E` (an impulse::Error subclass
// constructible from a string) with a message starting with "<what> '<path>': " when the path
// does not exist, is not a regular file (directory, device, FIFO, socket), cannot be read, or is
// larger than max_bytes.
std::string read_regular_file_or_throw(const std::string& path, std::size_t max_bytes, const char* what,
                                       void (*raise)(const std::string& message));

template <class E>
std::string read_regular_file(const std::string& path, std::size_t max_bytes, const char* what) {
  return read_regular_file_or_throw(path, max_bytes, what, [](const std::string& m) { throw E(m); });
}

// Opens the regular file `path` read-only and returns its descriptor (the caller closes it) and
// its size in `size`, for readers that map or read a file in pieces. The open does not block (a
// FIFO would wait for a writer) and fstat of the descriptor decides: the same errors as above,
// without a size limit.
int open_regular_file_or_throw(const std::string& path, const char* what, std::uint64_t& size,
                               void (*raise)(const std::string& message));

template <class E>
int open_regular_file(const std::string& path, const char* what, std::uint64_t& size) {
  return open_regular_file_or_throw(path, what, size, [](const std::string& m) { throw E(m); });
}

}  // namespace impulse
