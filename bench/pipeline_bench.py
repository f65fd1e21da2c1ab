#!/usr/bin/env python3
"""What cudatensorize and cudatemplatematch cost inside a real pipeline (NVDEC decode, fakesink).

Every case is one gst-launch-1.0 process, run side by side with the decode-only pipeline:
  - latency: the time each buffer spends inside the element, median and p90 over every buffer
    (all instances of an element pooled), from one run: --latency=tracer runs gst-launch-1.0 under
    GStreamer's latency tracer (flags=element); --latency=probes runs build/bench/element_latency
    (pad probes), for GStreamer builds whose latency tracer hangs pipelines (1.26.2). Default: the tracer
    on GStreamer < 1.24, probes on newer;
  - thread CPU (probes only): the streaming thread's CPU time between a buffer's arrival and its
    push, median and p90: what the element itself costs per buffer, without the noise of the
    whole process (n/a where the output leaves from another thread, as an aggregator's does);
  - CPU: user + system time of the process (rusage), minus the baseline's, per decoded frame;
  - wall: the whole process, best of --runs (it is noisy), minus the baseline's, per frame.
The multi-stream cases put --streams independent pipelines (4) into one gst-launch; their
throughput is compared with as many decode-only pipelines. First, where build/bench/host_floor exists (CUDA builds), the
host's floor under the elements' thread CPU on this machine, now: tensorize's launch call and the
matcher's match() alone, back to back and after 2 ms asleep (bench/host_floor.cpp). Every process is stopped after --timeout seconds (a hang ends the
run with one message). Prints one markdown table last.
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

LATENCY_LINE = re.compile(r"element-latency, .*?element=\(string\)([^,]+), .*?time=\(guint64\)(\d+)")
PROBE_LINE = re.compile(r"^(\S+)\* n=(\d+) median_us=(\S+) p90_us=(\S+) cpu_median_us=(\S+) cpu_p90_us=(\S+)$", re.M)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clip", required=True, help="1080p H.264 MP4 (bench/make_pipeline_clip.sh)")
    p.add_argument("--frames", type=int, default=540, help="frames in the clip")
    p.add_argument("--runs", type=int, default=3, help="timed runs per case (best wall time kept)")
    p.add_argument("--decoder", default="nvh264dec", help="decoder (avdec_h264 to try it without a GPU)")
    p.add_argument("--memory", default="(memory:CUDAMemory)", help="caps feature of decoded frames ('' for system)")
    p.add_argument("--element-args", default="", help="extra properties of both elements (e.g. backend=cpu)")
    p.add_argument("--only", action="append", default=[], help="a case to run (repeatable; default: all)")
    p.add_argument("--streams", type=int, default=4, help="streams of the multi-stream cases")
    p.add_argument("--wall-only", action="store_true", help="throughput only: no element latency run")
    p.add_argument("--latency", choices=["tracer", "probes"],
                   help="how element latency is measured (default: tracer on GStreamer < 1.24, else probes)")
    p.add_argument("--probe-bin", help="element_latency program (default: next to the plugin in GST_PLUGIN_PATH, "
                                       "or build/bench/element_latency)")
    p.add_argument("--floor-bin", help="host_floor program (default: next to element_latency); 'none' skips it")
    p.add_argument("--timeout", type=float, default=300, help="seconds before a pipeline counts as hung")
    a = p.parse_args()
    a.latency = a.latency or ("tracer" if gst_version() < (1, 24) else "probes")
    if a.floor_bin is None:
        a.floor_bin = os.path.join(os.path.dirname(a.probe_bin or find_probe_bin()), "host_floor")
    if a.latency == "probes" and not a.wall_only:
        a.probe_bin = a.probe_bin or find_probe_bin()
        if not os.access(a.probe_bin, os.X_OK):
            sys.exit(f"no element_latency program at {a.probe_bin}: build it (ninja -C build bench/element_latency) "
                     "or name it with --probe-bin")
    return a


def gst_version():
    """(major, minor) of the gst-launch-1.0 on PATH."""
    out = subprocess.run(["gst-launch-1.0", "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"GStreamer (\d+)\.(\d+)", out)
    if not m:
        sys.exit(f"cannot tell the GStreamer version from gst-launch-1.0 --version: {out!r}")
    return int(m.group(1)), int(m.group(2))


def find_probe_bin():
    """element_latency of the build whose plugin GST_PLUGIN_PATH names (BUILD/gst -> BUILD/bench)."""
    for d in filter(None, os.environ.get("GST_PLUGIN_PATH", "").split(os.pathsep)):
        candidate = os.path.join(os.path.dirname(os.path.abspath(d)), "bench", "element_latency")
        if os.access(candidate, os.X_OK):
            return candidate
    return os.path.join(REPO, "build", "bench", "element_latency")


# Where the bank cases cut their eight 64 px templates from the clip's first frame (textured parts
# of the street scene).
BANK_CORNERS = [(1640, 120), (1040, 40), (240, 920), (680, 480), (1600, 480), (1280, 320), (1360, 40), (1240, 680)]


def bank_templates(a, _made={}):
    """The bank cases' templates: PGM files cut from the clip's first decoded frame (made once)."""
    if "files" not in _made:
        folder = f"/tmp/cudaprep-bench-templates-{os.getpid()}"
        os.makedirs(folder, exist_ok=True)
        raw = os.path.join(folder, "frame.gray")
        run(a, f"filesrc location={a.clip} ! qtdemux ! h264parse ! {a.decoder} ! identity eos-after=1 ! videoconvert ! "
               f"video/x-raw,format=GRAY8,width=1920,height=1080 ! filesink location={raw}")
        with open(raw, "rb") as f:
            frame = f.read(1920 * 1080)
        if len(frame) != 1920 * 1080:
            sys.exit(f"the clip's first frame is not 1920x1080 gray ({len(frame)} bytes)")
        files = []
        for i, (x, y) in enumerate(BANK_CORNERS):
            path = os.path.join(folder, f"t{i}.pgm")
            with open(path, "wb") as f:
                f.write(b"P5\n64 64\n255\n" + b"".join(frame[(y + j) * 1920 + x:(y + j) * 1920 + x + 64]
                                                         for j in range(64)))
            files.append(path)
        _made["files"] = files
    return _made["files"]


def cases(a):
    """(name, element name prefixes whose latency is reported, branch builder, streams[, head]);
    head: elements the streams' branches link into (an aggregator), put first."""
    x = a.element_args
    tensor_cuda = "'other/tensors(memory:CUDAMemory)'"
    tensor_sys = "other/tensors"
    tz = lambda n, extra="", caps=tensor_cuda: f"cudatensorize name=tz{n} {x} {extra} ! {caps} ! fakesink"
    tm = lambda n, side, draw, extra="": (f"cudatemplatematch name=tm{n} {x} {extra} template-rect=\"<{760 - side // 2},"
                                          f"{400 - side // 2},{side},{side}>\" draw={draw} ! fakesink")
    both = lambda n: (f"tee name=t{n} t{n}. ! queue ! {tz(n)} "
                      f"t{n}. ! queue ! {tm(n, 64, 'true')}")
    # Batches: the streams into one cudatensorbatch (one launch a batch), and 16 regions of each
    # frame as one 16-slot batch of 224x224 crops (a second stage's input).
    batch_head = f"cudatensorbatch name=tb {x} ! {tensor_cuda} ! fakesink "
    rois = "<" + ",".join(f"<{40 + 110 * (i % 4) * 4},{60 + 250 * (i // 4)},{32 + 24 * i},{32 + 22 * i}>"
                          for i in range(16)) + ">"
    regions = lambda n: tz(n, f'width=224 height=224 batch-size=16 rois="{rois}"')
    # A second stage over every camera: 8 regions of each stream's frames, all in one batch of
    # 8 x streams 224x224 crops, against one cudatensorize a stream (a batch of 8 each).
    rois8 = "<" + ",".join(f"<{40 + 200 * i},{40 + 90 * i},{32 + 48 * i},{32 + 40 * i}>" for i in range(8)) + ">"
    s = a.streams
    crops = "width=224 height=224"
    # Eight templates: one element with all of them against a chain of eight single-template elements.
    bank_one = lambda n: (f"cudatemplatematch name=tm{n} {x} templates=\"{';'.join(bank_templates(a))}\" "
                          f"draw=false ! fakesink")
    bank_chain = lambda n: " ! ".join(f"cudatemplatematch name=tm{n}_{i} {x} template-location={f} draw=false"
                                      for i, f in enumerate(bank_templates(a))) + " ! fakesink"
    crops_head = f"cudatensorbatch name=tc {x} {crops} batch-size={8 * s} " + \
        " ".join(f'sink_{n}::rois="{rois8}"' for n in range(s)) + f" ! {tensor_cuda} ! fakesink "
    return [
        ("decode only", [], lambda n: "fakesink", 1),
        ("tensorize, CUDA tensor", ["tz"], lambda n: tz(n), 1),
        ("tensorize, system-memory tensor", ["tz"], lambda n: tz(n, caps=tensor_sys), 1),
        ("tensorize, system-memory tensor, gpu-wait=blocking", ["tz"],
         lambda n: tz(n, "gpu-wait=blocking", caps=tensor_sys), 1),
        # No padding rows to keep in the pool's buffers: every byte crosses the bus every frame.
        ("tensorize, system-memory tensor, resize-mode=stretch", ["tz"], lambda n: tz(n, "resize-mode=stretch", caps=tensor_sys), 1),
        ("tensorize fp16, CUDA tensor", ["tz"], lambda n: tz(n, "dtype=float16"), 1),
        ("templatematch 64 px, draw=false", ["tm"], lambda n: tm(n, 64, "false"), 1),
        ("templatematch 64 px, draw=true", ["tm"], lambda n: tm(n, 64, "true"), 1),
        # The per-frame bus message wakes the application's thread (a socket write in GstBus):
        # its cost to the streaming thread, the metas alone carrying the matches.
        ("templatematch 64 px, draw=false, post-messages=false", ["tm"],
         lambda n: tm(n, 64, "false", "post-messages=false"), 1),
        ("templatematch 128 px, draw=false", ["tm"], lambda n: tm(n, 128, "false"), 1),
        ("templatematch 128 px, draw=true", ["tm"], lambda n: tm(n, 128, "true"), 1),
        ("templatematch, 8 templates of 64 px in one element", ["tm"], bank_one, 1),
        ("templatematch, 8 elements of one 64 px template each", ["tm"], bank_chain, 1),
        ("both behind a tee", ["tz", "tm"], both, 1),
        (f"{s} streams, decode only", [], lambda n: "fakesink", s),
        (f"{s} streams, both behind a tee", ["tz", "tm"], both, s),
        (f"{s} streams, a cudatensorize each", ["tz"], lambda n: tz(n), s),
        (f"{s} streams, one cudatensorbatch (batch of {s})", ["tb"], lambda n: f"tb.sink_{n}", s, batch_head),
        (f"{s} streams, one cudatensorbatch (batch of {s}), a queue before each pad", ["tb"],
         lambda n: f"queue ! tb.sink_{n}", s, batch_head),
        (f"{s} streams, 8 regions each, a cudatensorize rois each (batch of 8)", ["tz"],
         lambda n: tz(n, f'{crops} batch-size=8 rois="{rois8}"'), s),
        (f"{s} streams, 8 regions each, one cudatensorbatch (batch of {8 * s})", ["tc"], lambda n: f"tc.sink_{n}", s,
         crops_head),
        ("16 regions of each frame, 224x224 crops (batch of 16)", ["tz"], regions, 1),
    ]


