"""Versioned, language-neutral test vectors: ``mqspec vectors --out DIR`` and mqspec's own runner.

* :mod:`~mqspec.vectors.writer`: the tree (one directory per case, a manifest each, ``index.json``,
  ``VERSION``, ``README.md``, ``manifest.schema.json``, ``handler.schema.json``, ``propids.json``) and :func:`~mqspec.vectors.writer.generate`;
* :mod:`~mqspec.vectors.codec` (cases in ``codec_cases`` and ``codec_invalid``): bytes and what
  decoding them gives, or the error a strict decoder reports;
* :mod:`~mqspec.vectors.handlers` (situations in ``situations_*``) and :mod:`~mqspec.vectors.state`:
  one MC-MQDSRP handler run, its state before and after as JSON, its effects;
* :mod:`~mqspec.vectors.scenarios`: section 4 examples, counterexamples and generated fault runs
  as traces;
* :mod:`~mqspec.vectors.runner`: :func:`~mqspec.vectors.runner.run_all` re-checks every case
  against mqspec and reports the files it read (a file nobody reads is stale);
* :mod:`~mqspec.vectors.manifest`: the format version and the manifest's JSON Schema;
  :mod:`~mqspec.vectors.handler_schema`: the JSON Schema of the handler files;
* :mod:`~mqspec.vectors.mutation`: mutation testing of the handler vectors (the equivalent
  mutants, with their reasons, in ``equivalent_mutants.yaml``).
"""

from .manifest import FORMAT_VERSION, KINDS

__all__ = ["FORMAT_VERSION", "KINDS"]
