"""The campaign store: missing runs as waves, and only interrupted waves removed."""

from mqspec.pipeline import store


def test_missing_runs_come_in_waves_that_skip_what_is_done():
    """Ranges cover exactly the runs not done, each at most a wave long, in order."""
    assert store.missing_ranges(set(), 5, 2) == [(0, 2), (2, 4), (4, 5)]
    assert store.missing_ranges({0, 1, 3}, 7, 10) == [(2, 3), (4, 7)]
    assert store.missing_ranges(set(range(4)), 4, 3) == []


def test_only_interrupted_waves_are_removed(tmp_path):
    """A wave folder without _SUCCESS goes; complete waves and anything not named as a wave stay."""
    waves = tmp_path / store.WAVES
    done, cut = waves / store.wave_name(0, 2), waves / store.wave_name(2, 4)
    for d in (done, cut, waves / "users-notes"):
        d.mkdir(parents=True)
    (done / "_SUCCESS").write_text("")
    assert store.remove_incomplete_waves(tmp_path) == [cut.name]
    assert sorted(p.name for p in waves.iterdir()) == ["users-notes", done.name]
    assert store.complete_waves(tmp_path) == [done]
