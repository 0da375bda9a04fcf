#!/usr/bin/env python3
"""A Jepsen-style checker of xeflow-run's checkpoint and resume.

It runs a topology with a file sink once without interruption (the reference), then, round after round:
starts it with --checkpoint, kills it with SIGKILL at a random moment (seeded and printed), resumes it
with --resume until a run completes (a resumed run is itself killed now and then), and compares the final
output with the reference byte for byte. Besides the kill -9 rounds, one round ends the first run with
SIGTERM and one with a full disk (RLIMIT_FSIZE in the child: the file sink's writes fail with EFBIG), each
then resumed with space. One line per round, then "N/N passed"; the exit status is non-zero on any
mismatch or unexpected exit.

  python3 tools/kill9_check.py --run build/tools/xeflow-run --bytes 64MiB --host --rounds 30 --seed 1
  python3 tools/kill9_check.py --run build-release/tools/xeflow-run --bytes 4GiB --rounds 30   # on the GPU

Standard library only.
"""

import argparse
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

UNITS = {"": 1, "B": 1, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_bytes(text):
    m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).upper() not in UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64MiB)")
    return int(m.group(1)) * UNITS[m.group(2).upper()]


class Checker:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.out = os.path.join(work, "out.bin")
        self.checkpoint = os.path.join(work, "run.ckpt")
        self.reference = os.path.join(work, "reference.bin")
        self.timeout = args.timeout
        # The signal's moments are drawn from the shortest completed run seen so far: the reference run
        # (cold caches, the driver's first start) may take twice as long as the runs after it.
        self.shortest = None

    def command(self, path, extra):
        cmd = [self.args.run, self.args.topology, "-q", "--set", f"operators.{self.args.sink}.params.path={path}"]
        if not self.args.no_size:
            cmd += ["--set", f"operators.{self.args.source}.params.total_bytes={self.args.bytes}"]
        for override in self.args.set:
            cmd += ["--set", override]
        if self.args.host:
            cmd.append("--host")
        return cmd + extra

    def start(self, extra, limit_file_bytes=None):
        def child_setup():
            if limit_file_bytes is not None:
                # A full disk: writes past the limit fail with EFBIG (SIGXFSZ ignored, as a process that
                # wants the error rather than death would), while the small checkpoint still fits.
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_bytes, limit_file_bytes))
        return subprocess.Popen(self.command(self.out, extra), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, preexec_fn=child_setup)

    def wait(self, proc):
        try:
            _, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RuntimeError(f"a run took longer than {self.timeout} s")
        return proc.returncode, err.decode(errors="replace")

    def run_reference(self):
        began = time.monotonic()
        r = subprocess.run(self.command(self.reference, []), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=self.timeout)
        seconds = time.monotonic() - began
        if r.returncode != 0:
            raise RuntimeError(f"the reference run exited {r.returncode}: {r.stderr.decode(errors='replace')}")
        return seconds

    def committed(self):
        """The checkpoint's committed offsets, as text for the round's line."""
        try:
            with open(self.checkpoint) as f:
                text = f.read()
        except FileNotFoundError:
            return "none"
        sinks = re.findall(r'"name": "([^"]*)",\s*"topic": "[^"]*",\s*"committed": (\d+)', text)
        return ", ".join(f"{n} {c}" for n, c in sinks) or "?"

    def clean(self):
        for p in (self.out, self.out + ".partial", self.checkpoint, self.checkpoint + ".tmp"):
            if os.path.exists(p):
                os.remove(p)

    def first_difference(self):
        with open(self.out, "rb") as a, open(self.reference, "rb") as b:
            at = 0
            while True:
                x, y = a.read(1 << 20), b.read(1 << 20)
                if x != y:
                    n = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), min(len(x), len(y)))
                    return at + n
                if not x:
                    return None
                at += len(x)

    def round(self, number, rng, ending):
        """One round: the first run ends by `ending` (kill, term, disk), then resumes until one completes.
        A first run that completes before its signal is started again with a new moment (up to 10 times),
        so that every kill round kills."""
        self.clean()
        began = time.monotonic()
        events = []
        limit = self.args.bytes // 2 if ending == "disk" else None
        first_run = ["--checkpoint", self.checkpoint, "--checkpoint-ms", str(self.args.checkpoint_ms)]
        proc = self.start(first_run, limit)
        started = time.monotonic()
        resumes = 0
        retries = 0
        kills_left = self.args.kills
        signum = {"kill": signal.SIGKILL, "term": signal.SIGTERM, "disk": None}[ending]
        while True:
            if signum is not None and kills_left > 0:
                at = rng.uniform(0.05, 0.95) * self.shortest
                try:
                    proc.wait(timeout=at)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signum)
                    events.append(f"{'kill -9' if signum == signal.SIGKILL else 'SIGTERM'} at {at:.3f} s")
                else:
                    if proc.returncode == 0 and resumes == 0:
                        self.shortest = min(self.shortest, time.monotonic() - started)
                        if retries < 10:
                            retries += 1
                            self.clean()
                            proc = self.start(first_run, limit)
                            started = time.monotonic()
                            continue
                kills_left -= 1
            code, err = self.wait(proc)
            if code == 0:
                if resumes == 0:  # a whole stream (a resumed run streams only the rest)
                    self.shortest = min(self.shortest, time.monotonic() - started)
                break
            expected = {-signal.SIGKILL, -signal.SIGTERM, 130} if signum is not None else {1}
            if code not in expected:
                return False, f"a run exited {code} unexpectedly: {err.strip()[-600:]}", time.monotonic() - began
            if signum is None:
                events.append("full disk: exit 1" + (" (EFBIG)" if "File too large" in err else ""))
            events.append(f"committed {self.committed()}")
            resumes += 1
            if resumes > self.args.max_resumes:
                return False, f"no completion after {resumes - 1} resumes", time.monotonic() - began
            # Only kill -9 rounds kill resumed runs too, half the time: a resume of a resume.
            signum = signal.SIGKILL if ending == "kill" and rng.random() < 0.5 else None
            kills_left = 1 if signum is not None else 0
            extra = ["--resume", self.checkpoint, "--checkpoint-ms", str(self.args.checkpoint_ms)]
            if not os.path.exists(self.checkpoint):  # killed before its first commit: start afresh
                extra = ["--checkpoint", self.checkpoint, "--checkpoint-ms", str(self.args.checkpoint_ms)]
            proc = self.start(extra)
            started = time.monotonic()
        seconds = time.monotonic() - began
        if not events:
            events.append("completed under the file-size limit" if ending == "disk" else "completed before the signal")
        if retries:
            events.insert(0, f"{retries} first run{'s' if retries != 1 else ''} completed before the signal")
        what = f"{'; '.join(events)}; {resumes} resume{'s' if resumes != 1 else ''}"
        if os.path.exists(self.out + ".partial"):
            return False, what + f": {self.out}.partial left after a completed run", seconds
        if not os.path.exists(self.out):
            return False, what + ": no output", seconds
        size, want = os.path.getsize(self.out), os.path.getsize(self.reference)
        differ = self.first_difference()
        if differ is not None:
            return False, what + f": output differs from the reference at byte {differ} ({size} bytes, expected {want})", seconds
        return True, what, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="the xeflow-run executable")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--topology", default=os.path.join(here, "..", "topologies", "checkpoint_file.yaml"),
                    help="a topology with a file sink (default topologies/checkpoint_file.yaml)")
    ap.add_argument("--source", default="source", help="the source whose total_bytes sets the stream size")
    ap.add_argument("--sink", default="out", help="the file sink whose output is compared")
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="more --set overrides for every run (repeatable)")
    ap.add_argument("--no-size", action="store_true",
                    help="leave the source's size alone (a file source: its file is the stream)")
    ap.add_argument("--bytes", type=parse_bytes, default=parse_bytes("64MiB"), help="stream size (64MiB)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--host", action="store_true", help="the host executor (default)")
    mode.add_argument("--gpu", action="store_true", help="the GPU's kernel where there is one")
    ap.add_argument("--rounds", type=int, default=30, help="kill -9 rounds (30)")
    ap.add_argument("--seed", type=int, default=None, help="the random moments' seed (default: from the clock)")
    ap.add_argument("--kills", type=int, default=1, help="signals to the first run of a round (1)")
    ap.add_argument("--checkpoint-ms", type=int, default=20, help="--checkpoint-ms of the runs (20)")
    ap.add_argument("--max-resumes", type=int, default=20)
    ap.add_argument("--no-sigterm", action="store_true", help="skip the SIGTERM round")
    ap.add_argument("--no-disk-full", action="store_true", help="skip the full-disk round")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds one run may take (600)")
    ap.add_argument("--workdir", default=None, help="where the outputs go (default: a temporary directory)")
    ap.add_argument("--tmp-root", default=None,
                    help="where the temporary directory is made (e.g. /dev/shm: a kill -9 needs no disk to "
                         "survive it, and tmpfs makes each fsync free)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    if not args.gpu:
        args.host = True
    seed = args.seed if args.seed is not None else int(time.time() * 1000) % (1 << 31)
    rng = random.Random(seed)
    work = args.workdir or tempfile.mkdtemp(prefix="xf-kill9-", dir=args.tmp_root)
    os.makedirs(work, exist_ok=True)
    checker = Checker(args, work)
    print(f"kill9_check: {args.topology}, {args.bytes} bytes, {'host executor' if args.host else 'GPU'}, "
          f"{args.rounds} rounds, seed {seed}, in {work}", flush=True)
    began = time.monotonic()
    try:
        reference_seconds = checker.run_reference()
        checker.shortest = reference_seconds
        print(f"reference: {reference_seconds:.3f} s, {os.path.getsize(checker.reference)} bytes", flush=True)
        endings = ["kill"] * args.rounds + ([] if args.no_sigterm else ["term"]) + ([] if args.no_disk_full else ["disk"])
        passed = {"kill": 0, "term": 0, "disk": 0}
        for n, ending in enumerate(endings, 1):
            ok, what, seconds = checker.round(n, rng, ending)
            label = {"kill": "kill -9", "term": "SIGTERM", "disk": "full disk"}[ending]
            print(f"round {n:2d} ({label}): {what}, {seconds:.2f} s: {'ok' if ok else 'FAILED'}", flush=True)
            passed[ending] += ok
        others = [f"{label} {'ok' if passed[e] == endings.count(e) else 'FAILED'}"
                  for e, label in (("term", "SIGTERM"), ("disk", "full disk")) if e in endings]
        print(f"{passed['kill']}/{args.rounds} passed" + (f"; {', '.join(others)}" if others else "") +
              f" ({time.monotonic() - began:.1f} s, {args.bytes} bytes, seed {seed})", flush=True)
        return 0 if sum(passed.values()) == len(endings) else 1
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"kill9_check: error: {e}", flush=True)
        return 2
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
