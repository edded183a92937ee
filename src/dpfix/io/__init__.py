"""Floor 6, io: tables on disk, the atomic commit of outputs, reports, the Dask engine.

- :mod:`dpfix.io.tables`: reading counts from CSV, Parquet and histogram files,
  writing the privatized table, the shared data folder;
- :mod:`dpfix.io.commit`: outputs staged and committed atomically, with signals held
  while they are renamed into place;
- :mod:`dpfix.io.reports`: the public and the confidential reports, summaries, plots;
- :mod:`dpfix.io.engines`: the same release on tables beyond one machine (Dask).

May import: every floor below, and on its own floor :mod:`dpfix.release` (no module
cycle: the readers and the commit import no release module).
"""
