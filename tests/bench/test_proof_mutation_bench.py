"""bench/proof_mutation.py: a failure that is not the mutant's is never counted as a catch."""

from mqspec.proofs.refinement import mutation as pm
from mqspec.refimpl import mqsd_server
from mqspec.vectors import mutation as vm

from tests.bench import load


def test_a_reference_that_fails_its_rows_unmutated_stops_the_bench_with_exit_2(capsys):
    """When the code the benchmark starts from already departs from the model, every mutant would look caught:
    the baseline run sees it first and the benchmark stops with one line and exit 2, judging nothing."""
    fn = mqsd_server.receive_topology_client_request
    wrong = [m for m in vm.mutants_of(fn, vm.OPERATORS) if m.name.startswith(
        f"mqsd_server.{fn.__name__} negate: if ctx.clarified and request.enterprise_id")]
    assert len(wrong) == 1, [m.name for m in vm.mutants_of(fn, vm.OPERATORS)]
    # installed in this process: the benchmark's forked workers run it as their unmutated reference
    with vm.installed(fn, vm.mutant_code(fn, wrong[0])):
        status = load("proof_mutation").main(["--document", "MS-MQSD", "--function", "send_failed", "--workers", "1"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("proof_mutation: the unmutated MS-MQSD does not pass its rows, so no mutant can be judged: "
                          "refinement-receive_datagram (clarified): violated")
    assert "survivor" not in err and "caught" not in err


def test_a_row_the_reference_fails_too_catches_no_mutant():
    """Literal mode's bounded runs find the literal reading's violations on the reference itself: such a row
    failing with a mutant installed is no catch (every MC-MQDSRP survivor once counted as caught by them); a row
    the reference passes is."""
    known = frozenset({"replicas_converge_at_quiescence-by-bmc (literal)"})
    literal = ("bounded", "replicas_converge_at_quiescence-by-bmc (literal): violated")
    clarified = ("bounded", "replicas_converge_at_quiescence-by-bmc (clarified): violated")
    assert pm.classify("MC-MQDSRP", "m", 1, [literal], known, {}, 0.0).status == "survived"
    assert pm.classify("MC-MQDSRP", "m", 1, [literal], known, {"m": "why"}, 0.0).status == "equivalent"
    caught = pm.classify("MC-MQDSRP", "m", 1, [literal, clarified], known, {}, 0.0)
    assert (caught.status, caught.caught_by, caught.rows) == ("caught", ("bounded",), (clarified[1],))


def test_each_listed_equivalent_is_a_mutant_the_engine_makes_with_a_reason():
    """proofs/refinement/equivalent_mutants.yaml names mutants by the engine's names: an entry naming no mutant (a
    renamed function, a rewritten guard) would excuse nothing and hide that its reason is stale."""
    listed = pm.equivalent_mutants()
    made = {m.name for document in pm.DOCUMENTS for _, m in pm.mutants(document)}
    assert listed and sorted(set(listed) - made) == []
    assert all(len(reason) > 80 for reason in listed.values())
