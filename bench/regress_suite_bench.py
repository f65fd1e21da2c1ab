#!/usr/bin/env python3
"""Throughput of `cudaprep-regress suite check` over a suite of clips, against decode-only pipelines.

The suite: N names (default 8) for one H.264 clip (hard links, or copies where links fail), each
its own clip of the suite, recorded once with
    filesrc location={clip} ! qtdemux ! h264parse ! DECODER ! TENSORIZE ! appsink name=tensor
and --store digest (per frame the SHA-256 of the tensor and its min / max / mean / L2: every
frame is still checked, exactly, without writing the tensors, 4.9 MB a 640x640x3 fp32 frame).
Then, each timed as wall time of the whole command (clips per minute = N * 60 / wall):
  - suite check -j 1 --gpus 0;
  - suite check -j 4 --gpus 0;
  - decode only: `gst-launch-1.0 filesrc ! qtdemux ! h264parse ! DECODER ! CAPS ! fakesink`, one
    process per clip, 1 and 4 at a time (the same clips);
  - with two GPUs or more (nvidia-smi -L): suite check --gpus 0,1 (its default, 4 clips on each
    GPU: 8 at once) against one GPU, and -j 8 --gpus 0 (as many at once on one GPU, to tell the
    second GPU's share from the extra concurrency's), beside the decode-only pipelines 8 at a time
    on GPU 0 and 4 on each GPU (their ceilings). --gpus puts each clip's whole pipeline on its
    GPU: the cudaprep elements' device-id and the NVDEC decoder named for that GPU (nvh264dec,
    nvh264device1dec, ...). The script prints, where nvidia-smi is there, each GPU's NVDEC and SM
    utilisation sampled during every case: where the decoding ran.

Every case must pass (exit 0, every clip `pass`), else the script stops with the clip's log.
Prints one markdown table last: case, wall, clips/min, ratios, target, met.
Without a GPU (--decoder avdec_h264, cudatensorize on its CPU path, a short clip) it runs end to
end on any machine with GStreamer; the targets then say nothing about a GPU.
"""
import argparse
import json
import os
import re
import resource
import shlex
import shutil
import struct
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = ["j1", "j4", "dec1", "dec4", "g2", "j8", "dec8", "dec8g2"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clip", required=True, help="H.264 MP4 (bench/make_pipeline_clip.sh: 1080p, 540 frames)")
    p.add_argument("--frames", type=int, default=540, help="frames the clip must have (0: any)")
    p.add_argument("--clips", type=int, default=8, help="clips in the suite (names of the one clip)")
    p.add_argument("--decoder", default="nvh264dec", help="decoder (avdec_h264 without a GPU)")
    p.add_argument("--decode-caps", default=None,
                   help="caps after the decoder in the decode-only pipelines (default: "
                        "video/x-raw(memory:CUDAMemory) after an nv decoder, none otherwise)")
    p.add_argument("--tensorize", default="cudatensorize", help="the tensorize element and its properties")
    p.add_argument("--tool", default=None, help="cudaprep-regress (default: build/tools/regress/cudaprep-regress, "
                                                "else build-cpu/...)")
    p.add_argument("--work", default="/tmp/regress-suite-bench", help="scratch folder (emptied first)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per clip before it counts as hung")
    p.add_argument("--gpus", type=int, default=None, help="GPUs to use (default: nvidia-smi -L's count; 0: none)")
    p.add_argument("--cases", default=",".join(CASES),
                   help="cases to time, comma-separated (default: all of " + ",".join(CASES) + "; the two-GPU ones "
                        "only where there are two GPUs); ratios need their base case (j1, j4, dec4) in the same run")
    a = p.parse_args()
    a.cases = [c for c in a.cases.split(",") if c]
    unknown = [c for c in a.cases if c not in CASES]
    if unknown:
        p.error(f"--cases: unknown {unknown}; known: {CASES}")
    if a.decode_caps is None:
        a.decode_caps = "video/x-raw(memory:CUDAMemory)" if a.decoder.startswith("nv") else ""
    if a.tool is None:
        for b in ("build", "build-cpu"):
            t = os.path.join(REPO, b, "tools", "regress", "cudaprep-regress")
            if os.access(t, os.X_OK):
                a.tool = t
                break
        else:
            sys.exit("no cudaprep-regress in build/ or build-cpu/: build it or name it with --tool")
    return a


def mp4_frames(path):
    """Sample count of the first video track of an MP4 (its stsz box): the clip's frames."""
    def boxes(f, start, end):
        pos = start
        while pos + 8 <= end:
            f.seek(pos)
            size, kind = struct.unpack(">I4s", f.read(8))
            head = 8
            if size == 1:
                size = struct.unpack(">Q", f.read(8))[0]
                head = 16
            elif size == 0:
                size = end - pos
            if size < head:
                return
            yield kind, pos + head, pos + size
            pos += size

    with open(path, "rb") as f:
        end = os.fstat(f.fileno()).st_size
        for kind, s, e in boxes(f, 0, end):
            if kind != b"moov":
                continue
            for tk, ts, te in boxes(f, s, e):
                if tk != b"trak":
                    continue
                handler, count = None, None
                stack = [(ts, te)]
                while stack:
                    bs, be = stack.pop()
                    for k, cs, ce in boxes(f, bs, be):
                        if k in (b"mdia", b"minf", b"stbl"):
                            stack.append((cs, ce))
                        elif k == b"hdlr":
                            f.seek(cs + 8)
                            handler = f.read(4)
                        elif k == b"stsz":
                            f.seek(cs + 4)
                            sample_size, n = struct.unpack(">II", f.read(8))
                            count = n
                if handler == b"vide" and count is not None:
                    return count
    return None


def gst_version():
    out = subprocess.run(["gst-launch-1.0", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"GStreamer (\S+)", out)
    return m.group(1) if m else "unknown"


def gpu_names():
    if not shutil.which("nvidia-smi"):
        return []
    r = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version", "--format=csv,noheader"],
                       capture_output=True, text=True)
    return [l.strip() for l in r.stdout.splitlines() if l.strip()] if r.returncode == 0 else []


class GpuSampler:
    """Each GPU's NVDEC and SM utilisation (%) every 200 ms while a case runs (nvidia-smi -lms)."""

    def __init__(self, enabled):
        self.enabled = enabled and bool(shutil.which("nvidia-smi"))
        self.samples = {}

    def __enter__(self):
        if self.enabled:
            self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.decoder,utilization.gpu",
                                          "--format=csv,noheader,nounits", "-lms", "200"],
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.thread = threading.Thread(target=self._read, daemon=True)
            self.thread.start()
        return self

    def _read(self):
        for line in self.proc.stdout:
            f = [x.strip() for x in line.split(",")]
            if len(f) == 3 and all(x.isdigit() for x in f):
                self.samples.setdefault(int(f[0]), []).append((int(f[1]), int(f[2])))

    def __exit__(self, *exc):
        if self.enabled:
            self.proc.terminate()
            self.proc.wait()
            self.thread.join(timeout=2)

    def summary(self):
        parts = []
        for gpu, s in sorted(self.samples.items()):
            dec = [x[0] for x in s]
            sm = [x[1] for x in s]
            parts.append(f"GPU {gpu}: NVDEC mean {sum(dec) / len(dec):.0f}% max {max(dec)}%, "
                         f"SM mean {sum(sm) / len(sm):.0f}%")
        return "; ".join(parts) if parts else "n/a"


