"""One picture per system page: what each environment's agent sees at one decision.

Each environment is reset with key 0 and stepped with the system page's "Try it" rule (the
first allowed action) for a few decisions, then its observation is drawn with its action mask:

    PYTHONPATH=. .venv/bin/python benchmarks/docs/draw_observations.py [--out docs/img]

writes ``observation-<system>.png`` for rlscheduler, schedinspector, splitwindow, dras (needs
``../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz``) and a2cscheduler. A few seconds of
compilation per environment on a CPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout

REPO = Path(__file__).resolve().parents[2]
SDSC = REPO.parent / "shared" / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"


def _envs():
    import jaxsched.sim  # noqa: F401  (float64 and int64)
    from jaxsched.envs import DataCenterEnv, RLSchedulerEnv
    from jaxsched.envs.dras import DRASEnv
    from jaxsched.envs.schedinspector import SchedInspectorEnv
    from jaxsched.envs.splitwindow import SplitWindowEnv
    from jaxsched.workload import read_swf
    from jaxsched.workload.cqsim import load_cqsim

    lublin = REPO / "traces" / "lublin-1.swf"
    jobs = read_swf(lublin).jobs("rlscheduler")
    return {
        "rlscheduler": (RLSchedulerEnv(jobs, length=256, backfill="none", compat=True), 60),
        "schedinspector": (SchedInspectorEnv.from_trace(read_swf(lublin), base="sjf"), 40),
        "splitwindow": (SplitWindowEnv(jobs, head=10, tail=10, placements=200, mask=True), 60),
        "dras": (DRASEnv(load_cqsim(SDSC), length=256), 40),
        "a2cscheduler": (DataCenterEnv(rate=0.7, mask_invalid=True), 15),
    }


def observe(env, steps: int):
    """The observation after ``steps`` decisions of the first allowed action."""
    import jax
    import jax.numpy as jnp

    step = jax.jit(env.step)
    state, ts = env.reset(jax.random.PRNGKey(0))
    for _ in range(steps):
        state, ts = step(state, jnp.argmax(ts.observation.mask))
    return ts.observation


def draw(name: str, ob, path: Path) -> Path:
    import numpy as np

    from jaxsched.plots import pyplot, save_png

    plt = pyplot()
    mask = np.asarray(ob.mask)
    arr = np.asarray(ob.image if name == "a2cscheduler" else ob.obs, np.float64)
    fig, (ax, mx) = plt.subplots(1, 2, figsize=(9, 3.6), gridspec_kw={"width_ratios": [6, 1]})
    title = f"{name}: observation {tuple(arr.shape)}"
    if name == "dras":  # raw node counts and seconds, as the paper's network reads them
        arr, title = np.log10(1.0 + np.abs(arr)), title + ", log10(1 + |value|)"
    if arr.ndim == 1:
        ax.bar(np.arange(arr.size), arr, color="tab:blue")
        ax.set_xlabel("feature")
    else:
        tall = arr.shape[0] > arr.shape[1] * 4  # rows of a few features: draw them as columns
        im = ax.imshow(arr.T if tall else arr, aspect="auto", cmap="viridis",
                       interpolation="nearest")  # fmt: skip
        fig.colorbar(im, ax=ax, shrink=0.8)
        ax.set_xlabel("row (slot, job or node)" if tall else "column")
        ax.set_ylabel("feature" if tall else "row")
    ax.set_title(title, fontsize=9)
    mx.imshow(mask[:, None].astype(float), aspect="auto", cmap="Greys", vmin=0, vmax=1)
    mx.set_title(f"mask {tuple(mask.shape)}\n(black: allowed)", fontsize=9)
    mx.set_xticks([])
    return save_png(fig, path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(REPO / "docs" / "img"), help="folder for the PNGs")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (env, steps) in _envs().items():
        print("wrote", draw(name, observe(env, steps), out / f"observation-{name}.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
