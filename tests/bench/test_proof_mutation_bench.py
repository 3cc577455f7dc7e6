"""bench/proof_mutation.py: a failure that is not the mutant's is never counted as a catch."""

import inspect

from mqspec.proofs.refinement import campaign
from mqspec.proofs.refinement import mutation as pm
from mqspec.refimpl import mqdsrp_client, mqdsrp_server, mqsd_server
from mqspec.vectors import mutation as vm

from tests.bench import BENCH, load


def test_a_reference_that_fails_its_rows_unmutated_stops_the_bench_with_exit_2(capsys):
    """When the code the benchmark starts from already departs from the model, every mutant would look caught:
    the baseline run sees it first and the benchmark stops with one line and exit 2, judging nothing."""
    fn = mqsd_server.receive_topology_client_request
    wrong = [m for m in vm.mutants_of(fn, vm.OPERATORS) if m.name.startswith(
        f"mqsd_server.{fn.__name__} negate: if ctx.clarified and request.enterprise_id")]
    assert len(wrong) == 1, [m.name for m in vm.mutants_of(fn, vm.OPERATORS)]
    # installed in this process: the benchmark's forked workers run it as their unmutated reference
    with vm.installed(fn, vm.mutant_code(fn, wrong[0])):
        status = load("proof_mutation").main(["--document", "MS-MQSD", "--function", "no_server_response",
                                              "--workers", "1"])
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


def _engine_mutant(fn, name_start):
    found = [m for m in vm.mutants_of(fn, pm.OPERATORS) if m.name.startswith(f"{m.module}.{fn.__name__} {name_start}")]
    assert len(found) == 1, [m.name for m in vm.mutants_of(fn, pm.OPERATORS)]
    return found[0]


def test_a_mutants_statement_is_the_innermost_one_holding_its_line():
    """The lines a run must have reached to be judged: the mutated if statement (with its block), and for a mutant
    the engine places at the function's own line (a comprehension's condition has no line of its own) the whole
    function."""
    fn = mqdsrp_client._find_pending
    mutant = _engine_mutant(fn, "negate: if ctx.clarified")
    source, first = inspect.getsourcelines(fn)
    lines = sorted(line for _, line in pm.statement_lines(fn, mutant))
    assert {name for name, _ in pm.statement_lines(fn, mutant)} == {"mqdsrp_client.py"}
    assert source[lines[0] - first].strip() == "if ctx.clarified:"
    assert source[lines[-1] - first].strip() == "return qm.pending_requests.get((requester, identifier))"
    ack = mqdsrp_server.receive_bsc_ack
    comprehension = _engine_mutant(ack, "negate: for ... if n.machine_name == message.bsc_name")
    source, first = inspect.getsourcelines(ack)
    whole = sorted(line for _, line in pm.statement_lines(ack, comprehension))
    assert source[whole[0] - first].startswith("def receive_bsc_ack(")  # below its decorator
    assert whole == list(range(whole[0], first + len(source)))


def test_a_mutant_is_judged_on_the_runs_that_reached_its_statement_and_departs_there():
    """The benchmark records which handler lines each of the campaign's runs reaches on the reference, then judges a
    mutant on the runs that reached its statement only (the others run the same code, and cannot depart). The file
    that catches _find_pending's wait-found-by-identifier mutant reaches it, a file with no change request does not
    (it is skipped), a run nobody recorded is run, and with the mutant installed the selected file departs."""
    files = {"clarified:two-forwarded-requests-with-one-identifier.yaml", "clarified:4.2-adding-a-bsc.yaml"}
    record = campaign.Selection(wanted=lambda name: name in files)
    rows, lines = campaign.run("clarified", selection=record)
    assert set(record.reached) == files and "clarified:seed 1" in record.skipped
    assert [r.obligation.name for r in rows if r.status == "violated"] == []
    assert lines == set().union(*record.reached.values())
    fn = mqdsrp_client._find_pending
    mutant = _engine_mutant(fn, "negate: if ctx.clarified")
    chosen = pm.selection(record.reached, pm.statement_lines(fn, mutant))
    assert chosen.wanted("clarified:two-forwarded-requests-with-one-identifier.yaml")
    assert not chosen.wanted("clarified:4.2-adding-a-bsc.yaml")
    assert chosen.wanted("clarified:seed 1")  # not recorded: judged on it too
    only = campaign.Selection(wanted=lambda name: name in files and chosen.wanted(name))
    with vm.installed(fn, vm.mutant_code(fn, mutant)):
        rows, _ = campaign.run("clarified", stop_at_first=True, shrink=False, selection=only)
    assert [r.obligation.name for r in rows if r.status == "violated"] == ["refinement-receive_change_reply"]
    assert "clarified:4.2-adding-a-bsc.yaml" in only.skipped


