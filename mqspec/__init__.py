"""mqspec: executable reference specification and conformance oracle for MSMQ directory protocols.

Subpackages: :mod:`mqspec.model` (value types, codecs), :mod:`mqspec.refimpl` (event handlers),
:mod:`mqspec.proofs` (Z3 invariants), :mod:`mqspec.pipeline` (PySpark jobs).
"""

__version__ = "0.1.0"
