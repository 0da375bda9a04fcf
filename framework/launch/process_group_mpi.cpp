// The MPI job's group: MPI_Init_thread at MPI_THREAD_SERIALIZED (the launcher's thread, then a run's
// session thread, never both at once), the world communicator duplicated with errors returned rather
// than fatal, the node's ranks from a shared-memory split, and the collectives the launcher agrees with.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "framework/core/errors.hpp"
#include "framework/launch/mpi_rank_session.hpp"
#include "framework/launch/process_group.hpp"
#include "framework/mpi/mpi_error.hpp"

namespace xf {
namespace {

using mpi::call_site;

class mpi_group final : public process_group {
 public:
  mpi_group(int& argc, char**& argv) {
    int provided = MPI_THREAD_SINGLE;
    XF_MPI_TRY(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided), call_site{});
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      throw config_error(source_pos{}, "the MPI library gives thread support level " +
                                           std::to_string(provided) +
                                           "; a ranked run needs MPI_THREAD_SERIALIZED (" +
                                           std::to_string(MPI_THREAD_SERIALIZED) + ") or more");
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &world_);
    MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN);
    int rank = 0, size = 1, node_rank = 0;
    MPI_Comm_rank(world_, &rank);
    MPI_Comm_size(world_, &size);
    XF_MPI_TRY(MPI_Comm_split_type(world_, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_),
               call_site{rank});
    MPI_Comm_rank(node_, &node_rank);
    MPI_Comm_size(node_, &node_size_);
    rank_ = static_cast<std::uint32_t>(rank);
    size_ = static_cast<std::uint32_t>(size);
    node_rank_ = static_cast<std::uint32_t>(node_rank);
  }
  ~mpi_group() override {
    MPI_Comm_free(&node_);
    MPI_Comm_free(&world_);
    MPI_Finalize();
  }
  mpi_group(const mpi_group&) = delete;
  mpi_group& operator=(const mpi_group&) = delete;

  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return size_; }
  std::uint32_t node_rank() const override { return node_rank_; }

  std::optional<std::uint32_t> first_failing(bool ok) override {
    int mine = ok ? static_cast<int>(size_) : static_cast<int>(rank_), lowest = 0;
    XF_MPI_TRY(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, world_), site());
    if (lowest == static_cast<int>(size_)) return std::nullopt;
    return static_cast<std::uint32_t>(lowest);
  }

  int max_over_ranks(int value) override {
    int largest = value;
    XF_MPI_TRY(MPI_Allreduce(&value, &largest, 1, MPI_INT, MPI_MAX, world_), site());
    return largest;
  }

  std::vector<std::string> gather(const std::string& text) override {
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(rank_ == 0 ? size_ : 0), displacements(lengths.size());
    XF_MPI_TRY(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world_), site());
    std::string all;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      displacements[r] = static_cast<int>(all.size());
      all.resize(all.size() + static_cast<std::size_t>(lengths[r]));
    }
    XF_MPI_TRY(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(),
                           MPI_CHAR, 0, world_),
               site());
    std::vector<std::string> texts;
    for (std::size_t r = 0; r < lengths.size(); ++r)
      texts.push_back(
          all.substr(static_cast<std::size_t>(displacements[r]), static_cast<std::size_t>(lengths[r])));
    return texts;
  }

  std::vector<std::uint32_t> node_values(std::uint32_t value) override {
    std::vector<std::uint32_t> values(static_cast<std::size_t>(node_size_));
    XF_MPI_TRY(MPI_Allgather(&value, 1, MPI_UINT32_T, values.data(), 1, MPI_UINT32_T, node_), site());
    return values;
  }

  std::unique_ptr<rank_session> start_session(const topology_spec& spec, const plan& p,
                                              run_control& control) override {
    return start_mpi_rank_session(world_, spec, p, control);
  }

  [[noreturn]] void end_job(int code, const std::string& why) override {
    std::fprintf(stderr, "%s\n", why.c_str());
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; should a library's return, end this rank anyway
  }

 private:
  call_site site() const { return call_site{static_cast<int>(rank_)}; }

  MPI_Comm world_ = MPI_COMM_NULL;
  MPI_Comm node_ = MPI_COMM_NULL;  ///< this node's ranks
  int node_size_ = 1;
  std::uint32_t rank_ = 0, size_ = 1, node_rank_ = 0;
};

}  // namespace

std::unique_ptr<process_group> join_mpi_job(int& argc, char**& argv, std::uint32_t) {
  return std::make_unique<mpi_group>(argc, argv);
}

bool built_with_mpi() noexcept {
  return true;
}

}  // namespace xf
