// Validation of shared objects and the operators' bindings to them.
#include "framework/model/shared_object_checks.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "framework/model/spec_validation.hpp"
#include "framework/model/suggest.hpp"

namespace xf {
namespace {

/// Where a spec's paths were written (topology_spec::positions), as validation reports them.
class spec_positions {
 public:
  explicit spec_positions(const topology_spec& spec) : spec_(spec) {}

  source_pos at(const std::string& path) const { return spec_.position_of(path); }

  source_pos at_key(const std::string& path) const { return spec_.position_of_key(path); }
  source_pos at_field(const std::string& owner, const std::string& field) const {
    return spec_.position_of_field(owner, field);
  }

  bool written(const std::string& path) const { return spec_.positions.count(path) != 0; }

 private:
  const topology_spec& spec_;
};

std::string object_path(const std::string& name) {
  return "shared_objects." + name;
}

/// The size of the regular file at `path`, or why it cannot be read (the system's words).
struct init_file {
  std::uint64_t bytes = 0;
  std::string problem;
};

init_file size_of_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec) return {0, ec.message()};
  if (fs::is_directory(status)) return {0, std::strerror(EISDIR)};
  // A device or a pipe has no size to check, and reading one could block or never end.
  if (!fs::is_regular_file(status)) return {0, "not a regular file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {0, std::strerror(errno)};
  const std::uintmax_t bytes = fs::file_size(path, ec);
  if (ec) return {0, ec.message()};
  return {bytes, {}};
}

std::string quoted_names(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "'" : ", '") + n + "'";
  return text;
}

/// "class 'scale' takes no shared objects …" or "class 'lookup' has no object slot 'tabel' …".
std::string unknown_slot(const std::string& class_name, const operator_info& info, const std::string& slot) {
  std::vector<std::string> slots;
  for (const object_slot_decl& d : info.objects) slots.push_back(d.name);
  if (slots.empty()) return "class '" + class_name + "' takes no shared objects (leave out shared)";
  const std::string hint = did_you_mean(slot, slots);
  return "class '" + class_name + "' has no object slot '" + slot + "'" +
         (hint.empty() ? " (its slots: " + quoted_names(slots) + ")" : hint);
}

/// Whether a checked object's size is a whole number of its elements (its own problem otherwise).
bool whole_elements(const shared_object_spec& object) {
  return object.bytes != 0 && object.bytes % size_of(object.element) == 0;
}

/// The size, the init file and the versions of one object.
void check_object(const spec_positions& where, shared_object_spec& object,
                  std::vector<diagnostic>& problems) {
  const std::string path = object_path(object.name);
  const std::string context = "shared object '" + object.name + "': ";
  if (std::string why = count_problem("versions", object.versions, object_versions_limits); !why.empty())
    problems.push_back({where.at_field(path, "versions"), context + why});
  // Rolling update protects and moves whole pages: a block of part of one would share its protection.
  if (object.block_bytes == 0 || object.block_bytes % object_block_multiple != 0)
    problems.push_back({where.at_field(path, "block_size"),
                        context + "block_size must be a positive multiple of 4 KiB (4096 bytes), not " +
                            std::to_string(object.block_bytes) + " bytes"});

  // Where the size was given: bytes or count, else the init file (which gives it), else the object's key.
  source_pos size_at = where.written(path + ".bytes")   ? where.at(path + ".bytes")
                       : where.written(path + ".count") ? where.at(path + ".count")
                                                        : where.at_key(path);
  if (!object.init.empty()) {
    const source_pos init_at = where.at_field(path, "init");
    const init_file file = size_of_file(object.init);
    if (!file.problem.empty()) {
      problems.push_back({init_at, context + "cannot read init file '" + object.init + "': " + file.problem});
      return;
    }
    if (object.bytes == 0 && file.bytes == 0) {
      problems.push_back({init_at, context + "init file '" + object.init +
                                       "' is empty: put version 0's bytes in it, or give the object's size "
                                       "with bytes or count"});
      return;
    }
    if (object.bytes != 0 && file.bytes != object.bytes) {
      problems.push_back({init_at, context + "init file '" + object.init + "' holds " +
                                       std::to_string(file.bytes) + " bytes, but the object is " +
                                       std::to_string(object.bytes) + " bytes: give a file of " +
                                       std::to_string(object.bytes) +
                                       " bytes, or leave bytes and count out to take the file's size"});
      return;
    }
    if (object.bytes == 0) size_at = init_at;
    object.bytes = file.bytes;  // the runtime sizes the object from the spec alone
  }
  if (object.bytes == 0) {
    problems.push_back({where.at_key(path), "shared object '" + object.name +
                                                "' has no size: give bytes, count (elements of its element "
                                                "type) or an init file holding version 0"});
    return;
  }
  const std::size_t element_bytes = size_of(object.element);
  if (!whole_elements(object))
    problems.push_back({size_at, context + std::to_string(object.bytes) + " bytes is not a whole number of " +
                                     std::string(name_of(object.element)) + " elements (" +
                                     std::to_string(element_bytes) + " bytes each): give a multiple of " +
                                     std::to_string(element_bytes) + " bytes"});
}

}  // namespace

