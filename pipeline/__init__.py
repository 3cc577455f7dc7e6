"""PySpark jobs for campaigns and conformance checking at scale (not yet implemented: see the oracle issue)."""
