"""The anti-drift check: the Z3 transition encoding against the reference handlers, one handler at a time.

For every handler the core model covers (one partition's replication state: the events of
proofs/z3_events.py) and both modes: build a QueueManager from a model state, run the reference
handler, read back the post-state and the messages, and compare them with the model's post-state on
the same pre-state (the model's own code on Python ints). The states come from two sources:

* random ones (400 per handler and mode), any values the model can represent, with witnesses that
  the comparisons reached each branch worth reaching;
* states the explorer reached: partitions of the servers of a few replication-machine runs
  (proofs/explore/machine.py), with their real numbers, queued changes, PSC neighbors'
  acknowledgements and tombstones (the witnesses here: an authority whose two PSC neighbors
  acknowledged different numbers, queued changes, a replica in sync0, tombstones).

A further test evaluates the Z3 terms of the same transitions on concrete states, closing the chain
refimpl == model == Z3. What this does not cover (names, neighbors' membership, objects, messages'
destinations, the server's other events): the refinement check compares those on every handler run
of the explorer and of `mqspec prove`'s campaign (proofs/refinement, tests/proofs/test_refinement.py).
"""

import random

import pytest
from mqspec.proofs import refimpl_bridge as rb
from mqspec.proofs import z3_events as ev

from mqspec.clauses import covers

MODES = ("clarified", "literal")
STATES_PER_EVENT = 400
SECTIONS = {e.name: e.section for e in ev.EVENTS}

MAX = (1 << 64) - 1


def _missing_delete(s, p):
    """A replicated delete of an object this (non-authority) server does not hold (E-261)."""
    c = p["change"]
    return c.is_delete and not c.applies and not s.is_authority


#: situations the random states must reach for the comparison to mean something:
#: (event, mode, situation) -> test on (pre-state, params, refimpl view); each must occur at least once
WITNESSES = {
    ("handle_directory_change", "clarified", "applies"): lambda s, p, v: v["last"] > s.last_seq_number,
    ("handle_directory_change", "literal", "queues"):
        lambda s, p, v: len(v["pending"]) > sum(c.present for c in s.pending_changes),
    ("handle_in_sync_change", "clarified", "E-261 applies a delete of a missing object"):
        lambda s, p, v: _missing_delete(s, p) and v["last"] == p["change"].seq_number,
    ("handle_in_sync_change", "literal", "E-261 stops at a delete of a missing object"):
        lambda s, p, v: _missing_delete(s, p) and v["last"] == s.last_seq_number,
    ("check_pending_changes", "clarified", "applies"):
        lambda s, p, v: v["last"] > s.last_seq_number and bool(v["pending"]),
    ("check_pending_changes", "clarified", "E-261 applies a queued delete of a missing object"):
        lambda s, p, v: not s.is_authority and any(
            c.present and c.is_delete and not c.applies and s.last_seq_number < c.seq_number <= v["last"]
            for c in s.pending_changes),
    ("check_pending_changes", "literal", "asks"): lambda s, p, v: bool(v["sync_requests"]),
    ("propagate_directory_change", "clarified", "tombstone"): lambda s, p, v: p["is_delete"] and bool(v["tombstones"]),
    ("receive_change_request", "literal", "E-108 unnamed tombstone"):
        lambda s, p, v: any(not named for _, _, named in v["tombstones"]),
    ("receive_change_request", "clarified", "forwards"): lambda s, p, v: v["forwarded"],
    ("receive_change_request", "clarified", "E-164 SYNC applied, not propagated"):
        lambda s, p, v: p["is_sync"] and v["last"] > s.last_seq_number and not v["propagated"],
    ("receive_sync_request", "clarified", "chain"): lambda s, p, v: any(len(r[4]) >= 2 for r in v["replies"]),
    ("receive_sync_request", "literal", "chain"): lambda s, p, v: any(len(r[4]) >= 2 for r in v["replies"]),
    ("receive_sync_request", "literal", "already purged"): lambda s, p, v: bool(v["already_purged"]),
    ("receive_sync_reply", "literal", "E-166 moves back"): lambda s, p, v: v["last"] < s.last_seq_number,
    ("receive_sync_reply", "clarified", "completes sync0"): lambda s, p, v: v["state"] == 0 and s.purge_state == 2,
    ("purge_deleted_objects", "clarified", "advances"): lambda s, p, v: v["purged"] > s.purged_seq_number,
    ("purge_deleted_objects", "literal", "removes"):
        lambda s, p, v: len(v["tombstones"]) < sum(t.present for t in s.deleted_objects),
    ("receive_psc_ack", "clarified", "records"):
        lambda s, p, v: v["acks"] != [n.acked for n in s.psc_neighbors if n.present],
    ("start_sync0_state", "clarified", "resets"): lambda s, p, v: v["state"] == 2 and v["last"] == 0,
    ("complete_sync0_state", "clarified", "completes"): lambda s, p, v: v["state"] == 0 and s.purge_state != 0,
    ("receive_already_purged", "literal", "starts sync0"): lambda s, p, v: v["state"] == 2,
    ("receive_change_propagation", "literal", "asks"): lambda s, p, v: bool(v["sync_requests"]),
    ("receive_change_propagation", "literal", "E-264 window MAX holds a newer header back"):
        lambda s, p, v: (s.change_missing_window == MAX and p["header_present"]
                         and s.last_seq_number < p["header_last"] < MAX and not v["sync_requests"]),
    ("receive_change_propagation", "clarified", "E-264 window MAX asks again"):
        lambda s, p, v: s.change_missing_window == MAX and bool(v["sync_requests"]),
    ("receive_change_propagation", "clarified", "E-264 window MAX in sync0 asks again for everything"):
        lambda s, p, v: (s.change_missing_window == MAX and s.purge_state == 2 and p["header_present"]
                         and s.last_seq_number < p["header_last"] and v["window"] == MAX
                         and any(r[3] for r in v["sync_requests"])),
    ("receive_change_propagation", "clarified", "E-265 a header at the window asks again"):
        lambda s, p, v: (s.change_missing_window != MAX and p["header_present"]
                         and s.last_seq_number < p["header_last"] == s.change_missing_window and bool(v["sync_requests"])),
    ("receive_change_propagation", "literal", "E-265 a header one below the window is held back"):
        lambda s, p, v: (s.change_missing_window != MAX and p["header_present"]
                         and s.last_seq_number < p["header_last"] == s.change_missing_window - 1
                         and not v["sync_requests"]),
    ("handle_directory_change", "clarified", "E-311 window MAX asks for the gap"):
        lambda s, p, v: (s.change_missing_window == MAX and s.purge_state == 0
                         and not any(c.present for c in s.pending_changes) and bool(v["sync_requests"])),
    ("handle_directory_change", "literal", "E-311 window MAX queues without asking"):
        lambda s, p, v: (s.change_missing_window == MAX and s.purge_state == 0
                         and not any(c.present for c in s.pending_changes) and bool(v["pending"])
                         and not v["sync_requests"]),
    ("crash_losing_volatile_state", "clarified", "window MAX"): lambda s, p, v: v["window"] == MAX,
}


