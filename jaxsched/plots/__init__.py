"""Pictures of schedules (host side, matplotlib — the optional ``plot`` extra).

:mod:`jaxsched.plots.schedule`: a schedule's Gantt chart over its utilisation and queue time
series (``jaxsched plot schedule FILE``), and the wait distributions of several schedules of the
same jobs side by side (``jaxsched plot compare FILE FILE …``). Training curves are drawn by
each system (``jaxsched plot DIR``)."""
