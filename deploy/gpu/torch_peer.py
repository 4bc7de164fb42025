#!/usr/bin/env python3
"""Times the authors' PyTorch trainer (joohwanko/AFINs) for afin's GPU bench.

It runs K optimiser steps of their own `afin.train.train()`, configured by
their own CLI parser (`afin.cli.parse_args`), so the model, the task sampler,
the (d, N) mixture, AMP, checkpointing, AdamW, clipping and EMA are theirs,
not a re-implementation. Only two hooks are added, to time the steps:

  * the model class is subclassed so that `set_flow_strength`, which their
    loop calls first in every iteration, marks a step boundary (after a
    device synchronise) and stops the run when the wall-clock budget is
    spent;
  * the LR scheduler is wrapped so that each `scheduler.step()`, which their
    loop calls once per applied optimiser step, is counted; an iteration
    without it was skipped by their SPD-failure guard.

Their package must be importable from --src (default: peer/AFINs/src next
to this file, filled by fetch_peer.sh). Their stdout is sent to stderr;
stdout carries one JSON object only.
"""
import argparse
import contextlib
import json
import os
import sys
import time

PAPER_FLAGS = []  # their CLI defaults are the paper's network (d<=16, N<=256)
TINY_FLAGS = [
    "--feat-dim", "8", "--hidden-dim", "16", "--adapter-hidden-dim", "8",
    "--box-hidden-dim", "16", "--box-depth", "1", "--merge-model-dim", "16",
    "--merge-num-layers", "1", "--flow-hidden-dim", "8",
    "--d-max", "4", "--n-max", "16",
]
CONFIGS = {"paper": PAPER_FLAGS, "tiny": TINY_FLAGS}


class BudgetSpent(Exception):
    """Raised at a step boundary once --max-seconds has passed."""


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", default=os.path.join(here, "peer", "AFINs", "src"),
                   help="folder holding their afin package (fetch_peer.sh fills the default)")
    p.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    p.add_argument("--steps", type=int, default=20, help="optimiser steps to run")
    p.add_argument("--max-seconds", type=float, default=0.0,
                   help="stop at the first step boundary after this many seconds (0: no limit)")
    p.add_argument("--config", choices=sorted(CONFIGS), default="paper")
    p.add_argument("--posterior-family", choices=["gaussian", "flow"], default="gaussian")
    p.add_argument("--batch", type=int, default=32, help="tasks per micro-batch (their --batch-size)")
    p.add_argument("--micro-batches", type=int, default=4, help="their --task-microbatches")
    p.add_argument("--no-amp", action="store_true", help="float32 instead of their bf16 AMP")
    p.add_argument("--no-checkpoint-flags", action="store_true",
                   help="drop their --encoder-checkpoint --merge-checkpoint")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.steps < 1 or a.batch < 1 or a.micro_batches < 1:
        p.error("--steps, --batch and --micro-batches must be at least 1")
    if a.max_seconds < 0:
        p.error("--max-seconds must not be negative")
    return a


def their_flags(a):
    """Their CLI argv for this run: the config's widths plus our choices."""
    flags = list(CONFIGS[a.config])
    flags += ["--posterior-family", a.posterior_family,
              "--batch-size", str(a.batch), "--task-microbatches", str(a.micro_batches),
              "--num-steps", str(a.steps), "--seed", str(a.seed),
              "--amp", "off" if a.no_amp else "bf16"]
    if not a.no_checkpoint_flags:
        flags += ["--encoder-checkpoint", "--merge-checkpoint"]
    return flags


def import_theirs(src):
    if not os.path.isfile(os.path.join(src, "afin", "train.py")):
        raise SystemExit(f"torch_peer.py: no afin/train.py under {src}; run deploy/gpu/fetch_peer.sh first")
    sys.path.insert(0, src)
    import torch
    shims = []
    # Their trainer calls torch.amp.GradScaler("cuda", ...), new in PyTorch
    # 2.3; an older CPU-only torch (Debian's 1.13) lacks it. The scaler is
    # disabled unless --amp fp16, which this driver never asks for.
    if not hasattr(torch.amp, "GradScaler"):
        torch.amp.GradScaler = lambda _device, **kw: torch.cuda.amp.GradScaler(**kw)
        shims.append("torch.amp.GradScaler -> torch.cuda.amp.GradScaler")
    from afin import cli, train as their_train
    return torch, cli, their_train, shims


class Clock:
    """Step boundaries and applied optimiser steps, seen through the hooks."""

    def __init__(self, torch, device, max_seconds):
        self.torch, self.device, self.max_seconds = torch, device, max_seconds
        self.marks, self.applied, self.start, self.model = [], 0, None, None

    def sync(self):
        if str(self.device).startswith("cuda"):
            self.torch.cuda.synchronize(self.device)

    def boundary(self, last=False):
        self.sync()
        now = time.perf_counter()
        self.marks.append(now)
        if not last and len(self.marks) > 1 and self.max_seconds > 0 and now - self.start >= self.max_seconds:
            raise BudgetSpent()


def install_hooks(torch, their_train, clock):
    base = their_train.AFIN

    class TimedAFIN(base):
        def set_flow_strength(self, value):
            clock.model = self
            clock.boundary()
            return super().set_flow_strength(value)

    real_build = their_train.build_lr_scheduler

    def build_lr_scheduler(*args, **kwargs):
        sched = real_build(*args, **kwargs)
        real_step = sched.step

        def step(*a, **kw):
            clock.applied += 1
            return real_step(*a, **kw)

        sched.step = step
        clock.sync()
        clock.start = time.perf_counter()  # model, EMA and optimiser are built
        return sched

    their_train.AFIN = TimedAFIN
    their_train.build_lr_scheduler = build_lr_scheduler


