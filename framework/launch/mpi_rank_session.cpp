// The ranked run's session over MPI (mpi_rank_session.hpp): the bridges' links and the control plane, on
// one thread.
#include "framework/launch/mpi_rank_session.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "framework/core/backoff.hpp"
#include "framework/core/errors.hpp"
#include "framework/core/timer_slack.hpp"
#include "framework/mpi/mpi_error.hpp"
#include "framework/mpi/topic_link.hpp"
#include "framework/plan/plan.hpp"

namespace xf {
namespace {

using mpi::call_site;
using session_clock = std::chrono::steady_clock;

/// Control messages: a kind byte, then text (a failure's words) or a rank's progress (its bytes).
enum class control_kind : char { failure = 'F', drain = 'D', progress = 'P' };
constexpr int control_tag = 1;
constexpr std::size_t control_bytes = 4096;

/// One bridge end of this rank: its route's communicator and, while the run's topics exist, its link.
struct bridge_end {
  bridge_route route;
  std::string topic;
  MPI_Comm comm = MPI_COMM_NULL;
  bool sends = false;
  std::uint32_t peer = 0;
  std::size_t local_topic = 0;  ///< index into the plan's topics
  std::uint32_t group = 0;      ///< sending end: the bridge's subscriber group
  std::unique_ptr<mpi::topic_link_sender> sender;
  std::unique_ptr<mpi::topic_link_receiver> receiver;
  bool done = false;
  bool failed = false;          ///< its step threw: the run fails, the link is stepped no more
  mpi::link_counters counters;  ///< kept when the link goes
};

class mpi_session final : public rank_session {
 public:
  mpi_session(MPI_Comm world, const topology_spec& spec, const plan& p, run_control& control)
      : control_(control), timer_slack_ns_(std::uint64_t{spec.runtime.timer_slack_us} * 1000) {
    MPI_Comm_rank(world, &rank_);
    MPI_Comm_size(world, &ranks_);
    progress_of_.resize(static_cast<std::size_t>(ranks_));
    XF_MPI_TRY(MPI_Comm_dup(world, &control_comm_), site());
    // Every rank makes every route's communicator, in the same order (MPI_Comm_dup is collective), and
    // keeps those it is an end of.
    for (const bridge_route& route : bridge_routes(spec)) {
      MPI_Comm comm = MPI_COMM_NULL;
      XF_MPI_TRY(MPI_Comm_dup(world, &comm), site());
      all_comms_.push_back(comm);
      const bool sends = route.from == static_cast<std::uint32_t>(rank_);
      if (!sends && route.to != static_cast<std::uint32_t>(rank_)) continue;
      bridge_end& end = ends_.emplace_back();
      end.route = route;
      end.topic = spec.topics[route.topic].name;
      end.comm = comm;
      end.sends = sends;
      end.peer = sends ? route.to : route.from;
      const topic_spec* wanted = &spec.topics[route.topic];
      const auto t = std::find_if(p.topics.begin(), p.topics.end(),
                                  [&](const planned_topic& pt) { return pt.spec == wanted; });
      XF_EXPECTS(t != p.topics.end(), "the plan has topic '" + end.topic + "' of its bridge");
      end.local_topic = static_cast<std::size_t>(t - p.topics.begin());
      if (sends) {
        const auto k = std::find(t->bridge_to.begin(), t->bridge_to.end(), route.to);
        XF_EXPECTS(k != t->bridge_to.end(), "the plan bridges topic '" + end.topic + "' to its reader");
        end.group = t->bridge_group(static_cast<std::size_t>(k - t->bridge_to.begin()));
      }
    }
    live_ = std::make_unique<live_bridge[]>(ends_.size());
    thread_ = std::thread([this] { loop(); });
  }

  ~mpi_session() override {
    if (thread_.joinable()) finish();
    for (MPI_Comm& comm : all_comms_) MPI_Comm_free(&comm);
    MPI_Comm_free(&control_comm_);
  }
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;

  void attach(const std::vector<topic_view>& views, run_control&) override {
    std::unique_lock lock(mutex_);
    views_ = views;
    attach_requested_ = true;
  }