def run_timed(name, cmd, gpus_present, log):
    print(f"--- {name}: {' '.join(shlex.quote(c) for c in cmd)}", flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with GpuSampler(gpus_present > 0) as s:
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU time of every process the case ran (each clip's, the runner's), user + system
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    with open(log, "w") as f:
        f.write(r.stdout)
    util = f"{s.summary()}; CPU {cpu:.1f} s ({cpu / wall:.1f} cores)"
    print(f"    {wall:.2f} s, exit {r.returncode}; utilisation: {util}", flush=True)
    return r, wall, util


def check_results(name, out_dir, r, clips, expect_gpus=None):
    """Every clip passed; returns {clip: gpu}."""
    path = os.path.join(out_dir, "results.json")
    if not os.path.exists(path):
        sys.exit(f"{name}: no {path} (exit {r.returncode}):\n{r.stdout[-3000:]}")
    res = json.load(open(path))
    got = {}
    bad = []
    for c in res.get("clips", []):
        got[c.get("name")] = c.get("gpu")
        if c.get("verdict") != "pass":
            bad.append(c)
    if r.returncode != 0 or bad or len(got) != clips:
        msg = [f"{name}: exit {r.returncode}, {len(got)} clips, not passed: {[c.get('name') for c in bad]}"]
        for c in bad[:2]:
            msg.append(f"{c.get('name')}: {c.get('verdict')}: {c.get('message')}")
            logf = os.path.join(out_dir, "clips", c.get("name", ""), "log.txt")
            if os.path.exists(logf):
                msg.append(open(logf, errors="replace").read()[-2000:])
        msg.append(r.stdout[-2000:])
        sys.exit("\n".join(msg))
    if expect_gpus is not None:
        wrong = {k: v for k, v in got.items() if v not in expect_gpus}
        if wrong:
            sys.exit(f"{name}: clips on GPUs other than {sorted(expect_gpus)}: {wrong}")
    return got


def main():
    a = parse_args()
    if not shutil.which("gst-launch-1.0"):
        sys.exit("gst-launch-1.0 not found: source .gstbundle/env.sh")
    frames = mp4_frames(a.clip)
    size_mb = os.path.getsize(a.clip) / 1e6
    print(f"clip: {a.clip}, {frames} frames, {size_mb:.1f} MB")
    if a.frames and frames != a.frames:
        sys.exit(f"the clip has {frames} frames, not {a.frames} (--frames 0 takes any)")
    names = gpu_names()
    ngpu = len(names) if a.gpus is None else a.gpus
    tool, wrap = [a.tool], []
    if os.environ.get("GST_BUNDLE_LOADER"):
        # a bundle on its own glibc (dev/gpu/chroot-bundle-env.sh): the tool and each clip's run of
        # it go through the bundle's loader
        tool, wrap = ["gst-bundle-run", a.tool], ["--wrapper", shutil.which("gst-bundle-run") or "gst-bundle-run"]

    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "clips"))
    clip_paths = []
    linked = True
    for i in range(a.clips):
        dst = os.path.join(work, "clips", f"clip-{i}.mp4")
        try:
            os.link(os.path.abspath(a.clip), dst)
        except OSError:
            shutil.copyfile(a.clip, dst)
            linked = False
        clip_paths.append(dst)
    pipeline = (f"filesrc location={{clip}} ! qtdemux ! h264parse ! {a.decoder} ! {a.tensorize} "
                f"! appsink name=tensor")
    manifest = os.path.join(work, "suite.ini")
    with open(manifest, "w") as f:
        f.write("[suite]\nname=regress-suite-bench\nclips=clips\ngoldens=goldens\n"
                f"pipeline={pipeline}\nstore=digest\ntimeout={a.timeout}\n")
        for i in range(a.clips):
            f.write(f"\n[clip clip-{i}]\nfile=clip-{i}.mp4\n")
    print(f"suite: {manifest}, {a.clips} clips ({'hard links' if linked else 'copies'} of the clip), "
          f"store=digest\npipeline: {pipeline}")

    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    gpu_opt = ["--gpus", "0"]
    rec_out = os.path.join(work, "record")
    r, wall, _ = run_timed("record", tool + ["suite", "record", "--suite", manifest, "--out", rec_out,
                                             "-j", "4"] + gpu_opt + wrap + ["--quiet"], ngpu, os.path.join(logs, "record.txt"))
    check_results("record", rec_out, r, a.clips)
    for i in range(a.clips):
        m = json.load(open(os.path.join(work, "goldens", f"clip-{i}", "manifest.json")))
        if a.frames and m.get("frames") != a.frames:
            sys.exit(f"golden clip-{i} holds {m.get('frames')} frames, not {a.frames}")
    gm = json.load(open(os.path.join(work, "goldens", "clip-0", "manifest.json")))
    print(f"record: {wall:.2f} s; golden device {gm.get('device', {}).get('kind')} "
          f"({gm.get('device', {}).get('name')}), {gm.get('frames')} frames a clip; "
          f"golden size {sum(os.path.getsize(os.path.join(d, x)) for d, _, fs in os.walk(os.path.join(work, 'goldens')) for x in fs) / 1e6:.1f} MB")

    if a.decoder.startswith("nv") and gm.get("device", {}).get("kind") != "cuda":
        sys.exit("the golden was recorded on the CPU path (device kind "
                 f"{gm.get('device', {}).get('kind')}), not on the GPU: see {os.path.join(rec_out, 'clips')}")

    rows = {}

    def check_case(key, label, opts, expect_gpus, extra=()):
        out = os.path.join(work, key)
        r, wall, util = run_timed(label, tool + ["suite", "check", "--suite", manifest, "--out", out] + opts +
                                  list(extra) + wrap + ["--quiet"], ngpu, os.path.join(logs, key + ".txt"))
        got = check_results(label, out, r, a.clips, expect_gpus)
        per_gpu = {}
        for g in got.values():
            per_gpu[g] = per_gpu.get(g, 0) + 1
        res = json.load(open(os.path.join(out, "results.json")))
        secs = [c.get("seconds", 0) for c in res.get("clips", [])]
        runs = set()
        for c in res.get("clips", []):
            rep = os.path.join(out, "clips", c.get("name", ""), "report.txt")
            if os.path.exists(rep):
                runs.update(m.strip() for m in re.findall(r"^  this run: +(.*)$", open(rep, errors="replace").read(),
                                                          re.M))
        print(f"    clips per GPU (results.json): {dict(sorted(per_gpu.items(), key=lambda x: str(x[0])))}; "
              f"seconds a clip: mean {sum(secs) / len(secs):.2f}, max {max(secs):.2f}; ran on: {sorted(runs)}")
        if a.decoder.startswith("nv") and any(not x.startswith("cuda") for x in runs):
            sys.exit(f"{label}: some clip ran on the CPU path: {sorted(runs)}")
        rows[key] = (label, wall, util)

    decode_sh = os.path.join(work, "decode-only.sh")
    with open(decode_sh, "w") as f:
        caps = f" ! {shlex.quote(a.decode_caps)}" if a.decode_caps else ""
        f.write(f"exec gst-launch-1.0 -q filesrc location=\"$1\" ! qtdemux ! h264parse ! \"$2\"{caps} ! fakesink\n")
    print(f"decode only: {open(decode_sh).read().strip()}")

    def decode_case(key, label, jobs, gpus=(0,)):
        # clip i decodes on GPU gpus[i % len(gpus)], with the decoder named for it (as --gpus does)
        args = []
        for i, clip in enumerate(clip_paths):
            args += [clip, decoder_for_gpu(a.decoder, gpus[i % len(gpus)])]
        cmd = ["sh", "-c", f'printf "%s\\n" "$@" | xargs -P {jobs} -n 2 sh {shlex.quote(decode_sh)}', "sh"] + args
        r, wall, util = run_timed(label, cmd, ngpu, os.path.join(logs, key + ".txt"))
        if r.returncode != 0:
            sys.exit(f"{label}: exit {r.returncode}:\n{r.stdout[-3000:]}")
        rows[key] = (label, wall, util)

    want = set(a.cases)
    if "j1" in want:
        check_case("j1", "suite check -j 1 --gpus 0", ["-j", "1"] + gpu_opt, {0})
    if "j4" in want:
        check_case("j4", "suite check -j 4 --gpus 0", ["-j", "4"] + gpu_opt, {0})
    if "dec1" in want:
        decode_case("dec1", "decode only, 1 at a time", 1)
    if "dec4" in want:
        decode_case("dec4", "decode only, 4 at a time", 4)
    if ngpu >= 2 and "g2" in want:
        check_case("g2", "suite check --gpus 0,1 (4 per GPU: 8 at once)", ["--gpus", "0,1"], {0, 1})
    if ngpu >= 2 and "j8" in want:
        check_case("j8", "suite check -j 8 --gpus 0 (8 at once, one GPU)", ["-j", "8"] + gpu_opt, {0})
    if ngpu >= 2 and "dec8" in want:
        decode_case("dec8", "decode only, 8 at a time on GPU 0", 8)
    if ngpu >= 2 and "dec8g2" in want:
        decode_case("dec8g2", "decode only, 8 at a time, 4 on each GPU", 8, (0, 1))

    cpm = lambda k: a.clips * 60.0 / rows[k][1]
    ratio = lambda k, base: f"{cpm(k) / cpm(base):.2f}x" if base in rows else "n/a"
    print(f"\n## cudaprep-regress suite check: {a.clips} clips of {frames} frames, {a.decoder} ! "
          f"{a.tensorize}, store=digest\n")
    print(f"GPU: {'; '.join(names) if names else 'none (CPU path)'}  ")
    print(f"GStreamer {gst_version()}; CPU: {cpu_name()}, {os.cpu_count()} cores; "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}\n")
    print("| case | wall (s) | clips/min | vs -j 1 | vs decode only, 4 at a time | target | met |")
    print("|---|---:|---:|---:|---:|---|---|")
    targets = {}
    if "j4" in rows:
        goals = []
        if "j1" in rows:
            goals.append(cpm("j4") / cpm("j1") >= 3)
        if "dec4" in rows:
            goals.append(cpm("j4") / cpm("dec4") >= 0.9)
        targets["j4"] = ("vs -j 1 >= 3x; vs decode only >= 0.9x",
                         None if len(goals) < 2 else (goals[0] and goals[1]), goals)
    if "g2" in rows and "j4" in rows:
        targets["g2"] = (">= 1.8x -j 4 --gpus 0", cpm("g2") / cpm("j4") >= 1.8, [])
    for k in CASES:
        if k not in rows:
            continue
        label, wall, _ = rows[k]
        t, met, parts = targets.get(k, ("", None, []))
        extra = {"g2": f" ({ratio(k, 'j4')} -j 4)", "j8": f" ({ratio(k, 'j4')} -j 4)",
                 "dec8": f" ({ratio(k, 'dec4')} decode only, 4 at a time)",
                 "dec8g2": f" ({ratio(k, 'dec4')} decode only, 4 at a time)"}.get(k, "")
        if met is None:
            verdict = ""
        elif len(parts) == 2 and parts[0] != parts[1]:
            verdict = f"not met ({'vs -j 1 met' if parts[0] else 'vs -j 1 not met'}, " \
                      f"{'vs decode only met' if parts[1] else 'vs decode only not met'})"
        else:
            verdict = "met" if met else "not met"
        print(f"| {label} | {wall:.2f} | {cpm(k):.1f} | {ratio(k, 'j1')}{extra} | {ratio(k, 'dec4')} | {t} | {verdict} |")
    print("\nUtilisation during each case (nvidia-smi, every 200 ms; CPU: user + system of its processes):")
    for k, (label, _, util) in rows.items():
        print(f"- {label}: {util}")


def decoder_for_gpu(decoder, gpu):
    """The NVDEC decoder of GPU `gpu` (nvh264dec -> nvh264device1dec), as the tool's --gpus names it."""
    if gpu == 0:
        return decoder
    m = re.fullmatch(r"nv(\w+?)dec", decoder)
    return f"nv{m.group(1)}device{gpu}dec" if m else decoder


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


if __name__ == "__main__":
    main()