void check_object_fields(topology_spec& spec, std::vector<diagnostic>& problems) {
  const spec_positions where(spec);
  std::set<std::string, std::less<>> seen;
  for (shared_object_spec& object : spec.objects) {
    const source_pos key = where.at_key(object_path(object.name));
    if (!is_valid_name(object.name))
      problems.push_back({key, "shared object name '" + object.name +
                                   "' is not a valid name (use letters, digits, '_' and '-', starting with a "
                                   "letter or '_')"});
    if (!seen.insert(object.name).second) {
      problems.push_back({key, "duplicate shared object '" + object.name + "'"});
      continue;  // its bindings are checked against the first
    }
    check_object(where, object, problems);
  }
}

void check_object_bindings(const topology_spec& spec, const std::vector<const operator_entry*>& classes,
                           const std::vector<bool>& params_valid, std::vector<diagnostic>& problems) {
  const spec_positions where(spec);
  std::vector<std::string> object_names;
  for (const shared_object_spec& o : spec.objects) object_names.push_back(o.name);
  struct object_use {
    bool maybe_read = false;  // read, or bound where the access is unknown (the class or slot is)
    std::string writer;       // the first operator that writes it
  };
  std::map<std::string, object_use, std::less<>> uses;
  // A binding to an undeclared object meant one of them: any may be read through it.
  bool unresolved = false;

  for (std::size_t o = 0; o < spec.operators.size(); ++o) {
    const operator_spec& op = spec.operators[o];
    const operator_entry* entry = classes[o];
    const std::string path = "operators." + op.name;
    const std::string context = "operator '" + op.name + "': ";
    bool misnamed_slot = false;
    for (const auto& [slot, name] : op.shared) {
      const std::string binding = path + ".shared." + slot;
      // A key that is not a slot of its class says nothing about the object it names.
      const object_slot_decl* decl = entry != nullptr ? entry->info.find_object(slot) : nullptr;
      if (entry != nullptr && decl == nullptr) {
        uses[name].maybe_read = true;
        misnamed_slot = true;
        problems.push_back({where.at_key(binding), context + unknown_slot(op.class_name, entry->info, slot)});
        continue;
      }
      const shared_object_spec* object = spec.find_object(name);
      if (object == nullptr) {
        unresolved = true;
        const std::string hint = did_you_mean(name, object_names);
        problems.push_back(
            {where.at(binding), context + "slot '" + slot + "' names '" + name +
                                    "', which is not a declared shared object" +
                                    (hint.empty() ? " (declare it under shared_objects)" : hint)});
      }
      if (entry == nullptr) {  // an unknown class: reported at its class; the access is unknown
        uses[name].maybe_read = true;
        continue;
      }
      if (object == nullptr) continue;
      const operator_info& info = entry->info;
      object_use& use = uses[name];
      if (decl->access == object_access::write) {
        if (op.on == placement::gpu)
          problems.push_back(
              {where.at(binding), "operator '" + op.name + "' runs on the GPU, but slot '" + slot +
                                      "' writes shared object '" + name +
                                      "': only CPU operators publish versions (place it on cpu)"});
        if (use.writer.empty())
          use.writer = op.name;
        else
          problems.push_back(
              {where.at(binding), "shared object '" + name + "' has a second writer, '" + op.name +
                                      "' (slot '" + slot + "'), besides '" + use.writer +
                                      "': versions have one order, so one operator writes an object"});
      } else {
        use.maybe_read = true;
        if (info.role == operator_role::source)
          problems.push_back({where.at(binding), context + "a source cannot read shared objects (slot '" +
                                                     slot +
                                                     "'): a reader sees the version of its input frame's "
                                                     "offset, and a source has no input"});
      }
      if (!decl->elements.contains(object->element)) {
        problems.push_back({where.at(binding), context + "slot '" + slot + "' takes " +
                                                   names_of(decl->elements) +
                                                   " objects, but shared object '" + name + "' is " +
                                                   std::string(name_of(object->element))});
      } else if (decl->check && params_valid[o] && whole_elements(*object)) {
        // The class's own check of the object against its parameters (its size for the centres it names).
        if (std::string why = decl->check(op.params, object->bytes); !why.empty())
          problems.push_back({where.at(binding), context + "slot '" + slot + "': " + why});
      }
    }
    // A misnamed slot is most likely the one left unbound: its own problem says so.
    if (entry == nullptr || misnamed_slot) continue;
    for (const object_slot_decl& decl : entry->info.objects)
      if (!decl.optional && op.shared.count(decl.name) == 0)
        problems.push_back({where.at_field(path, "shared"),
                            context + "class '" + op.class_name + "' takes a shared object in slot '" +
                                decl.name + "' (" + std::string(name_of(decl.access)) +
                                "), but none is bound: add shared: {" + decl.name + ": <object>}"});
  }

  std::set<std::string, std::less<>> seen;
  for (const shared_object_spec& object : spec.objects) {
    if (!seen.insert(object.name).second) continue;  // a duplicate: reported
    const std::string path = object_path(object.name);
    const object_use& use = uses[object.name];
    if (!use.maybe_read && !unresolved)
      problems.push_back({where.at_key(path), "shared object '" + object.name +
                                                  "' is not read by any operator (bind it to a read slot, or "
                                                  "remove it)"});
    // A reader keeps its frame's version while the writer fills the next one: that takes a second buffer.
    if (!use.writer.empty() && object.versions == 1)
      problems.push_back({where.at_field(path, "versions"),
                          "shared object '" + object.name + "': versions must be at least 2, since '" +
                              use.writer +
                              "' writes it: readers keep their frame's version while the writer "
                              "fills the next"});
  }
}

}  // namespace xf
