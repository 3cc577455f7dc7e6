"""The conformance oracle: the published trace format and ``mqspec check``.

An implementer records what their directory servers do as a trace (NDJSON, one event per
line, :mod:`mqspec.oracle.trace_format`); :mod:`mqspec.oracle.check` replays the trace's
inputs through the reference handlers and reports, per trace, conformance or the first
divergence with the clause whose rule was broken.

* :mod:`~mqspec.oracle.trace_format`: format version, event kinds, the line validator, the
  JSON Schema (``mqspec/schema/trace.schema.json`` is generated from it);
* :mod:`~mqspec.oracle.state`: the snapshot shape of a node's replication state, and its comparison;
* :mod:`~mqspec.oracle.record`: writing traces from the simulated enterprise (a World observer);
* :mod:`~mqspec.oracle.generate`: random enterprise workloads recorded as traces (tests, benchmark);
* :mod:`~mqspec.oracle.replay`: one node's replay (inputs into the reference, outputs matched);
* :mod:`~mqspec.oracle.attribution`: which registered clause produced an output or changed a field;
* :mod:`~mqspec.oracle.diff`: field-level differences of decoded messages;
* :mod:`~mqspec.oracle.coverage`: which registered clauses ran while a trace was checked;
* :mod:`~mqspec.oracle.check`: the checker over whole traces, its reports;
* :mod:`~mqspec.oracle.from_pcap`: a trace built from a packet capture.
"""