def _cases(event, mode, count, slots=4, seed=0):
    rng = random.Random(f"{event}:{mode}:{seed}")
    done = 0
    while done < count:
        s = rb.random_state(rng, pending_slots=slots)
        p = rb.random_params(rng, event, s)
        if p is None:
            continue  # the event's callers never raise it on this state
        done += 1
        yield s, p


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("event", rb.CHECKED_EVENTS)
def test_model_matches_refimpl_on_random_states(event, mode):
    """The model's post-state and messages equal the reference handler's on 400 random states."""
    hits = {key: 0 for key in WITNESSES if key[0] == event and key[1] == mode}
    for s, p in _cases(event, mode, STATES_PER_EVENT):
        want = rb.run_refimpl(event, s, p, mode)
        got = rb.run_model(event, s, p, mode)
        assert got == want, (f"{event} ({mode}) drifted from refimpl on\n  state {s}\n  arguments {p}\n"
                             f"  differs in {[k for k in want if want[k] != got.get(k)]}\n"
                             f"  refimpl {want}\n  model   {got}")
        for key in hits:
            hits[key] += bool(WITNESSES[key](s, p, want))
    assert all(hits.values()), f"random states never reached: {[k for k, n in hits.items() if not n]}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("event", rb.CHECKED_EVENTS)
def test_z3_terms_match_concrete_model(event, mode):
    """The Z3 terms of the transition, evaluated on concrete states, give the model's concrete post-state."""
    evaluate = rb.symbolic_evaluator(event, mode)
    count = 8 if event == "receive_sync_reply" else 20
    for s, p in _cases(event, mode, count, slots=2, seed=1):
        assert evaluate(s, p) == rb.run_model(event, s, p, mode), (event, mode, s, p)


#: situations the explorer's states must reach: (name) -> test on a state
REACHED = {
    "an authority whose PSC neighbors acknowledged different numbers":
        lambda s: s.is_authority and len({n.acked for n in s.psc_neighbors}) >= 2,
    "queued changes": lambda s: bool(s.pending_changes),
    "a replica in SYNC0": lambda s: s.purge_state == 2,
    "tombstones of the partition": lambda s: any(t.in_partition for t in s.deleted_objects),
    "a partition that purged": lambda s: s.purged_seq_number > 0,
}


