"""One script per result of the paper, run by ``dpfix verify``.

In a checkout this folder stands beside ``src/``; an installed dpfix carries
it as the package ``dpfix.proofs_checks`` (mapped in ``pyproject.toml``), so
``dpfix verify`` finds its checks without a checkout. Each ``check_*.py``
defines ``RESULT``, ``STATEMENT`` and ``run(mode) -> cases`` and also runs
alone: ``python proofs_checks/check_theorem4_simplified.py [--full]``.
"""
