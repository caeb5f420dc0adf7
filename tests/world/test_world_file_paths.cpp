// World files name other files (a robot's URDF): a path that is not a regular file is a one-line
// error naming the line and the path, and nothing opens it (a FIFO would block the open).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/world/world_file.hpp"

using namespace impulse;

TEST_CASE("world file: a robot whose URDF is a FIFO or a device is an error, not a hang", "[world][world_file]") {
  const std::string fifo = "/tmp/impulse_world_file_paths_" + std::to_string(::getpid()) + ".urdf";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    std::string what;
    try {
      parse_world_string("<world>\n<robot name=\"r\" urdf=\"" + path + "\"/>\n</world>\n", "w.xml");
    } catch (const Error& e) {
      what = e.what();
    }
    INFO(what);
    CHECK_THAT(what, Catch::Contains("w.xml:2") && Catch::Contains("not a regular file: URDF '" + path + "'"));
  }
  std::remove(fifo.c_str());
}
