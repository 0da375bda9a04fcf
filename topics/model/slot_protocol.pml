/* The topic's slot protocol (publish / subscribe / release / close) as a Promela model for SPIN, so that
 * what the code's comments argue about ordering is checked over every interleaving and every reordering
 * of plain stores. tools/check_slot_model.sh generates, compiles and runs it for each configuration.
 *
 * What it models (keep it in step with the code):
 *   topics/topic_view.hpp   claim_offset, slot_of, slot_free, reclaim, alloc_frame, free_frame,
 *                           prepare_slot / prepare_void, commit / commit_relaxed, close, take, published,
 *                           poll, release / release_relaxed, end
 *   topics/topic_driver.cpp reserve_claimed, reserve_at, wait_and_reclaim, publish_frame, publish_void,
 *                           next_frame (the CPU side's blocking steps)
 *   framework/runtime/cpu_workers.cpp   source_worker (a CPU source: claim, fill, publish, a void at the
 *                           end, close), map_worker as a publisher (PUB_MAP) and sink_worker (take, read,
 *                           release)
 *   framework/kernel/round_steps.hpp    subscribe_source (a GPU source: claims, frame = slot, no heap),
 *                           subscribe_lane and publish_item with publish_order::fenced (a GPU subscriber
 *                           group: reads, then one release fence, then relaxed stores), as driven by
 *                           framework/gpu/persistent_kernel.cuh's publish_round
 *   topics/topic_layout.hpp the words and their single writers
 *
 * The words, as in topic_layout.hpp (one writer per word; `mem` holds those written by plain, release or
 * relaxed stores, which go through a store buffer; the read-modify-write words are separate):
 *   seq[s], fields[s]          index_slot's seq, and its other fields as one word (tag: the offset, and
 *                              frame), written by the publisher of the slot's offset
 *   data[f]                    heap frame f's bytes (one word: the offset whose frame it holds)
 *   released[g][s]             written by subscriber group g
 *   end_offset                 written by the last publisher to close
 *   claim, closed, end_max, heap bitmap   read-modify-written by the publishers
 *   cursor[g]                  read-modify-written by group g
 * Offsets are Promela bytes: a topic's 64-bit offsets never wrap, and the model's stream (FRAMES plus a
 * void per publisher) stays far below 255, where NOFRAME and NOEND live.
 *
 * Memory model. Each publisher and each subscriber group has a store buffer (SB entries). A plain or
 * relaxed store enters it and reaches memory whenever the `memory` process chooses, in any order, except
 * that stores to one word keep their order (coherence). A release store enters it as an entry that can
 * only reach memory once every earlier store of that process has (later stores may still pass it: C++
 * release orders only what came before). A release fence, and a read-modify-write with release
 * (acq_rel) order, waits until the buffer is empty, so every store before it is visible before any after
 * it. Loads read the process's newest buffered store to the word, else memory; they take effect where
 * they stand in program order, and memory is multi-copy atomic (what one process sees, all can see).
 * This is the abstraction of std::atomic_ref and cuda::atomic_ref<thread_scope_system> the protocol
 * relies on: release/acquire chains (cumulativity) hold, plain stores may be seen late and out of order.
 * Load-load and load-store reordering are not modelled in general (loads are in order); the mutations
 * BUG_NO_ACQUIRE and BUG_PLAIN_RELEASE model them where a missing acquire or release would allow them.
 *
 * Waiting. A CPU thread's wait (backoff.hpp) and a GPU lane's "not yet, a later round" are polls whose
 * failed tries change nothing. By default a wait is a blocking guard on the word it polls, so a stuck
 * wait is an invalid end state (a deadlock). With -DBUSY_WAIT the polls are loops, and a run with -DNP
 * under weak fairness finds any execution that can poll forever (a livelock or a deadlock).
 *
 * Checked: every subscriber group receives offsets 0, 1, 2 ... in order (a group of one worker; with
 * WORKERS > 1, group 0's workers share them, each offset to one), each frame's slot fields and bytes are
 * those its publisher wrote for that offset (no frame lost, duplicated, reordered, stale or overwritten
 * while read), offsets from FRAMES on are void, the end of stream is seen only after every frame
 * (delivered[g] == FRAMES once every worker of g saw it), the heap never runs out or frees a free frame, the
 * store buffers never overflow, and every process ends (no deadlock; with BUSY_WAIT and -DNP, no
 * non-progress cycle).
 *
 * Mutations (-D flags), each a broken ordering or step that SPIN must refute with a counterexample
 * (tools/check_slot_model.sh fails otherwise, so the model cannot pass by checking nothing):
 *   BUG_PLAIN_COMMIT      the CPU commit is a plain store: fields and frame may land after seq
 *   BUG_NO_PUBLISH_FENCE  the GPU publisher's relaxed commit without the round's release fence
 *   BUG_PLAIN_RELEASE     a group's release without release order (CPU plain store, GPU no fence)
 *   BUG_NO_ACQUIRE        the poll's seq load without acquire: the slot's loads may come first
 *   BUG_EARLY_RELEASE     a CPU group releases the offset before reading it
 *   BUG_SLOT_FREE_EARLY   slot_free accepts the release of the occupant before the previous one
 *   BUG_CLOSE_FIRST       the first publisher to close ends the stream
 *   BUG_CLOSE_NEVER       nobody stores the end of stream (a deadlock; a livelock with BUSY_WAIT)
 *   BUG_TAKE_SPLIT        take is a load and a store: two workers of a group may take one offset
 */

