#!/usr/bin/env python3
"""Interleave afin's BenchmarkTrainStepFull with the authors' PyTorch
trainer (trainstep.py) per matrix kernel, round after round, and print
tasks/s of both sides with the ratio: best of the rounds and median.

Each afin kernel is paired with the PyTorch build that a machine offering
only that instruction set would run: avx512 with OpenBLAS's own choice
for this CPU, avx2 with OPENBLAS_CORETYPE=Haswell, generic with
OPENBLAS_CORETYPE=Nehalem and ATEN_CPU_CAPABILITY=default (SSE only).
Both sides run one thread (GOMAXPROCS=1, torch.set_num_threads(1),
OPENBLAS_NUM_THREADS=1).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

PEER_ENV = {
    "avx512": {},
    "avx2": {"OPENBLAS_CORETYPE": "Haswell"},
    "generic": {"OPENBLAS_CORETYPE": "Nehalem", "ATEN_CPU_CAPABILITY": "default"},
}


def run_afin(test_bin, kernel, config, tasks, steps):
    env = dict(os.environ, GOMAXPROCS="1", OPENBLAS_NUM_THREADS="1", GOMLX_BACKEND="go")
    name = f"TrainStepFull/{config}/tasks={tasks},"
    out = subprocess.run(
        [test_bin, "-test.run", "^$", "-test.bench", name, "-test.benchtime", f"{steps}x",
         "-test.cpu", "1", "-gemm=" + kernel],
        env=env, capture_output=True, text=True, check=True).stdout
    wall = re.search(r"([\d.]+) tasks/s\b", out)
    cpu = re.search(r"([\d.]+) tasks/cpu-s", out)
    if not wall or not cpu:
        sys.exit(f"compare: no result from {test_bin} for {name} under {kernel}:\n{out}")
    return float(wall.group(1)), float(cpu.group(1))


def run_torch(src, kernel, config, tasks, steps, python):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", **PEER_ENV[kernel])
    out = subprocess.run(
        [python, os.path.join(HERE, "trainstep.py"), "--src", src, "--config", config,
         "--tasks", str(tasks), "--steps", str(steps)],
        env=env, capture_output=True, text=True, check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return r["tasks_per_s"], r["tasks_per_cpu_s"], r["openblas_core"]


def print_table(cases, res):
    print("config tasks (d,N)  kernel   peer core     rounds |  wall tasks/s best: afin torch ratio | median: afin torch ratio"
          "  ||  CPU-time tasks/s best: afin torch ratio | median: afin torch ratio")
    for c in cases:
        config, tasks, kernel, steps = c
        r = res[c]
        row = [f"{config:6s} {tasks:3d} (8,64)  {kernel:7s}  {r['core']:12s} {len(r['afin']):3d}"]
        for a_key, t_key in (("afin", "torch"), ("afin_cpu", "torch_cpu")):
            ab, tb = max(r[a_key]), max(r[t_key])
            am, tm = statistics.median(r[a_key]), statistics.median(r[t_key])
            row.append(f"{ab:7.2f} {tb:7.2f} {ab / tb:5.2f}x | {am:7.2f} {tm:7.2f} {am / tm:5.2f}x")
        print("  ||  ".join(row))


def from_records(paths):
    """Cases and results from --jsonl files of earlier runs."""
    cases, res = [], {}
    for path in paths:
        with open(path) as f:
            for ln in f:
                rec = json.loads(ln)
                c = (rec["config"], rec["tasks"], rec["kernel"], rec["steps"])
                if c not in res:
                    cases.append(c)
                    res[c] = {"afin": [], "afin_cpu": [], "torch": [], "torch_cpu": [], "core": None}
                r = res[c]
                r["afin"].append(rec["afin_tasks_per_s"]); r["afin_cpu"].append(rec["afin_tasks_per_cpu_s"])
                r["torch"].append(rec["torch_tasks_per_s"]); r["torch_cpu"].append(rec["torch_tasks_per_cpu_s"])
                r["core"] = rec["openblas_core"]
    return cases, res


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--afin-test", help="go test -c -o X ./afin/train binary")
    p.add_argument("--src", help="the authors' src/ directory")
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--case", action="append",
                   help="config:tasks:kernel:steps, e.g. paper:8:avx2:1 (repeatable)")
    p.add_argument("--jsonl", help="append every measurement here")
    p.add_argument("--table", nargs="+", metavar="JSONL", help="only print the table of earlier runs' --jsonl files")
    a = p.parse_args()
    if a.table:
        print_table(*from_records(a.table))
        return
    if not (a.afin_test and a.case):
        p.error("--afin-test and at least one --case are needed to measure")
    if not a.src:
        # CI has no checkout of the authors' code: it still runs afin's
        # side, so the task and this script cannot rot unseen.
        print("compare: no --src: afin's side only, the PyTorch trainer is not run", file=sys.stderr)

    cases = []
    for c in a.case:
        config, tasks, kernel, steps = c.split(":")
        cases.append((config, int(tasks), kernel, int(steps)))
    res = {c: {"afin": [], "afin_cpu": [], "torch": [], "torch_cpu": [], "core": None} for c in cases}
    log = open(a.jsonl, "a") if a.jsonl else None
    for rnd in range(a.rounds):
        for c in cases:
            config, tasks, kernel, steps = c
            w, cpu = run_afin(a.afin_test, kernel, config, tasks, steps)
            tw, tcpu, core = float("nan"), float("nan"), "-"
            if a.src:
                tw, tcpu, core = run_torch(a.src, kernel, config, tasks, steps, a.python)
            r = res[c]
            r["afin"].append(w); r["afin_cpu"].append(cpu)
            r["torch"].append(tw); r["torch_cpu"].append(tcpu); r["core"] = core
            rec = dict(round=rnd, config=config, tasks=tasks, kernel=kernel, steps=steps,
                       afin_tasks_per_s=w, afin_tasks_per_cpu_s=cpu,
                       torch_tasks_per_s=tw, torch_tasks_per_cpu_s=tcpu, openblas_core=core)
            print(json.dumps(rec), file=sys.stderr, flush=True)
            if log:
                print(json.dumps(rec), file=log, flush=True)

    print_table(cases, res)

if __name__ == "__main__":
    main()
