// The run's shared objects: versions, ports, the writer's horizon, the readers' releases.
#include "framework/runtime/run_objects.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>

#include "framework/core/backoff.hpp"
#include "framework/runtime/run_context.hpp"

namespace xf {
namespace {

/// The frame the calling writer thread is handling (no_offset outside a hook): a version is published
/// for frames after it.
thread_local std::uint64_t handling = no_offset;

shared::version_words* new_words() {
  // A page of its own: the device executor pins and maps it for the kernel.
  void* p = ::operator new (4096, std::align_val_t{4096});
  std::memset(p, 0, 4096);
  return static_cast<shared::version_words*>(p);
}
void delete_words(shared::version_words* w) {
  ::operator delete (static_cast<void*>(w), std::align_val_t{4096});
}
static_assert(sizeof(shared::version_words) <= 4096);

std::vector<std::byte> read_init_file(const shared_object_spec& s) {
  std::ifstream in(s.init, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open its init file '" + s.init + "'");
  std::vector<std::byte> bytes;
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  if (s.bytes != 0 && size != s.bytes)
    throw std::runtime_error("its init file '" + s.init + "' holds " + std::to_string(size) +
                             " bytes, not the object's " + std::to_string(s.bytes));
  bytes.resize(size);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    throw std::runtime_error("cannot read its init file '" + s.init + "'");
  return bytes;
}

}  // namespace

class run_objects::port final : public object_port {
 public:
  port(run_objects& owner, std::size_t object, std::size_t op, bool writer)
      : owner_(owner), object_(object), op_(op), writer_(writer) {}

  const std::string& name() const override { return target().name(); }
  std::uint64_t bytes() const override { return target().bytes(); }

  object_version read(std::uint64_t offset) override {
    expect(!writer_, "read");
    const shared::version_table_view v = owner_.host_views_[object_];
    const std::uint64_t waited =
        wait_until([&] { return v.ready(offset); }, owner_.run_.control().abort_flag());
    owner_.reader_wait_ns_[object_].fetch_add(waited, std::memory_order_relaxed);
    const shared::version_table_view::choice c = v.choose(offset, v.horizon());
    v.saw(v.number(c.buffer));
    return {{v.data(c.buffer), v.bytes}, v.number(c.buffer)};
  }

  std::span<std::byte> edit() override {
    expect(writer_, "edit");
    return target().working_copy();
  }

  std::uint64_t publish(std::uint64_t offset) override {
    expect(writer_, "publish");
    if (handling != no_offset && offset <= handling)
      throw std::invalid_argument("shared object '" + name() + "': published at offset " +
                                  std::to_string(offset) + " while handling frame " +
                                  std::to_string(handling) +
                                  " (a writer publishes for frames after the one it handles)");
    return target().publish(offset, [&](std::uint64_t below) { owner_.wait_for_readers(object_, below); });
  }

  void promise(std::uint64_t offset) override {
    expect(writer_, "promise");
    target().promise(offset);
  }

  std::uint64_t horizon() const override { return target().horizon(); }
  std::uint64_t highest_version_seen() const override {
    return load_relaxed(owner_.host_views_[object_].words->seen);
  }

 private:
  shared::versioned_object& target() const { return *owner_.objects_[object_]; }
  void expect(bool ok, const char* what) const {
    if (!ok)
      throw std::logic_error("shared object '" + name() + "': " + what + " by an operator that " +
                             (writer_ ? "writes" : "reads") + " it");
  }

