// Version of the library (the project version of CMakeLists.txt) and where its data lives.
#pragma once

#include <string>

namespace impulse {

// "0.1.0"
const char* version_string();

// The directory of the robot models and world files shipped with Impulse (models/ in the source
// tree, share/impulse/models when installed). Searched in this order:
//   1. the environment variable IMPULSE_MODELS_DIR (if set, it must exist),
//   2. <prefix>/share/impulse/models, with <prefix> the parent of the directory holding the
//      running executable (bin/) or the Impulse shared library (lib/),
//   3. the source tree the library was built from (a build tree used in place).
// Throws Error listing the places tried when none exists.
std::string models_dir();

// models_dir() + "/" + relative, e.g. find_model("anymal/anymal.urdf"); an absolute path is
// returned unchanged. Throws Error naming the path when the file does not exist.
std::string find_model(const std::string& relative);

}  // namespace impulse
