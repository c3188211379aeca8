"""DRAS (Fan et al., IPDPS'21; spec ``dras.md``): its evaluation report (``report.py``) and
plots (``plot.py``).  The system is not registered in ``SYSTEM_MODULES`` yet (no trainer)."""