  bool detach() override {
    std::unique_lock lock(mutex_);
    if (!attach_requested_) return false;
    detach_requested_ = true;
    changed_.wait(lock, [&] { return links_released_; });
    return abandoned_;
  }

  std::vector<bridge_stats> stats() const override {
    std::unique_lock lock(mutex_);
    std::vector<bridge_stats> all;
    for (const bridge_end& e : ends_) {
      bridge_stats b;
      b.topic = e.topic;
      b.peer = e.peer;
      b.sends = e.sends;
      b.frames = e.counters.frames;
      b.bytes = e.counters.bytes;
      if (e.counters.first_ns != 0 && e.counters.end_ns > e.counters.first_ns)
        b.seconds = static_cast<double>(e.counters.end_ns - e.counters.first_ns) / 1e9;
      b.credit_wait_ns = e.counters.credit_wait_ns;
      b.first_ns = e.counters.first_ns;
      b.credit_messages = e.counters.credit_messages;
      all.push_back(b);
    }
    return all;
  }

  std::vector<bridge_stats> live_stats() const override {
    std::vector<bridge_stats> all;
    for (std::size_t i = 0; i < ends_.size(); ++i) {
      bridge_stats b;
      b.topic = ends_[i].topic;
      b.peer = ends_[i].peer;
      b.sends = ends_[i].sends;
      b.frames = live_[i].frames.load(std::memory_order_relaxed);
      b.bytes = live_[i].bytes.load(std::memory_order_relaxed);
      all.push_back(b);
    }
    return all;
  }