def pipeline(a, branch, streams, head=""):
    caps = f"'video/x-raw{a.memory}'"
    return head + " ".join(f"filesrc location={a.clip} ! qtdemux ! h264parse ! {a.decoder} ! {caps} ! {branch(n)}"
                    for n in range(streams))


def run(a, description, tracer=False, program="gst-launch-1.0 -q"):
    """(wall s, cpu s, stdout, stderr) of one process running the pipeline, stopped after a.timeout s."""
    env = dict(os.environ, GST_DEBUG_NO_COLOR="1")
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    if tracer:
        env.update(GST_TRACERS="latency(flags=element)", GST_DEBUG="GST_TRACER:7")
    else:
        env.pop("GST_TRACERS", None)
    t0 = time.monotonic()
    # exec: the shell becomes the program, so wait4's rusage is its own. In a process group of its
    # own, so that a hung pipeline's whole group can be killed.
    p = subprocess.Popen(f"exec {program} {description}", shell=True, env=env, start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hung = threading.Event()
    def kill_hung():
        hung.set()
        os.killpg(p.pid, signal.SIGKILL)
    watchdog = threading.Timer(a.timeout, kill_hung)
    watchdog.start()
    out_reader = threading.Thread(target=lambda: setattr(p, "out_text", p.stdout.read()))
    out_reader.start()
    err = p.stderr.read()
    out_reader.join()
    _, status, usage = os.wait4(p.pid, 0)
    watchdog.cancel()
    wall = time.monotonic() - t0
    rc = p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    name = program.split()[0]
    if hung.is_set():
        sys.exit(f"{name} did not finish within {a.timeout:g} s (--timeout), killed:\n  {description}\n{err[-3000:]}")
    if rc != 0:
        sys.exit(f"{name} failed ({rc}):\n  {description}\n{err[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, p.out_text, err


def tracer_latencies(a, description, prefixes):
    """{prefix: (buffers, median us, p90 us, None, None)} from one run under the latency tracer."""
    _, _, _, err = run(a, description, tracer=True)
    samples = {q: [] for q in prefixes}
    for m in LATENCY_LINE.finditer(err):
        for q in prefixes:
            if m.group(1).startswith(q):
                samples[q].append(int(m.group(2)) / 1000.0)
    return {q: (len(v), statistics.median(v), p90(v), None, None) if v else (0, None, None, None, None)
            for q, v in samples.items()}


def probe_latencies(a, description, prefixes):
    """{prefix: (buffers, median us, p90 us, thread CPU median us, p90 us)} from one run of
    element_latency (pad probes); the CPU figures are None where the element pushes from another
    thread."""
    names = " ".join(f"'--element={q}*'" for q in prefixes)
    _, _, out, _ = run(a, description, program=f"{a.probe_bin} --timeout={a.timeout:.0f} {names}")
    found = {m.group(1): m for m in PROBE_LINE.finditer(out)}
    if set(found) != set(prefixes):
        sys.exit(f"element_latency printed no line for {sorted(set(prefixes) - set(found))}:\n{out}")
    def number(text):
        return None if text == "nan" else float(text)
    return {q: (int(m.group(2)), float(m.group(3)), float(m.group(4)), number(m.group(5)), number(m.group(6)))
            if int(m.group(2)) else (0, None, None, None, None) for q, m in found.items()}


def host_floor(a):
    """host_floor's lines ("host-floor CALL RHYTHM n=... cpu_median_us=..."), or a line saying why
    there are none."""
    if a.floor_bin == "none":
        return []
    if not os.access(a.floor_bin, os.X_OK):
        return [f"(no host floor: no program at {a.floor_bin}; a CUDA build has it)"]
    try:
        p = subprocess.run([a.floor_bin], capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return [f"(no host floor: {a.floor_bin} did not finish within {a.timeout:g} s)"]
    lines = [line for line in p.stdout.splitlines() if line.startswith("host-floor ")]
    if p.returncode != 0 or not lines:  # (no GPU here: the pipelines may still run, on the CPU path)
        return [f"(no host floor: {a.floor_bin} exited {p.returncode}: {p.stderr.strip()[-300:]})"]
    return lines


def p90(v):
    s = sorted(v)
    return s[min(len(s) - 1, int(0.9 * len(s)))]


def main():
    a = parse_args()
    if not os.path.exists(a.clip):
        sys.exit(f"no clip at {a.clip}: make it with bench/make_pipeline_clip.sh")
    only = set(a.only)
    floor = host_floor(a)
    results, baseline = [], {}
    for name, prefixes, branch, streams, *head in cases(a):
        if only and prefixes and name not in only:
            continue
        desc = pipeline(a, branch, streams, *head)
        measure = probe_latencies if a.latency == "probes" else tracer_latencies
        lat = measure(a, desc, prefixes) if prefixes and not a.wall_only else {}
        timed = [run(a, desc)[:2] for _ in range(a.runs)]
        wall = min(t[0] for t in timed)
        cpu = statistics.median(t[1] for t in timed)
        frames = a.frames * streams
        if not prefixes:
            baseline[streams] = (wall, cpu)
        if streams not in baseline:
            sys.exit(f"{name}: its decode-only case runs first (--only keeps every decode-only case)")
        b_wall, b_cpu = baseline[streams]
        results.append((name, streams, lat, wall, cpu, (cpu - b_cpu) / frames * 1e6,
                        (wall - b_wall) / frames * 1e6, b_wall / wall))
        print(f"{name}: wall {wall:.3f} s, cpu {cpu:.3f} s" +
              "".join(f", {q} {v[0]} buffers" for q, v in lat.items()), file=sys.stderr, flush=True)

    print(f"\n{a.frames} frames of {os.path.basename(a.clip)} per stream, decoder {a.decoder}, "
          f"best of {a.runs} runs for wall time (median for CPU); latency from one run "
          f"({'pad probes, bench/element_latency' if a.latency == 'probes' else 'latency tracer'}).\n")
    if floor:
        print("Host floor under the elements' thread CPU, this run (the calls alone in a pushed "
              "context; bench/host_floor):")
        for line in floor:
            print(f"    {line}")
        print()
    print("| case | element latency median / p90 (us) | element thread CPU median / p90 (us) "
          "| CPU added per frame (us) | wall added per frame (us) | throughput vs decode only |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, streams, lat, wall, cpu, cpu_add, wall_add, ratio in results:
        text = "; ".join(f"{q} {v[1]:.0f} / {v[2]:.0f}" for q, v in lat.items() if v[0]) or "—"
        thread = "; ".join(f"{q} {v[3]:.0f} / {v[4]:.0f}" if v[3] is not None else f"{q} n/a"
                           for q, v in lat.items() if v[0]) or "—"
        base = name.endswith("decode only")
        print(f"| {name} | {text} | {thread} | {'(%.3f s total)' % cpu if base else '%.0f' % cpu_add} | "
              f"{'(%.3f s total)' % wall if base else '%.0f' % wall_add} | {'1' if base else '%.3f' % ratio} |")


if __name__ == "__main__":
    main()