#ifndef CAP
#define CAP 2 /* topic capacity: slots = heap frames */
#endif
#ifndef PUBS
#define PUBS 2 /* publisher workers (each closes once) */
#endif
#ifndef GROUPS
#define GROUPS 2 /* subscriber groups */
#endif
#ifndef WORKERS
#define WORKERS 1 /* workers of group 0 (each other group has one) */
#endif
#ifndef FRAMES
#define FRAMES (CAP + 2) /* frames the sources produce: every slot is reused at least once */
#endif
#ifndef PUB_GPU
#define PUB_GPU 0 /* 1: the publishers are GPU source lanes (round_steps.hpp), else CPU source workers */
#endif
#ifndef PUB_MAP
#define PUB_MAP 0 /* 1: they are a 1:1 map's workers or lanes instead, publishing at their input's offsets */
#endif
#ifndef GPU_GROUPS
#define GPU_GROUPS 2 /* bit g (< GROUPS) set: group g is a GPU operator's lanes (fenced), else CPU workers */
#endif
#ifndef SB
#define SB 4 /* store-buffer entries per process */
#endif

#define NOFRAME 255
#define NOEND 255

#define SEQ(s) (s)
#define FLD(s) (CAP + (s))
#define DAT(f) (2 * CAP + (f))
#define REL(g, s) (3 * CAP + (g) * CAP + (s))
#define END (3 * CAP + GROUPS * CAP)
/* A slot's other fields as one word: tag (the offset) and frame (3: no_frame). They are stored together
   before the commit and loaded together after it, so one word loses no ordering the protocol has; a
   word each would only multiply the reorderings SPIN explores. */
#if CAP > 3
#error "FIELDS packs a frame index in two bits: capacity 1 to 3"
#endif
#define FIELDS(tag, f) ((tag) * 4 + ((f) == NOFRAME -> 3 : (f)))
#define TAG_OF(w) ((w) / 4)
#define FRAME_OF(w) ((w) % 4 == 3 -> NOFRAME : (w) % 4)
#define NWORDS (END + 1)
#define NAG (PUBS + GROUPS + WORKERS - 1) /* processes with a store buffer */

byte mem[NWORDS];
byte claim;          /* topic_view::claim */
byte closed;         /* topic_view::closed */
byte end_max;        /* topic_view::end_max */
byte cursor[GROUPS]; /* topic_view::group_cursor */
bit heap[CAP];       /* topic_view::heap_bitmap (heap_frames == capacity) */

