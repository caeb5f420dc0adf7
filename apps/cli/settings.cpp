// `impulse settings [--update] [--root DIR]`: the text generated from the settings field tables
// (core/settings_field.hpp): the Python stubs of the settings classes and the tables of
// docs/world-format.md. Without --update it prints every block; with --update it rewrites the
// blocks in the files of the source tree DIR (default: the current directory).
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "impulse/core/error.hpp"
#include "impulse/world/settings_docs.hpp"

namespace impulse::cli {

namespace {

struct SettingsOptions {
  bool update = false;
  std::string root = ".";
};

int run_settings(const SettingsOptions& o) {
  if (!o.update) {
    for (const GeneratedBlock& b : generated_settings_blocks()) {
      std::cout << "--- " << b.file << ": " << b.name << "\n" << b.text << "\n";
    }
    return 0;
  }
  for (const std::string& file : generated_settings_files()) {
    const std::string path = o.root + "/" + file;
    std::ifstream in(path);
    if (!in) throw Error("cannot read '" + path + "' (run from the source tree or give --root)");
    std::stringstream text;
    text << in.rdbuf();
    const std::string updated = update_generated_blocks(text.str(), file);
    if (updated == text.str()) continue;
    std::ofstream out(path);
    out << updated;
    if (!out) throw Error("cannot write '" + path + "'");
    std::cout << "updated " << path << "\n";
  }
  return 0;
}

}  // namespace

void add_settings_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<SettingsOptions>();
  auto* c = app.add_subcommand("settings",
                               "Print the Python stubs and docs tables generated from the settings field tables");
  c->add_flag("--update", o->update, "Rewrite the generated blocks of python/impulse/_impulse.pyi and docs/world-format.md");
  c->add_option("--root", o->root, "Source tree (default: the current directory)");
  c->callback([o, &run]() { run = [o]() { return run_settings(*o); }; });
}

}  // namespace impulse::cli
