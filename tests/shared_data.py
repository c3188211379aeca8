"""Where the read-only project data (``shared/``: traces, reference numbers, specs) lives.

``$JAXSCHED_SHARED`` if set, else ``shared/`` inside or next to the checkout (CI puts it next
to the clone). Missing data is an error, never a skip: the reference-number tests must run.
"""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    cands = [Path(os.environ["JAXSCHED_SHARED"])] if os.environ.get("JAXSCHED_SHARED") else []
    cands += [REPO / "shared", REPO.parent / "shared", Path("/work/shared")]
    for c in cands:
        if (c / "traces").is_dir() and (c / "reference").is_dir():
            return c
    raise FileNotFoundError("shared/ (traces, reference, spec) not found: set JAXSCHED_SHARED "
                            f"or put it next to the checkout (looked in {', '.join(map(str, cands))})")


SHARED = shared_dir()