def test_bounded_runs_that_never_reached_a_mutants_statement_are_not_run():
    """The bounded runs are one run of the selection, named ``bounded``: a mutant whose statement they never reached
    on the reference is not judged on them (they take minutes), and a mutant's selection traces nothing it does not
    need (only the baseline records lines)."""
    chosen = pm.selection({"bounded": {("mqdsrp_client.py", 1)}}, {("mqdsrp_client.py", 2)})
    assert not chosen.record and not chosen.wanted("bounded") and chosen.wanted("clarified:seed 1")
    assert pm.bounded_rows(chosen) == [] and chosen.skipped == ["bounded"] and chosen.reached == {}


def test_a_part_of_the_baseline_runs_one_mode_of_the_campaign_and_records_its_runs():
    """The benchmark runs MC-MQDSRP's baseline in parts, in parallel (proofs/refinement/mutation.py PARTS): one
    part is one mode's campaign, clean on the reference, recording the lines of each run it ran."""
    assert pm.PARTS["MC-MQDSRP"] == ("clarified", "literal", "bounded")
    record = campaign.Selection(wanted=lambda name: name == "literal:4.1-adding-a-site.yaml")
    assert pm.baseline("MC-MQDSRP", record=record, part="literal") == []
    [(name, lines)] = record.reached.items()
    assert name == "literal:4.1-adding-a-site.yaml" and lines
    assert "literal:seed 1" in record.skipped and not any(name.startswith("clarified:") for name in record.skipped)


def test_a_function_only_the_simulator_calls_is_not_mutated_and_the_report_says_why():
    """default_scope picks the scope a simulated directory client sends (E-183): mutating it changes the handlers'
    inputs, which the check takes as they come, so its negated condition "survived" every run. It is left out of
    the mutated functions, and the report names it with the reason."""
    names = {f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}" for fn in pm.functions("MC-MQDSRP")}
    assert "mqds.default_scope" not in names and "mqds.directory_client_request" in names
    assert set(pm.ENVIRONMENT) == {"mqds.default_scope"}
    assert pm.report([], {})["not_mutated"] == pm.ENVIRONMENT


def test_a_function_no_document_mutates_is_refused_before_the_baseline(capsys):
    """`--function` with a name the chosen documents do not mutate (a typo, or another document's function) would
    run the minutes-long baseline and judge nothing: it is one line naming it, exit 2, at once."""
    status = load("proof_mutation").main(["--document", "MS-MQSD", "--function", "handle_site_update",
                                          "--function", "no_server_response"])
    err = capsys.readouterr().err
    assert status == 2 and err == "proof_mutation: no function 'handle_site_update' is mutated in MS-MQSD\n"


def test_a_progress_file_it_cannot_write_is_refused_before_the_baseline(tmp_path, capsys):
    """`--progress` in a folder that does not exist fails at once, not after the baseline, in one line."""
    path = tmp_path / "missing" / "progress.jsonl"
    assert load("proof_mutation").main(["--document", "MS-MQSD", "--progress", str(path)]) == 2
    assert capsys.readouterr().err == f"proof_mutation: {path}: No such file or directory\n"


def test_the_ledger_records_a_function_measured_whole_and_a_survivor_judged_again(tmp_path, capsys):
    """`--ledger` records each function whose mutants were all judged, with a digest of its source; `--status` says
    which functions are measured whole on their current source; `--rejudge` judges only the survivors the ledger
    holds and records each one's new status. A survivor written in by hand (the mutant is one the campaign catches)
    is judged again and found caught; an entry whose source no longer matches is stale and its survivors are not
    judged."""
    bench, path = load("proof_mutation"), str(tmp_path / "ledger.json")
    function = ["--document", "MS-MQSD", "--function", "populate_connected_network_identifier_list"]
    assert bench.main([*function, "--workers", "1", "--ledger", path]) == 0
    key = "MS-MQSD mqsd_client.populate_connected_network_identifier_list"
    entry = bench.read_ledger(path)["functions"][key]
    assert entry["mutants"] == 2 and entry["survivors"] == {}
    assert {k: entry["measured"][k] for k in ("caught", "equivalent", "survived", "timeout")} == {
        "caught": 2, "equivalent": 0, "survived": 0, "timeout": 0}
    capsys.readouterr()
    assert bench.main(["--document", "MS-MQSD", "--ledger", path, "--status"]) == 0
    out = capsys.readouterr().out
    assert f"whole        2 {entry['measured']['commit']}" in out and out.endswith(
        "1 whole, 0 stale, 9 unmeasured (of 10 functions with mutants); 0 survivors left\n")

    ledger = bench.read_ledger(path)
    mutant = f"{key.split()[1]} negate: if last is not None -> if not last is not None"
    ledger["functions"][key]["survivors"] = {mutant: {"line": 1, "status": "survived", "commit": "0000000"}}
    bench.write_ledger(path, ledger)
    assert bench.main(["--document", "MS-MQSD", "--ledger", path, "--status"]) == 0
    assert capsys.readouterr().out.endswith("1 survivors left\n")
    assert bench.main([*function, "--workers", "1", "--ledger", path, "--rejudge"]) == 0
    survivor = bench.read_ledger(path)["functions"][key]["survivors"][mutant]
    assert survivor["status"] == "caught" and survivor["commit"] == entry["measured"]["commit"]

    ledger = bench.read_ledger(path)
    ledger["functions"][key]["source"] = "0" * 16
    ledger["functions"][key]["survivors"][mutant]["status"] = "survived"
    bench.write_ledger(path, ledger)
    capsys.readouterr()
    assert bench.main(["--document", "MS-MQSD", "--ledger", path, "--rejudge"]) == 0
    err = capsys.readouterr().err
    assert err == (f"proof_mutation: {key} changed since the ledger measured it: its 1 survivors are not judged; "
                   "measure it again with --function\nproof_mutation: the ledger holds no survivor to judge\n")