def their_config(cli, their_train, argv):
    """Their parsed CLI args, experiment type and model kwargs for argv."""
    saved = sys.argv
    sys.argv = ["afin.cli"] + argv
    try:
        args = cli.parse_args()
    finally:
        sys.argv = saved
    exp_type = cli.make_exp_type(
        d_min=args.d_min, d_max=args.d_max, n_min=args.n_min, n_max=args.n_max,
        posterior_family=args.posterior_family,
        prior_families=args.prior_families, likelihood_families=args.likelihood_families,
    )
    return args, exp_type, their_train.build_model_kwargs(args)


def run_theirs(torch, their_train, args, exp_type, model_kwargs, device):
    torch.manual_seed(args.seed)
    if str(device).startswith("cuda"):
        torch.cuda.manual_seed_all(args.seed)
    # Exactly the keyword arguments their cli.main passes, without the eval
    # suite, run directory and wandb (no evaluation, no saving, no logging
    # service), and with log_every past the run so they print only twice.
    their_train.train(
        exp_type=exp_type, model_kwargs=model_kwargs, amp_mode=args.amp, lr=args.lr, wd=args.wd,
        num_steps=args.num_steps, warmup_steps=args.warmup_steps, batch_size=args.batch_size,
        log_every=max(1, args.num_steps), device=device, eval_suite=None, eval_every=args.eval_every,
        eval_num_samples=args.eval_num_samples, eval_sample_chunk_size=args.eval_sample_chunk_size,
        task_microbatches=args.task_microbatches, use_ema=args.ema, run_dir=None,
        save_every=args.save_every, wandb_run=None, flow_start_step=args.flow_start_step,
        flow_warmup_steps=args.flow_warmup_steps, flow_max_strength=args.flow_max_strength,
        hard_bias_prob=args.hard_bias_prob, hard_d_alpha=args.hard_d_alpha,
        hard_n_alpha=args.hard_n_alpha, train_x_kappa_max=args.train_x_kappa_max,
        use_ddp=False, ddp_local_rank=0,
    )


def summarise(a, args, exp_type, model_kwargs, clock, torch, device, stopped, error, shims, src):
    marks = clock.marks
    iters = max(0, len(marks) - 1)
    per_step = a.batch * a.micro_batches
    total = marks[-1] - clock.start if marks and clock.start is not None else None
    first = marks[1] - clock.start if len(marks) > 1 else None
    cuda = str(device).startswith("cuda")
    rev_path = os.path.join(os.path.dirname(os.path.abspath(src)), "REVISION")
    rev = open(rev_path).read().strip() if os.path.isfile(rev_path) else None
    amp = None if a.no_amp or not cuda else "bf16"  # their resolve_amp_dtype: AMP on CUDA only
    rec = {
        "trainer": "joohwanko/AFINs afin.train.train",
        "revision": rev,
        "steps": iters,
        "optimizer_steps_applied": clock.applied,
        "steps_skipped": iters - clock.applied,
        "steps_asked": a.steps,
        "tasks_per_step": per_step,
        "tasks": iters * per_step,
        "seconds_total": total,
        "seconds_first_step": first,
        "tasks_per_s": iters * per_step / total if total else None,
        "tasks_per_s_after_first": ((iters - 1) * per_step / (total - first)
                                    if iters > 1 and total > first else None),
        "stopped": stopped,
        "error": error,
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if cuda else "cpu",
        "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if cuda else None,
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(device) if cuda else None,
        "torch_version": torch.__version__,
        "amp": amp,
        "shims": shims,
        "config": {
            "name": a.config, "posterior_family": a.posterior_family,
            "batch": a.batch, "micro_batches": a.micro_batches,
            "encoder_checkpoint": bool(args.encoder_checkpoint),
            "merge_checkpoint": bool(args.merge_checkpoint),
            "d": [exp_type.d_min, exp_type.d_max],
            "N": [exp_type.N_min, exp_type.N_max],
            "hard_bias_prob": args.hard_bias_prob,
            "ema": bool(args.ema),
            "model_kwargs": model_kwargs,
        },
    }
    return rec


def main(argv):
    a = parse_args(argv)
    torch, cli, their_train, shims = import_theirs(a.src)
    device = a.device
    if device == "cuda":
        # torch.cuda.set_device refuses a device without an index (seen on
        # the H100: "Expected a torch.device with a specified index").
        device = "cuda:0"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise SystemExit("torch_peer.py: --device cuda but torch sees no CUDA device")
        torch.cuda.set_device(torch.device(device))
        torch.cuda.reset_peak_memory_stats(device)
    clock = Clock(torch, device, a.max_seconds)
    install_hooks(torch, their_train, clock)
    args, exp_type, model_kwargs = their_config(cli, their_train, their_flags(a))
    stopped, error = "steps", None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            run_theirs(torch, their_train, args, exp_type, model_kwargs, device)
        clock.boundary(last=True)  # the end of the last step, its EMA update included
    except BudgetSpent:
        stopped = "max_seconds"
    except getattr(torch.cuda, "OutOfMemoryError", MemoryError) as exc:  # without their flags it may not fit
        stopped, error = "out_of_memory", str(exc).splitlines()[0]
    rec = summarise(a, args, exp_type, model_kwargs, clock, torch, device, stopped, error, shims, a.src)
    if clock.model is not None:  # their "#params" line counts all; the paper's 4.55M is the trainable part
        rec["params"] = sum(p.numel() for p in clock.model.parameters())
        rec["params_trainable"] = sum(p.numel() for p in clock.model.parameters() if p.requires_grad)
    print(json.dumps(rec, sort_keys=True))
    return 3 if error else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
