"""The command line's warnings: SWF warnings (problems of the user's file) are kept and printed
as ``jaxsched: warning:`` lines when the command ends; every other warning is shown at once and
not kept (a long run's thousands of library warnings were replayed at its end for minutes)."""

import warnings

from jaxsched.cli import _defer_swf_warnings
from jaxsched.errors import SWFWarning


def test_swf_warnings_kept_others_shown_at_once(monkeypatch):
    shown = []
    monkeypatch.setattr(warnings, "showwarning", lambda m, c, *a, **k: shown.append((str(m), c)))
    with warnings.catch_warnings():
        caught = _defer_swf_warnings()
        warnings.warn("cache write failed", UserWarning, stacklevel=1)
        assert shown == [("cache write failed", UserWarning)]  # at once
        for _ in range(2):  # "always": both kept
            warnings.warn(SWFWarning("f.swf line 3: field 4 negative"), stacklevel=1)
        warnings.warn("cache write failed again", RuntimeWarning, stacklevel=1)
    assert [str(m) for m in caught] == ["f.swf line 3: field 4 negative"] * 2
    assert [c for _, c in shown] == [UserWarning, RuntimeWarning]
    assert warnings.showwarning is not None and len(shown) == 2
