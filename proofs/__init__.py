"""Invariants of MC-MQDSRP stated once (invariants.py), their Z3 encodings and proof obligations.

``mqspec prove`` checks initiation and consecution of every invariant for every handler that changes
replication state (obligations.py, over the model of z3_model.py / z3_events.py, cross-checked
against refimpl by tests/proofs/test_model_vs_refimpl.py), and bounded model checking of small
enterprises on the simulator (bmc.py); counterexample.py renders violations as traces and scenarios.
"""