byte sb_addr[NAG * SB];
byte sb_val[NAG * SB];
bit sb_rel[NAG * SB];
byte sb_n[NAG];

byte delivered[GROUPS]; /* frames (not voids) group g's workers read */
byte ended[GROUPS];     /* group g's workers that saw the end of stream */

/* ---- the store buffers ---------------------------------------------------------------------------- */

#define E(a, i) ((a) * SB + (i))
#define SAME(a, j, i) (sb_addr[E(a, j)] == sb_addr[E(a, i)])
/* No earlier entry to the same word (coherence); a release entry only as the oldest. */
#define OK0(a) (sb_n[a] > 0)
#define OK1(a) (sb_n[a] > 1 && !sb_rel[E(a, 1)] && !SAME(a, 0, 1))
#define OK2(a) (sb_n[a] > 2 && !sb_rel[E(a, 2)] && !SAME(a, 0, 2) && !SAME(a, 1, 2))
#define OK3(a) (sb_n[a] > 3 && !sb_rel[E(a, 3)] && !SAME(a, 0, 3) && !SAME(a, 1, 3) && !SAME(a, 2, 3))

/* Makes entry i of process a's buffer visible and closes the gap (entries keep their program order). */
inline flush(a, i) {
  mem[sb_addr[E(a, i)]] = sb_val[E(a, i)];
  k = i;
  do
  :: k + 1 < sb_n[a] ->
    sb_addr[E(a, k)] = sb_addr[E(a, k + 1)];
    sb_val[E(a, k)] = sb_val[E(a, k + 1)];
    sb_rel[E(a, k)] = sb_rel[E(a, k + 1)];
    k++
  :: else -> break
  od;
  sb_n[a]--;
  sb_addr[E(a, sb_n[a])] = 0;
  sb_val[E(a, sb_n[a])] = 0;
  sb_rel[E(a, sb_n[a])] = 0;
  k = 0
}

#define FLUSH_ANY(a)                            \
  :: d_step { OK0(a) -> flush(a, 0) }           \
  :: d_step { OK1(a) -> flush(a, 1) }           \
  :: d_step { OK2(a) -> flush(a, 2) }           \
  :: d_step { OK3(a) -> flush(a, 3) }

/* The memory system: drains the store buffers, one entry at a time, in any allowed order. */
active proctype memory() {
  byte k;
end:
  do
  FLUSH_ANY(0)
#if NAG > 1
  FLUSH_ANY(1)
#endif
#if NAG > 2
  FLUSH_ANY(2)
#endif
#if NAG > 3
  FLUSH_ANY(3)
#endif
#if NAG > 4
  FLUSH_ANY(4)
#endif
  od
}

/* A store: `rel` 1 for memory_order_release, 0 for a plain or relaxed store. Entering the buffer is
   invisible to other processes, so a process's consecutive stores enter it in one step (callers wrap
   them in d_step): that loses no behaviour, since the buffer may still drain them one at a time. */
inline store(a, ad, v, rel) {
  assert(sb_n[a] < SB);
  sb_addr[E(a, sb_n[a])] = ad;
  sb_val[E(a, sb_n[a])] = v;
  sb_rel[E(a, sb_n[a])] = rel;
  sb_n[a]++
}

/* A load: the process's newest buffered store to the word, else memory (callers wrap it in d_step).
   Consecutive loads with no store of the process between them are taken in one step: a store of
   another process that could land between them can also land before them all, and the checks then see
   its value, so no violation is hidden (the poll's seq and end loads stay apart, as the code argues
   about their order). */
inline load(a, ad, v) {
  v = mem[ad];
  k = 0;
  do
  :: k < sb_n[a] ->
    if
    :: sb_addr[E(a, k)] == ad -> v = sb_val[E(a, k)]
    :: else -> skip
    fi;
    k++
  :: else -> break
  od;
  k = 0
}

