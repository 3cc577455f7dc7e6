"""GUIDs in the [MS-DTYP] 2.3.4 layout."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqspec.model.errors import ModelError
from mqspec.model.guid import Guid


def test_data1_to_data3_are_little_endian():
    """The MS-MQSD section 4 enterprise GUID reads back from its wire bytes."""
    wire = bytes.fromhex("61baeae6c6d1db11baac0003ff4e2d22")
    assert str(Guid(wire)) == "e6eaba61-d1c6-11db-baac-0003ff4e2d22"
    assert Guid.parse("{E6EABA61-D1C6-11DB-BAAC-0003FF4E2D22}").bytes_le == wire


@given(st.binary(min_size=16, max_size=16))
def test_string_form_round_trips(raw):
    """Parsing the string form gives back the same 16 bytes."""
    assert Guid.parse(str(Guid(raw))).bytes_le == raw


@pytest.mark.parametrize("bad", ["", "not-a-guid", "e6eaba61-d1c6-11db-baac-0003ff4e2d2"])
def test_bad_text_is_refused(bad):
    """Text that is not a GUID is a model error."""
    with pytest.raises(ModelError):
        Guid.parse(bad)


def test_wrong_length_is_refused():
    """A GUID is exactly 16 bytes."""
    with pytest.raises(ModelError):
        Guid(b"\x00" * 15)


@given(st.text())
def test_from_name_is_the_uuid5_of_the_name(name):
    """from_name is uuid5 in the URL namespace of "mqspec:" + the name, in the wire layout."""
    import uuid

    assert Guid.from_name(name).bytes_le == uuid.uuid5(uuid.NAMESPACE_URL, f"mqspec:{name}").bytes_le
