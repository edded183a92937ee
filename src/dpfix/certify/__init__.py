"""Floor 4, certify: exact certificates of optimality over F and U (Theorem A).

- :mod:`dpfix.certify.cone`: the cone test, the least value of a linear function
  over the eps-scales (``cone_minimum``);
- :mod:`dpfix.certify.duals`: dual points of the count-error LP (the explicit
  northwest-corner dual, HiGHS duals repaired exactly, the exact scale LP);
- :mod:`dpfix.certify.certificate`: :class:`Certificate` and
  :class:`UniversalCertificate`, ``certify_optimal``, ``exact_optimum``,
  ``certify_universal``.

The public names are exported here (``from dpfix.certify import certify_optimal``).
May import: :mod:`dpfix.numbers`,
:mod:`dpfix.sampling`, :mod:`dpfix.theory`, :mod:`dpfix.constructors`.
"""

from dpfix.certify.certificate import (
    Certificate,
    UniversalCertificate,
    certify_optimal,
    certify_universal,
    exact_optimum,
)
from dpfix.certify.cone import CertificateError, cone_minimum
from dpfix.certify.duals import northwest_dual

__all__ = ["Certificate", "CertificateError", "UniversalCertificate", "certify_optimal",
           "certify_universal", "cone_minimum", "northwest_dual", "exact_optimum"]