  run_objects& owner_;
  std::size_t object_;
  std::size_t op_;
  bool writer_;
};

run_objects::run_objects(run_context& run) : run_(run) {
  const plan& p = run.plan_of();
  for (std::size_t i = 0; i < p.objects.size(); ++i) {
    const planned_object& po = p.objects[i];
    const shared_object_spec& s = *po.spec;
    try {
      const std::vector<std::byte> initial = s.init.empty() ? std::vector<std::byte>{} : read_init_file(s);
      shared::versioned_object_config c;
      c.name = s.name;
      c.bytes = s.bytes != 0 ? s.bytes : initial.size();
      c.versions = s.versions;
      c.proto = s.protocol;
      c.block_bytes = s.block_bytes;
      c.initial = initial;
      c.written = po.writer.has_value();
      words_.emplace_back(new_words(), delete_words);
      objects_.push_back(std::make_unique<shared::versioned_object>(c, words_.back().get()));
    } catch (const std::exception& e) {
      throw run_error(fault_site{}, "shared object '" + s.name + "': " + e.what());
    }
    host_views_.push_back(objects_.back()->host_view());
  }
  ports_.resize(p.operators.size());
  writes_.assign(p.operators.size(), false);
  workers_left_.reset(new std::atomic<std::uint32_t>[p.operators.size()]);
  reader_wait_ns_.reset(new std::atomic<std::uint64_t>[objects_.size()]);
  for (std::size_t i = 0; i < objects_.size(); ++i) reader_wait_ns_[i].store(0);
  for (std::size_t op = 0; op < p.operators.size(); ++op) {
    const planned_operator& po = p.operators[op];
    workers_left_[op].store(po.workers);
    const std::vector<object_slot_decl>& slots = po.entry->info.objects;
    for (std::size_t j = 0; j < po.objects.size(); ++j) {
      const bool writer = slots[j].access == object_access::write;
      const bool bound = po.objects[j] != no_object;
      writes_[op] = writes_[op] || (writer && bound);
      if (!po.in_kernel)
        ports_[op].push_back(bound ? std::make_unique<port>(*this, po.objects[j], op, writer) : nullptr);
    }
  }
}

run_objects::~run_objects() = default;

bool run_objects::read_in_kernel(std::size_t i) const {
  const plan& p = run_.plan_of();
  for (std::size_t r : p.objects[i].readers)
    if (p.operators[r].in_kernel) return true;
  return false;
}

std::vector<object_port*> run_objects::ports_of(std::size_t op) {
  std::vector<object_port*> out;
  for (const auto& port : ports_[op]) out.push_back(port.get());  // null: an optional slot left unbound
  return out;
}

void run_objects::begin_frame(std::uint64_t offset) {
  handling = offset;
}

void run_objects::finished_frame(std::size_t op, std::uint64_t offset) {
  handling = no_offset;
  for (std::size_t i : run_.plan_of().operators[op].objects)
    if (i != no_object && run_.plan_of().objects[i].writer == op) objects_[i]->finished_frame(offset);
}

void run_objects::writers_started() {
  for (std::size_t i = 0; i < objects_.size(); ++i)
    if (run_.plan_of().objects[i].writer) objects_[i]->promise(1);
}

void run_objects::worker_done(std::size_t op) {
  if (workers_left_[op].fetch_sub(1) != 1) return;
  for (std::size_t i : run_.plan_of().operators[op].objects)
    if (i != no_object && run_.plan_of().objects[i].writer == op) objects_[i]->close();
}

void run_objects::wait_for_readers(std::size_t i, std::uint64_t below) {
  const plan& p = run_.plan_of();
  const auto released = [&] {
    for (std::size_t r : p.objects[i].readers) {
      const planned_operator& reader = p.operators[r];
      const topic_view& v = run_.view(reader.inputs.at(0));
      const std::uint32_t group = reader.input_groups.at(0);
      // Frames past the stream's end are never released (nor read).
      const std::uint64_t end = v.end();
      const std::uint64_t limit = end < below ? end : below;
      // Offset o is published only once o − capacity was released: the window below `limit` is enough.
      for (std::uint64_t o = limit > v.capacity ? limit - v.capacity : 0; o < limit; ++o)
        if (!v.released_or_later(group, o)) return false;
    }
    return true;
  };
  wait_until(released, run_.control().abort_flag());
}

std::vector<object_stats> run_objects::stats() const {
  std::vector<object_stats> out;
  for (std::size_t i = 0; i < objects_.size(); ++i) {
    const shared_object_spec& s = *run_.plan_of().objects[i].spec;
    object_stats o;
    o.name = s.name;
    o.protocol = std::string(shared::name_of(s.protocol));
    o.bytes = objects_[i]->bytes();
    o.publishes = objects_[i]->counters();
    o.reader_wait_ns = reader_wait_ns_[i].load(std::memory_order_relaxed);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace xf