def _explorer_states():
    """Partition states the explorer reached: every partition of the server of every 5th handler run."""
    if _REACHED_STATES:
        return _REACHED_STATES
    import hypothesis.core
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test
    from mqspec.proofs.explore import machine as em

    class Sampler:
        def __init__(self):
            self.runs = 0

        def before(self, world, qm, event):
            self.runs += 1
            for p in qm.partitions:
                s = rb.node_state_of(qm, p)
                # every 5th run's, and every state of a situation that matters (a few of each)
                rare = [name for name, seen in REACHED.items() if seen(s) and _SEEN.setdefault(name, 0) < 40]
                if self.runs % 5 == 0 or rare:
                    _REACHED_STATES.append(s)
                for name in rare:
                    _SEEN[name] += 1

        def effect(self, *args):
            pass

        after = crashed = skipped = topology_changed = effect

    class Sampling(em.ReplicationMachine):
        REFINE = False
        EXPLAIN_SECONDS = 0.0
        stats = em.Stats()

        def _observe(self, *args, **kw):
            if not any(isinstance(o, Sampler) for o in self.world.observers):
                self.world.observers.append(Sampler())
            super()._observe(*args, **kw)

    for key, value in em.PROFILES["ci"]["machine"].items():
        setattr(Sampling, key, value)
    previous = hypothesis.core.global_force_seed
    try:
        for seed in (3, 5):
            hypothesis.core.global_force_seed = seed
            run_state_machine_as_test(Sampling, settings=settings(
                max_examples=6, stateful_step_count=50, deadline=None, phases=[Phase.generate], database=None,
                suppress_health_check=list(HealthCheck)))
    finally:
        hypothesis.core.global_force_seed = previous
    # the campaign's scenario of an authority waiting for its slowest PSC (random runs rarely leave a
    # PSC unacknowledged long enough to reach it)
    from importlib import resources

    from mqspec.refimpl import scenario_run
    from mqspec.refimpl.scenario import load

    path = resources.files("mqspec.proofs.refinement.scenarios") / "purge-waits-for-the-slowest-psc.yaml"
    scenario_run.run(load(path), attach=lambda world: world.observers.append(Sampler()), skip_idle_timers=True)
    return _REACHED_STATES


_REACHED_STATES: list = []
_SEEN: dict = {}
STATES_REACHED_PER_EVENT = 150


def test_the_explorer_states_reach_the_situations_that_matter():
    """The states drawn from the explorer hold an authority with PSC neighbors at different acks, queued changes, sync0, tombstones."""
    states = _explorer_states()
    missing = [name for name, seen in REACHED.items() if not any(seen(s) for s in states)]
    assert not missing, f"the explorer's states never reached: {missing}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("event", rb.CHECKED_EVENTS)
def test_model_matches_refimpl_on_states_the_explorer_reached(event, mode):
    """The model's post-state and messages equal the reference handler's on partition states of explorer runs."""
    states = _explorer_states()
    rng = random.Random(f"reached:{event}:{mode}")
    done = tries = 0
    while done < STATES_REACHED_PER_EVENT and tries < 20 * STATES_REACHED_PER_EVENT:
        tries += 1
        s = rng.choice(states)
        p = rb.random_params(rng, event, s)
        if p is None:
            continue
        done += 1
        want = rb.run_refimpl(event, s, p, mode)
        got = rb.run_model(event, s, p, mode)
        assert got == want, (f"{event} ({mode}) drifted from refimpl on a reached state\n  state {s}\n  arguments {p}\n"
                             f"  differs in {[k for k in want if want[k] != got.get(k)]}\n"
                             f"  refimpl {want}\n  model   {got}")
    assert done, f"no reached state where {event} can be raised"


for _name in ("test_model_matches_refimpl_on_random_states", "test_z3_terms_match_concrete_model",
              "test_model_matches_refimpl_on_states_the_explorer_reached"):
    for _section in sorted(set(SECTIONS.values()) - {"3.1.1"}):
        covers("MC-MQDSRP", _section)(globals()[_name])


def test_every_clarification_of_the_handlers_is_modelled_or_set_aside():
    """Every register id the MC-MQDSRP handlers cite is modelled, set aside with a reason, or read one way only."""
    import re
    from pathlib import Path

    from mqspec.proofs import z3_model

    root = Path(rb.__file__).resolve().parents[1] / "refimpl"
    cited = set()
    for path in [*root.glob("mqdsrp_*.py"), root / "mqds.py"]:
        cited |= set(re.findall(r"E-\d{3}", path.read_text(encoding="utf-8")))
    known = set(z3_model.ERRATA) | set(z3_model.NOT_MODELLED) | set(z3_model.READ_ONE_WAY)
    assert not cited - known, f"new clarifications to model or set aside: {sorted(cited - known)}"
