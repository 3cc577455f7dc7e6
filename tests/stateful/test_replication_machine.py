"""The replication state machine in clarified mode: every invariant after every step, convergence after settling.

MQSPEC_STATEFUL_PROFILE=soak selects the soak profile (proofs/explore/machine.py PROFILES), which
runs for about an hour: pytest-timeout's limit is lifted for it.
"""

import pytest

from mqspec.proofs.explore.machine import ReplicationMachine, configure, profile_name

pytestmark = pytest.mark.timeout(0 if profile_name() == "soak" else 600)

configure(ReplicationMachine)
TestReplicationMachine = ReplicationMachine.TestCase
