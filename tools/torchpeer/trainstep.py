#!/usr/bin/env python3
"""Time whole training steps of the authors' PyTorch AFIN trainer.

The peer of afin's BenchmarkTrainStepFull (package afin): the same network
widths (afin's "paper" or "small" config, Gaussian decoder), one
micro-batch of TASKS tasks at a fixed (d, N), and a step made of what the
authors' train() does per step: simulate the batch (sample_task_batch,
whitened_like designs), forward, loss, backward, gradient clipping at 5,
AdamW, the LR scheduler and the EMA update. Their modules are imported
from --src (a checkout's src/ directory); nothing of theirs is copied here.

Prints one JSON line: per-step wall and CPU seconds and the tasks/s of the
timed steps (wall and CPU time), plus the BLAS PyTorch was built with.
"""
import argparse
import json
import sys
import time

# afin's arch.PaperConfig / arch.SmallConfig in the authors' keyword names
# (their merge blocks are merge_num_layers; the merge maps take
# max(2, box_num_layers) layers, which is afin's MergeL for both configs).
CONFIGS = {
    "paper": dict(feat_dim=40, adapter_hidden_dim=64, adapter_num_layers=2,
                  box_hidden_dim=192, box_num_layers=3, box_depth=4,
                  merge_model_dim=192, merge_num_layers=4,
                  decoder_hidden_dim=160, decoder_num_layers=3,
                  flow_hidden_dim=32, flow_context_dim=160, flow_num_layers=3, flow_num_steps=4),
    "small": dict(feat_dim=16, adapter_hidden_dim=32, adapter_num_layers=2,
                  box_hidden_dim=32, box_num_layers=3, box_depth=2,
                  merge_model_dim=32, merge_num_layers=1,
                  decoder_hidden_dim=32, decoder_num_layers=3,
                  flow_hidden_dim=32, flow_context_dim=48, flow_num_layers=3, flow_num_steps=4),
}


def blas_in_use():
    """The BLAS libraries mapped into this process and, for OpenBLAS, the
    core its kernels were chosen for (OPENBLAS_CORETYPE can force one)."""
    import ctypes
    libs = set()
    with open("/proc/self/maps") as f:
        for ln in f:
            path = ln.split()[-1]
            if "blas" in path.lower():
                libs.add(path)
    core = None
    for path in sorted(libs):
        try:
            fn = ctypes.CDLL(path).openblas_get_corename
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_char_p
        core = fn().decode()
        break
    return {"blas_libs": sorted(libs), "openblas_core": core}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", required=True, help="the authors' src/ directory (joohwanko/AFINs)")
    p.add_argument("--config", choices=sorted(CONFIGS), default="paper")
    p.add_argument("--tasks", type=int, default=8)
    p.add_argument("--d", type=int, default=8)
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--steps", type=int, default=3, help="timed steps")
    p.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    sys.path.insert(0, a.src)
    import torch
    from afin.model import AFIN, EMA
    from afin.tasks import make_exp_type, sample_task_batch
    from afin.train import Objective, build_lr_scheduler, freeze_inactive_flow_for_gaussian

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    exp = make_exp_type(a.d, a.d, a.n, a.n, posterior_family="gaussian")
    model = AFIN(exp_type=exp, **CONFIGS[a.config])
    ema = EMA(model, decay=0.999, update_after_step=200)
    freeze_inactive_flow_for_gaussian(model)
    freeze_inactive_flow_for_gaussian(ema.module)
    objective = Objective(model)
    trainable = [q for q in objective.parameters() if q.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=2e-4, weight_decay=1e-4)
    sched = build_lr_scheduler(opt, 2e-4, 100000, 1000)
    spec = {"d": a.d, "N": a.n, "x_mode": "whitened_like", "x_kappa_max": 40.0}
    objective.train()

    def step(i):
        model.set_flow_strength(1.0)
        opt.zero_grad(set_to_none=True)
        batch = sample_task_batch(batch_size=a.tasks, exp_type=exp, device="cpu", spec=spec)
        loss = objective(batch).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 5.0)
        opt.step()
        sched.step()
        ema.update(model, i)
        return float(loss.item())

    for i in range(a.warmup):
        step(i)
    wall, cpu = [], []
    for i in range(a.warmup, a.warmup + a.steps):
        w0, c0 = time.perf_counter(), time.process_time()
        step(i)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    blas = blas_in_use()
    print(json.dumps({
        "config": a.config, "tasks": a.tasks, "d": a.d, "N": a.n, "threads": torch.get_num_threads(),
        "params": sum(q.numel() for q in trainable), "torch": torch.__version__, **blas,
        "wall_s": wall, "cpu_s": cpu,
        "tasks_per_s": a.tasks * len(wall) / sum(wall),
        "tasks_per_cpu_s": a.tasks * len(cpu) / sum(cpu),
    }))


if __name__ == "__main__":
    main()
