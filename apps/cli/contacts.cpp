// `impulse contacts WORLD.xml`: the contacts of the world's initial state as JSON (collision only:
// nothing is stepped, so there are no impulses).
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/world/world_file.hpp"

namespace impulse::cli {

namespace {

// {"object": name, "body": link name or null (static objects)}
json side_json(World& world, Index object, Index body) {
  json j{{"object", world.object_name(object)}, {"body", nullptr}};
  for (const ArticulatedSystem* s : world.systems()) {
    if (s->collision_object() == object && body >= 0 && body < s->model().nb) {
      j["body"] = s->model().body_names[static_cast<std::size_t>(body)];
    }
  }
  return j;
}

int run_contacts(const std::string& path) {
  std::unique_ptr<World> world = load_world(path);
  world->integrate1();  // kinematics, collision (and assembly); the state is not changed
  const ContactSet& cs = world->contacts();
  json list = json::array();
  for (const Contact& c : cs) {
    list.push_back(json{{"a", side_json(*world, c.object_a, c.body_a)},
                        {"b", side_json(*world, c.object_b, c.body_b)},
                        {"position", vector_json(c.position)},
                        {"normal", vector_json(c.normal)},
                        {"depth", c.depth},
                        {"friction", c.mu},
                        {"restitution", c.restitution}});
  }
  json out{{"world", path},
           {"time", world->time()},
           {"margin", world->collision().margin()},
           {"count", cs.size()},
           {"overflow", cs.overflow()},
           {"contacts", list}};
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace

void add_contacts_command(CLI::App& app, Runner& run) {
  auto path = std::make_shared<std::string>();
  auto* c = app.add_subcommand("contacts", "Print the contacts of a world file's initial state as JSON");
  c->add_option("world", *path, "World file (XML, docs/world-format.md)")->required()->check(CLI::ExistingFile);
  c->callback([path, &run]() { run = [path]() { return run_contacts(*path); }; });
}

}  // namespace impulse::cli