/* A release fence, or the release half of a read-modify-write: every earlier store is visible first.
   As the guard of a d_step that then does the read-modify-write or the store, it loses no behaviour:
   the buffer, once empty, stays empty until the process stores again, so the step may run at any later
   moment. */
#define FENCE(a) (sb_n[a] == 0)
/* A full store buffer stalls the process's stores (where no fence bounds what it holds). */
#define ROOM(a, n) (sb_n[a] + (n) <= SB)

/* A poll until `cond` holds (see "Waiting" above). */
#ifdef BUSY_WAIT
#define AWAIT(cond)  \
  do                 \
  :: (cond) -> break \
  :: else -> skip    \
  od;                \
  skip /* (d_step may not be a jump target) */
#else
#define AWAIT(cond) (cond)
#endif

/* ---- publishers ----------------------------------------------------------------------------------- */

/* A source worker: source_worker (cpu_workers.cpp) over reserve_claimed / publish_frame / publish_void /
 * close, or a GPU source lane (subscribe_source, start_source_frame, publish_item fenced). With PUB_MAP,
 * a map's worker (map_worker over next_frame and reserve_at) or lane (subscribe_lane): its offset is the
 * one its input group's take handed it (`claim` plays that cursor, the input ending at FRAMES), it
 * publishes no void of its own, and it closes with the input's end (vo.close(vi.end())). */
