// The text generated from the settings field tables (core/settings_field.hpp): the Python stubs
// of the settings classes (python/impulse/_impulse.pyi) and the settings tables of
// docs/world-format.md. Each block sits in its file between two marker lines,
//   # BEGIN generated: NAME (impulse settings --update)      (.pyi)
//   <!-- BEGIN generated: NAME (impulse settings --update) --> (.md)
// and the matching END line; `impulse settings --update` rewrites them and a test fails while a
// committed block differs from the tables.
#pragma once

#include <string>
#include <vector>

namespace impulse {

struct GeneratedBlock {
  std::string file;  // relative to the source tree
  std::string name;
  std::string text;  // the lines between the markers
};

std::vector<GeneratedBlock> generated_settings_blocks();
// The files that hold generated blocks.
std::vector<std::string> generated_settings_files();
// `text` (the content of `file`) with each of the file's blocks replaced by its generated text.
// Throws Error naming the file and the block whose markers are missing.
std::string update_generated_blocks(const std::string& text, const std::string& file);

}  // namespace impulse
