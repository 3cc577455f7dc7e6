"""Z3 encodings of the MC-MQDSRP invariants (not yet implemented: see the invariants issue)."""
