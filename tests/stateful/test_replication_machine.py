"""The replication state machine in clarified mode: every invariant after every step, convergence after settling.

MQSPEC_STATEFUL_PROFILE=soak selects the soak profile (tests/stateful/machine.py PROFILES).
"""

from .machine import ReplicationMachine, configure

configure(ReplicationMachine)
TestReplicationMachine = ReplicationMachine.TestCase