proctype publisher(byte a) {
  byte o, s, f, v, want, k, mx;
  byte end_ = 0; /* one past the last offset this worker published */
  do
  :: d_step {
      o = claim; /* claim_offset (claim_offsets(1) on the GPU; a map: its input's take) */
      claim++;
      s = o % CAP;
#ifdef BUG_SLOT_FREE_EARLY
      want = (o >= CAP + 1 -> o - CAP : 0) /* mutation: off by one, the occupant before the previous */
#else
      want = (o >= CAP -> o - CAP + 1 : 0)
#endif
    };
#if PUB_GPU || PUB_MAP
    /* subscribe_source: a claim past source_frames ends the lane; a GPU source publishes no void. A map:
       its input ended */
    if
    :: o >= FRAMES ->
#if PUB_MAP
      end_ = FRAMES; /* close(vi.end()) */
#endif
      break
    :: else -> skip
    fi;
#endif
    /* slot_free(o): every group released the slot's previous occupant (acquire loads; a failed look is
       retried, by wait_until on the CPU and by a later round on the GPU) */
#ifdef BUG_SLOT_FREE_EARLY
    AWAIT(mem[REL(0, s)] >= want);
#if GROUPS > 1
    AWAIT(mem[REL(1, s)] >= want);
#endif
#else
    AWAIT(mem[REL(0, s)] == want);
#if GROUPS > 1
    AWAIT(mem[REL(1, s)] == want);
#endif
#endif
#if PUB_GPU
    /* slot_frame(o): the kernel's frame for an offset is its slot; it fills the frame and prepare_slot
       writes the fields (plain stores, the slot is owned); publish_round fences once; publish_item
       commits with a relaxed store */
    d_step { ROOM(a, 2) ->
      f = s;
      store(a, DAT(f), o, 0);
      store(a, FLD(s), FIELDS(o, f), 0)
    };
progress_publish:
#ifdef BUG_NO_PUBLISH_FENCE
    d_step { ROOM(a, 1) -> /* mutation: no fence before the relaxed commit */
#else
    d_step { FENCE(a) ->
#endif
      store(a, SEQ(s), o + 1, 0);
      end_ = o + 1;
      f = 0; want = 0
    }
#else
    /* reclaim(o): relaxed seq, plain frame field (only this publisher touches the slot now); a frame
       there goes back to the heap (free_frame: fetch_and with release) */
    d_step {
      load(a, SEQ(s), v);
      if
      :: v != 0 -> load(a, FLD(s), f); f = FRAME_OF(f)
      :: else -> f = NOFRAME
      fi;
      v = 0
    };
    if
    :: f != NOFRAME -> d_step { FENCE(a) -> assert(heap[f]); heap[f] = 0 }
    :: else -> skip
    fi;
    /* alloc_frame(o): fetch_or acq_rel, frame o % heap_frames first, else any free one */
    d_step { FENCE(a) ->
      f = o % CAP;
      if
      :: !heap[f] -> heap[f] = 1
      :: else ->
        f = 0;
        do
        :: f < CAP && heap[f] -> f++
        :: f < CAP && !heap[f] -> heap[f] = 1; break
        :: f == CAP -> f = NOFRAME; break
        od
      fi;
      assert(f != NOFRAME) /* reserve_at: "no free frame ... (broken invariant: one frame per slot)" */
    };
    if
    :: o < FRAMES ->
      /* the source fills the frame, prepare_slot writes the fields (plain stores: the slot is owned),
         commit: store_release(seq, o + 1) */
progress_publish:
      d_step {
        store(a, DAT(f), o, 0);
        store(a, FLD(s), FIELDS(o, f), 0);
#ifdef BUG_PLAIN_COMMIT
        store(a, SEQ(s), o + 1, 0); /* mutation: commit without release order */
#else
        store(a, SEQ(s), o + 1, 1);
#endif
        end_ = o + 1;
        f = 0; want = 0
      }
#if !PUB_MAP
    :: else ->
      /* produce() said no more: publish_void frees the ticket's frame, then prepare_void and commit */
      d_step { FENCE(a) -> assert(heap[f]); heap[f] = 0 };
      d_step {
        store(a, FLD(s), FIELDS(o, NOFRAME), 0);
        store(a, SEQ(s), o + 1, 1);
        end_ = o + 1;
        f = 0; want = 0
      };
      break
#endif
    fi
#endif
  od;
  skip; /* (a jump target: d_step may not be one) */
  /* close(end_): fetch_max acq_rel, then fetch_add acq_rel; the last one stores end_offset (release)
     with the largest end (load_acquire(end_max)) */
  d_step { FENCE(a) ->
    if
    :: end_ > end_max -> end_max = end_
    :: else -> skip
    fi
  };
  d_step { FENCE(a) -> closed++; v = closed };
#ifdef BUG_CLOSE_FIRST
  if
  :: v == 1 -> mx = end_max; d_step { store(a, END, mx, 1) } /* mutation: the first closer ends it */
  :: else -> skip
  fi
#elif defined(BUG_CLOSE_NEVER)
  skip /* mutation: the count never reaches `publishers`, nobody stores the end */
#else
  if
  :: v == PUBS -> mx = end_max; d_step { store(a, END, mx, 1) }
  :: else -> skip
  fi
#endif
}

/* ---- subscriber groups ---------------------------------------------------------------------------- */

/* Reads offset o's slot and frame (one d_step, see load) and checks them: what its publisher wrote for
 * o, a frame below FRAMES, void from there on. */
inline read_and_check() {
  d_step {
    load(a, FLD(s), t);
    f = FRAME_OF(t);
    t = TAG_OF(t);
    if
    :: f != NOFRAME -> load(a, DAT(f), d)
    :: else -> d = NOFRAME
    fi;
    assert(t == o); /* the slot's fields are offset o's */
    if
    :: o < FRAMES -> assert(f != NOFRAME && d == o) /* o's bytes, not an older or newer frame's */
    :: else -> assert(f == NOFRAME)                 /* past the sources' frames: a source's end void */
    fi;
    f = 0; t = 0; d = 0
  }
}

/* One worker of group g, process `a` (its store buffer): next_frame + sink_worker (cpu_workers.cpp) on
 * the CPU, or a GPU lane's subscribe_lane + publish_item (fenced) on the GPU. */
proctype subscriber(byte g; byte a) {
  bool gpu = (GPU_GROUPS >> g) & 1;
  bool alone = (g != 0 || WORKERS == 1); /* the group's only worker: it takes every offset, in order */
  byte o, s, v, e, f, t, d, k;
  do
  ::
#ifdef BUG_TAKE_SPLIT
    o = cursor[g]; /* mutation: take as a load and a store, not one fetch_add */
#endif
    d_step {
#ifdef BUG_TAKE_SPLIT
      cursor[g] = o + 1;
#else
      o = cursor[g]; /* take(g): a relaxed fetch_add */
      cursor[g]++;
#endif
      assert(!alone || o == delivered[g] || o >= FRAMES); /* one worker: the offsets in order */
      s = o % CAP
    };
#ifdef BUG_NO_ACQUIRE
    /* mutation: without acquire, the slot's and frame's loads may be satisfied before the seq load */
    if
    :: read_and_check()
    :: skip
    fi;
#endif
    /* poll(o): seq (acquire) == o + 1: ready; else end_offset (acquire): o ≥ end: ended; else pending.
       The GPU lane does the same (published, then end() every few misses). */
    do
    :: d_step { load(a, SEQ(s), v) };
      if
      :: v == o + 1 -> v = 0; break
      :: else ->
        d_step { load(a, END, e) };
        if
        :: e != NOEND && o >= e -> goto stream_over
        :: else ->
#ifdef BUSY_WAIT
          skip
#else
          (mem[SEQ(s)] != v || mem[END] != e) /* a poll that saw nothing new changes nothing */
#endif
        fi
      fi
    od;
#ifdef BUG_EARLY_RELEASE
    if
    :: !gpu -> d_step { store(a, REL(g, s), o + 1, 1) } /* mutation: released before the frame is read */
    :: else -> skip
    fi;
#endif
    read_and_check();
    /* release(g, o) on the CPU (store_release); on the GPU a release fence, then release_relaxed */
    if
#if GPU_GROUPS != 0 /* (only the branches some group takes, so that SPIN reaches every statement) */
    :: gpu ->
progress_deliver:
#ifdef BUG_PLAIN_RELEASE
      d_step {
#else
      d_step { FENCE(a) ->
#endif
        store(a, REL(g, s), o + 1, 0);
        delivered[g] = delivered[g] + (o < FRAMES);
        e = 0
      }
#endif
#if GPU_GROUPS != (1 << GROUPS) - 1
    :: !gpu ->
progress_deliver_cpu:
      d_step {
#if defined(BUG_PLAIN_RELEASE)
        store(a, REL(g, s), o + 1, 0);
#elif !defined(BUG_EARLY_RELEASE)
        store(a, REL(g, s), o + 1, 1);
#endif
        delivered[g] = delivered[g] + (o < FRAMES);
        e = 0
      }
#endif
    fi;
#ifdef BUG_PLAIN_RELEASE
    /* mutation: without release order (a plain store, or no fence), the store may become visible before
       the group's earlier loads of the slot and frame are performed */
    if
    :: FENCE(a); read_and_check()
    :: skip
    fi
#endif
  od;
stream_over:
  /* o ≥ end, which is one past the last offset published (the group's only worker takes exactly the
     end); once every worker of the group saw it, every frame was delivered, each once (take hands
     each offset to one worker, and each read checked the offset's own bytes) */
  assert(e >= FRAMES && o >= e && (!alone || o == e));
  d_step {
    ended[g]++;
    if
    :: ended[g] == (g == 0 -> WORKERS : 1) -> assert(delivered[g] == FRAMES)
    :: else -> skip
    fi
  }
}

init {
  byte i;
  atomic {
    mem[END] = NOEND;
    i = 0;
    do
    :: i < PUBS -> run publisher(i); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < GROUPS -> run subscriber(i, PUBS + i); i++
    :: else -> break
    od;
#if WORKERS > 1
    i = 1;
    do
    :: i < WORKERS -> run subscriber(0, PUBS + GROUPS + i - 1); i++ /* group 0's other workers */
    :: else -> break
    od;
#endif
    i = 0
  }
}
