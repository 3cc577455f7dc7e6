"""The campaign store: missing runs as waves, and files at a URI written whole."""

from mqspec.pipeline import store
from mqspec.pipeline.store import Location


def test_missing_runs_come_in_waves_that_skip_what_is_done():
    """Ranges cover exactly the runs outside the stored waves, each at most a wave long, in order."""
    assert store.missing_ranges([], 5, 2) == [(0, 2), (2, 4), (4, 5)]
    assert store.missing_ranges([(0, 2), (3, 4)], 7, 10) == [(2, 3), (4, 7)]
    assert store.missing_ranges([(0, 4)], 4, 3) == []
    assert store.missing_ranges([(2, 9)], 4, 3) == [(0, 2)]  # a stored wave past the end of a shorter campaign


def test_a_location_is_one_uri_for_a_local_path_and_its_file_uri(tmp_path, monkeypatch):
    """A local path (relative or not) and its file:// URI name one folder; names with spaces survive."""
    monkeypatch.chdir(tmp_path)
    by_path, by_uri = Location("out dir/x"), Location((tmp_path / "out dir" / "x").as_uri())
    assert by_path.uri == by_uri.uri and by_path.path == str(tmp_path / "out dir" / "x")
    by_uri.child("a", "b.json").write_text("{}\n")
    assert (tmp_path / "out dir" / "x" / "a" / "b.json").read_text() == "{}\n"
    assert by_path.names() == ["a"] and by_path.child("a").sizes() == {"b.json": 3}
    assert not list((tmp_path / "out dir" / "x" / "a").glob(".*.tmp"))  # written through a moved temporary file
    by_path.child("a").remove()
    assert by_path.names() == [] and not by_path.child("a").exists()


def test_local_paths_become_file_uris_and_uris_stay():
    """to_uri leaves hdfs://, s3a:// and file: URIs alone and makes a local path absolute."""
    assert store.to_uri("hdfs://nn:8020/lab") == "hdfs://nn:8020/lab"
    assert store.to_uri("file:/tmp/x") == "file:/tmp/x"
    assert store.to_uri("/tmp/x y") == "file:///tmp/x%20y"