def test_a_ledger_it_cannot_read_or_write_is_refused_before_the_baseline(tmp_path, capsys):
    """A ledger that is not one, a folder that cannot hold it, or `--rejudge` without a ledger: one line, exit 2."""
    bench = load("proof_mutation")
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    assert bench.main(["--document", "MS-MQSD", "--ledger", str(bad)]) == 2
    assert capsys.readouterr().err == f'proof_mutation: {bad}: not a ledger: no "functions" object\n'
    missing = tmp_path / "missing" / "ledger.json"
    assert bench.main(["--document", "MS-MQSD", "--ledger", str(missing)]) == 2
    assert capsys.readouterr().err == f"proof_mutation: {missing}: its folder cannot be written\n"
    assert bench.main(["--document", "MS-MQSD", "--rejudge"]) == 2
    assert capsys.readouterr().err == "proof_mutation: --rejudge reads the ledger: give --ledger\n"


def test_runs_groups_the_ledger_by_the_run_that_measured_it_and_says_what_became_of_its_survivors(capsys):
    """`--runs` sums the entries each run (commit, document) measured and tells its survivors apart by their latest
    judgement: caught since, listed as equivalent since (in the ledger or proofs/refinement/equivalent_mutants.yaml),
    or left."""
    bench = load("proof_mutation")

    def entry(commit, mutants, caught, survivors):
        return {"source": "0" * 16, "mutants": mutants, "survivors": survivors,
                "measured": {"commit": commit, "caught": caught, "equivalent": mutants - caught - len(survivors),
                             "survived": len(survivors), "timeout": 0}}

    def survivor(status):
        return {"line": 1, "status": status, "commit": "c"}

    ledger = {"functions": {
        "MC-MQDSRP m.f": entry("aaa", 5, 2, {"s1": survivor("caught"), "s2": survivor("survived")}),
        "MC-MQDSRP m.g": entry("aaa", 3, 2, {"s3": survivor("survived")}),
        "MS-MQSD n.h": entry("aaa", 2, 2, {}),
        "MC-MQDSRP m.k": entry("bbb", 4, 3, {"s4": survivor("equivalent")}),
    }}
    runs = bench.ledger_runs(ledger, {"s3": "why"})
    assert [(r["document"], r["commit"], r["functions"], r["mutants"], r["caught"], r["equivalent"], r["survived"],
             r["since"]) for r in runs] == [
        ("MC-MQDSRP", "aaa", 2, 8, 4, 1, 3, {"caught": 1, "equivalent": 1, "left": 1}),
        ("MC-MQDSRP", "bbb", 1, 4, 3, 0, 1, {"caught": 0, "equivalent": 1, "left": 0}),
        ("MS-MQSD", "aaa", 1, 2, 2, 0, 0, {"caught": 0, "equivalent": 0, "left": 0}),
    ]
    assert bench.runs_table(runs).splitlines()[-1] == "| all | | 4 | 14 | 9 | 1 | 4 | 1, 2, **1** |"
    assert bench.main(["--runs"]) == 2
    assert capsys.readouterr().err == "proof_mutation: --runs reads the ledger: give --ledger\n"


def test_the_readme_shows_the_committed_ledgers_runs():
    """bench/README.md's table of the mutation runs is what `--runs` prints of the committed ledger, so its figures
    cannot drift from the ledger's."""
    from mqspec.proofs.refinement import mutation as pm

    bench = load("proof_mutation")
    table = bench.runs_table(bench.ledger_runs(bench.read_ledger(str(BENCH / "proof_mutation_ledger.json")),
                                               pm.equivalent_mutants()))
    assert table in (BENCH / "README.md").read_text(encoding="utf-8")
