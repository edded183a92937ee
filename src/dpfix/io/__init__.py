"""Floor 6, io: tables on disk, the atomic commit of outputs, reports as files.

- :mod:`dpfix.io.tables`: reading counts from CSV, Parquet and histogram files,
  writing the privatized table;
- :mod:`dpfix.io.data`: the shared data sets and the synthetic table of the demos;
- :mod:`dpfix.io.commit`: outputs staged and committed atomically, with signals held
  while they are renamed into place;
- :mod:`dpfix.io.reports`: JSON files of reports, the format of a figure file, the text
  summaries of ``dpfix explore``.

io reads and writes; what a release decides (the row order, the reports' contents, the
engines) is :mod:`dpfix.release`'s, on the floor above.

May import: every floor below (:mod:`dpfix.numbers`, :mod:`dpfix.sampling`,
:mod:`dpfix.theory`, :mod:`dpfix.constructors`, :mod:`dpfix.certify`,
:mod:`dpfix.explore`); nothing on a floor above.
"""
