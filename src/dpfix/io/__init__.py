"""Floor 6, io: tables on disk, the atomic commit of outputs, reports as files.

- :mod:`dpfix.io.tables`: tables of counts read from CSV, Parquet and histogram files;
- :mod:`dpfix.io.counts`: the rule that makes a cell, a value or a column a count;
- :mod:`dpfix.io.writing`: the privatized table written in its input's format, and the
  cells a spreadsheet would run as formulas;
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
