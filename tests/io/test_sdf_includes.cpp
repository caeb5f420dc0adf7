// SDF <include>: the files libsdformat opens for an include are resolved against the file that
// names them (never the working directory) and checked first: regular files (never a FIFO or a
// device), within the description size limit, nested to a bounded depth.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/io/sdf.hpp"
#include "support/temp_dir.hpp"

using namespace impulse;
using impulse_test::TempDir;
namespace fs = std::filesystem;

namespace {

std::string model_sdf(const std::string& name, const std::string& inside = "") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><model name=")" + name +
         R"("><link name="l"><inertial><mass>1</mass></inertial></link>)" + inside + "</model></sdf>";
}

std::string world_including(const std::string& uri) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w"><include><uri>)" + uri +
         "</uri></include></world></sdf>";
}

std::string includes_error_of(const std::string& path) {
  try {
    load_sdf(path);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("SDF includes: a relative URI resolves against the including file, not the working directory",
          "[io][sdf][sdf_includes]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  TempDir tmp;
  tmp.write("world/parts/box.sdf", model_sdf("box_beside_the_world"));
  tmp.write("cwd/parts/box.sdf", model_sdf("box_in_the_working_directory"));
  const std::string world = tmp.write("world/w.sdf", world_including("parts/box.sdf"));
  const fs::path cwd = fs::current_path();
  fs::current_path(tmp.path / "cwd");
  std::string name, what;
  try {
    const SdfWorld w = load_sdf(world);
    if (w.models.size() == 1) name = w.models[0].name;
  } catch (const ModelError& e) {
    what = e.what();
  }
  fs::current_path(cwd);
  INFO(what);
  CHECK(name == "box_beside_the_world");
  // the loaded file's relative mesh URIs resolve against its folder too (libsdformat parses the
  // bytes read, not the path)
  tmp.write("world/meshes/tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const std::string with_mesh = tmp.write(
      "world/mesh.sdf", R"(<?xml version="1.0"?><sdf version="1.9"><model name="m"><link name="l">)"
                        R"(<collision name="c"><geometry><mesh><uri>meshes/tri.obj</uri></mesh></geometry></collision>)"
                        "</link></model></sdf>");
  fs::current_path(tmp.path / "cwd");
  std::string mesh_path;
  try {
    const SdfWorld w = load_sdf(with_mesh);
    if (w.models.size() == 1 && w.models[0].model.collision.size() == 1) {
      mesh_path = w.models[0].model.collision[0].mesh_path;
    }
  } catch (const ModelError& e) {
    mesh_path = e.what();
  }
  fs::current_path(cwd);
  CHECK(mesh_path == (tmp.path / "world/meshes/tri.obj").string());
  // a folder with a model.config, found through model:// next to the file
  tmp.write("world/crate/model.config", "<?xml version=\"1.0\"?><model><name>crate</name><sdf version=\"1.9\">"
                                        "model.sdf</sdf></model>");
  tmp.write("world/crate/model.sdf", model_sdf("crate"));
  const SdfWorld w2 = load_sdf(tmp.write("world/w2.sdf", world_including("model://crate")));
  REQUIRE(w2.models.size() == 1);
  CHECK(w2.models[0].name == "crate");
}

TEST_CASE("SDF includes: a FIFO, a device, a missing file, a relative URI inside an included file and a cycle are "
          "one-line errors",
          "[io][sdf][sdf_includes]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  TempDir tmp;
  REQUIRE(::mkfifo((tmp.path / "pipe.sdf").c_str(), 0600) == 0);  // would block libsdformat's open
  tmp.write("nested/inner.sdf", model_sdf("inner"));
  tmp.write("nested/outer.sdf", model_sdf("outer", "<include><uri>inner.sdf</uri></include>"));
  tmp.write("loop/model.config", "<?xml version=\"1.0\"?><model><name>loop</name><sdf version=\"1.9\">m.sdf</sdf>"
                                 "</model>");
  tmp.write("loop/m.sdf", model_sdf("loop", "<include><uri>model://loop</uri></include>"));
  struct Case {
    std::string uri, named, expected;  // the include of the world, the one the error names
  };
  const Case cases[] = {
      {"pipe.sdf", "<include> 'pipe.sdf' (line 1)", "is not a regular file"},
      {"/dev/zero", "<include> '/dev/zero' (line 1)", "is not a regular file"},
      {"missing.sdf", "<include> 'missing.sdf' (line 1)", "file not found"},
      {"model://nothing_here", "<include> 'model://nothing_here' (line 1)", "not found; looked in"},
      {"nested/outer.sdf", "in included file '" + (tmp.path / "nested/outer.sdf").string() + "': <include> 'inner.sdf'",
       "a relative URI in an included file is not supported"},
      {"model://loop", "<include> 'model://loop'", "nested more than 16 deep"},
  };
  for (const Case& c : cases) {
    const std::string world = tmp.write("w.sdf", world_including(c.uri));
    const std::string what = includes_error_of(world);
    INFO(what);
    CHECK_THAT(what, Catch::StartsWith(world + ": ") && Catch::Contains(c.named) && Catch::Contains(c.expected));
    CHECK(what.find('\n') == std::string::npos);
  }
}