  void finish() override {
    {
      std::unique_lock lock(mutex_);
      finish_requested_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

  bool failure_was_told() const override { return failure_told_.load(); }

  void report_progress(const run_progress& own) override {
    if (rank_ == 0) return;
    std::unique_lock lock(mutex_);
    progress_to_send_ = own;
  }

  run_progress merged_progress(const run_progress& own) const override {
    run_progress all = own;
    std::unique_lock lock(mutex_);
    for (const run_progress& p : progress_of_) {
      all.sink_frames += p.sink_frames;
      all.sink_bytes += p.sink_bytes;
    }
    return all;
  }

 private:
  call_site site() const { return call_site{rank_}; }

  void loop() {
    // The run's threads sleep with the topology's timer slack; this one starts before the run sets it.
    const scoped_timer_slack slack(timer_slack_ns_);
    try {
      post_control_receive();
      backoff idle;
      bool quiescing = false;
      MPI_Request barrier = MPI_REQUEST_NULL;
      for (;;) {
        bool attach = false, detach = false, finish = false;
        {
          std::unique_lock lock(mutex_);
          attach = attach_requested_;
          detach = detach_requested_;
          finish = finish_requested_;
        }
        bool progressed = false;
        if (attach && !links_made_) make_links();
        if (links_made_ && !links_released_) progressed |= step_links();
        if (detach && links_made_ && !links_released_ &&
            (control_.aborting() ||
             std::all_of(ends_.begin(), ends_.end(), [](const bridge_end& e) { return e.done; })))
          release_links();
        progressed |= poll_control();
        tell_others();
        progressed |= complete_sends();
        watch_deadline(finish);
        if (finish && !quiescing && sends_.empty()) {
          // Every failure or drain this rank had to tell was matched: enter the barrier, and listen until
          // every rank has.
          XF_MPI_TRY(MPI_Ibarrier(control_comm_, &barrier), site());
          quiescing = true;
        }
        if (quiescing) {
          int done = 0;
          XF_MPI_TRY(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), site());
          if (done) break;
        }
        if (progressed)
          idle = backoff{};
        else
          idle.pause();
      }
      MPI_Cancel(&control_request_);
      MPI_Wait(&control_request_, MPI_STATUS_IGNORE);
    } catch (const std::exception& e) {
      // The control plane itself failed: no rank can be told, and none can wait for this one.
      std::fprintf(stderr,
                   "xeflow: error: rank %d: the ranks' control messages failed: %s; ending every rank\n",
                   rank_, e.what());
      std::fflush(nullptr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }

  void make_links() {
    std::vector<topic_view> views;
    {
      std::unique_lock lock(mutex_);
      views = views_;
    }
    for (bridge_end& e : ends_) {
      const topic_view& view = views.at(e.local_topic);
      if (e.sends)
        e.sender = std::make_unique<mpi::topic_link_sender>(view, e.group, e.comm, static_cast<int>(e.peer));
      else
        e.receiver =
            std::make_unique<mpi::topic_link_receiver>(view, e.topic, e.comm, static_cast<int>(e.peer));
    }
    links_made_ = true;
  }

  /// Steps every link not done; true when one moved (its counters changed) or finished.
  bool step_links() {
    bool progressed = false;
    for (bridge_end& e : ends_) {
      if (e.done || e.failed) continue;
      try {
        const mpi::link_counters before = e.sends ? e.sender->counters() : e.receiver->counters();
        e.done = e.sends ? e.sender->step() : e.receiver->step();
        const mpi::link_counters& after = e.sends ? e.sender->counters() : e.receiver->counters();
        progressed |=
            e.done || after.frames != before.frames || after.credit_messages != before.credit_messages;
        if (after.frames != before.frames) {
          live_bridge& live = live_[static_cast<std::size_t>(&e - ends_.data())];
          live.frames.store(after.frames, std::memory_order_relaxed);
          live.bytes.store(after.bytes, std::memory_order_relaxed);
        }
      } catch (const std::exception& ex) {
        control_.fail(run_error(fault_site{{}, e.topic, {}},
                                std::string("the bridge ") + (e.sends ? "to" : "from") + " rank " +
                                    std::to_string(e.peer) + " failed: " + ex.what()));
        e.failed = true;
      }
    }
    return progressed;
  }

  void release_links() {
    std::unique_lock lock(mutex_);
    release_links_locked();
  }

  /// Keeps each link's counters and destroys it. A link not done cancels what it has in flight; a send
  /// (or a receive already under way) may still complete later, so its topic must outlive the run.
  void release_links_locked() {
    for (bridge_end& e : ends_) {
      if (!e.done && (e.sender || e.receiver)) abandoned_ = true;
      if (e.sender) e.counters = e.sender->counters();
      if (e.receiver) e.counters = e.receiver->counters();
      e.sender.reset();
      e.receiver.reset();
    }
    links_released_ = true;
    changed_.notify_all();
  }

  void post_control_receive() {
    XF_MPI_TRY(MPI_Irecv(incoming_.data(), static_cast<int>(incoming_.size()), MPI_CHAR, MPI_ANY_SOURCE,
                         control_tag, control_comm_, &control_request_),
               site());
  }

  /// Takes the control messages that arrived; true when one did.
  bool poll_control() {
    bool any = false;
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      XF_MPI_TRY(MPI_Test(&control_request_, &arrived, &status), site());
      if (!arrived) return any;
      any = true;
      int length = 0;
      MPI_Get_count(&status, MPI_CHAR, &length);
      const std::string text(incoming_.data() + 1, static_cast<std::size_t>(std::max(0, length - 1)));
      const auto kind = static_cast<control_kind>(incoming_[0]);
      if (kind == control_kind::failure) {
        if (!control_.failure()) {
          failure_told_ = true;
          failure_announced_ = true;  // its origin told every rank
          control_.fail(
              run_error(fault_site{}, "rank " + std::to_string(status.MPI_SOURCE) + " failed: " + text));
        }
      } else if (kind == control_kind::drain) {
        drain_announced_ = true;
        control_.request_drain();
      } else if (kind == control_kind::progress && text.size() == sizeof(run_progress)) {
        std::unique_lock lock(mutex_);
        std::memcpy(&progress_of_[static_cast<std::size_t>(status.MPI_SOURCE)], text.data(),
                    sizeof(run_progress));
      }
      post_control_receive();
    }
  }

  /// Tells every other rank of this rank's failure or interrupt, once.
  void tell_others() {
    if (!failure_announced_) {
      if (const std::optional<run_error> failure = control_.failure()) {
        failure_announced_ = true;
        std::string text = failure->what();
        if (text.size() > control_bytes - 1) text.resize(control_bytes - 1);
        send_to_all(control_kind::failure, text);
      }
    }
    if (!drain_announced_ && control_.draining()) {
      drain_announced_ = true;
      send_to_all(control_kind::drain, "");
    }
    std::optional<run_progress> progress;
    {
      std::unique_lock lock(mutex_);
      progress.swap(progress_to_send_);
    }
    if (progress) {
      outgoing& o = sends_.emplace_back();
      o.bytes = std::string(1, static_cast<char>(control_kind::progress)) +
                std::string(reinterpret_cast<const char*>(&*progress), sizeof(run_progress));
      XF_MPI_TRY(MPI_Issend(o.bytes.data(), static_cast<int>(o.bytes.size()), MPI_CHAR, 0, control_tag,
                            control_comm_, &o.request),
                 (call_site{rank_, 0, control_tag}));
    }
  }

  void send_to_all(control_kind kind, const std::string& text) {
    for (int r = 0; r < ranks_; ++r) {
      if (r == rank_) continue;
      outgoing& o = sends_.emplace_back();
      o.bytes = std::string(1, static_cast<char>(kind)) + text;
      XF_MPI_TRY(MPI_Issend(o.bytes.data(), static_cast<int>(o.bytes.size()), MPI_CHAR, r, control_tag,
                            control_comm_, &o.request),
                 (call_site{rank_, r, control_tag}));
    }
  }

  bool complete_sends() {
    bool any = false;
    while (!sends_.empty()) {
      int done = 0;
      XF_MPI_TRY(MPI_Test(&sends_.front().request, &done, MPI_STATUS_IGNORE), site());
      if (!done) break;
      sends_.pop_front();
      any = true;
    }
    return any;
  }

  /// Once a failure is known, every rank has failure_deadline_ms to stop: this rank's run to return, then
  /// every rank to reach the session's end. Past it the job ends.
  void watch_deadline(bool run_returned) {
    if (!control_.failure() && !control_.aborting()) return;
    const auto now = session_clock::now();
    if (!stop_deadline_) stop_deadline_ = now + std::chrono::milliseconds(failure_deadline_ms);
    if (now < *stop_deadline_) return;
    const std::optional<run_error> failure = control_.failure();
    const std::string why =
        "xeflow: error: rank " + std::to_string(rank_) + ": " +
        (run_returned ? std::string("another rank") : std::string("this rank's run")) +
        " did not stop within " + std::to_string(failure_deadline_ms) + " ms of the failure" +
        (failure ? std::string(" (") + failure->what() + ")" : "") + "; ending every rank";
    std::fprintf(stderr, "%s\n", why.c_str());
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  struct outgoing {
    std::string bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  run_control& control_;
  std::uint64_t timer_slack_ns_;
  int rank_ = 0, ranks_ = 1;
  MPI_Comm control_comm_ = MPI_COMM_NULL;
  std::vector<MPI_Comm> all_comms_;
  std::vector<bridge_end> ends_;
  /// Each end's frames and bytes so far, for live metrics: the session thread stores them after a step that
  /// moved frames, any thread reads them (live_stats).
  struct live_bridge {
    std::atomic<std::uint64_t> frames{0}, bytes{0};
  };
  std::unique_ptr<live_bridge[]> live_;
  std::array<char, control_bytes> incoming_{};
  MPI_Request control_request_ = MPI_REQUEST_NULL;
  std::deque<outgoing> sends_;
  bool failure_announced_ = false, drain_announced_ = false;
  std::atomic<bool> failure_told_{false};
  std::optional<session_clock::time_point> stop_deadline_;
  bool links_made_ = false;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<topic_view> views_;
  std::optional<run_progress> progress_to_send_;  ///< ranks other than 0: the latest, not yet sent
  std::vector<run_progress> progress_of_;         ///< rank 0: the latest of each rank
  bool attach_requested_ = false, detach_requested_ = false, finish_requested_ = false;
  bool links_released_ = false;
  bool abandoned_ = false;  ///< a link was released before it was done
  std::thread thread_;
};

}  // namespace

std::unique_ptr<rank_session> start_mpi_rank_session(MPI_Comm world, const topology_spec& spec, const plan& p,
                                                     run_control& control) {
  return std::make_unique<mpi_session>(world, spec, p, control);
}

}  // namespace xf
