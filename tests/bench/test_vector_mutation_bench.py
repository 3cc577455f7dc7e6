"""bench/vector_mutation.py: what it refuses before building the handler vectors."""

from tests.bench import load


def test_a_keep_folder_it_would_overwrite_is_refused_before_the_vectors_are_built(tmp_path, capsys):
    """`--keep DIR` with a DIR that holds something else is one line, exit 2, at once, and DIR is left as it was."""
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    assert load("vector_mutation").main(["--keep", str(tmp_path), "--handler", "receive_bsc_ack"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vector_mutation: --keep {tmp_path}: ") and "refusing to overwrite" in err
    assert err.count("\n") == 1 and (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_a_handler_it_does_not_mutate_is_refused(capsys):
    assert load("vector_mutation").main(["--handler", "no_such_handler"]) == 2
    assert capsys.readouterr().err == "vector_mutation: no handler no_such_handler\n"
