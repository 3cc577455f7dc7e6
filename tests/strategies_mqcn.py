"""Hypothesis strategies for [MS-MQCN] section 2 values: properties, updates, bodies, messages."""

from __future__ import annotations

from hypothesis import strategies as st

from mqspec.model.guid import Guid
from mqspec.model.mqcn import (
    ChangeNotificationMessage,
    Command,
    Event,
    NotificationBody,
    NotificationUpdate,
    Version,
)
from mqspec.model.propids import PROPIDS, VarType
from mqspec.model.propvalue import Property

guids = st.binary(min_size=16, max_size=16).map(Guid)
#: WCHAR text: no NUL (it would end the string); surrogates only as valid pairs
wtext = st.text(
    st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12
)
vchar_text = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)

_INT_RANGES = {
    VarType.VT_I1: (-(2**7), 2**7 - 1),
    VarType.VT_UI1: (0, 2**8 - 1),
    VarType.VT_I2: (-(2**15), 2**15 - 1),
    VarType.VT_UI2: (0, 2**16 - 1),
    VarType.VT_BOOL: (0, 2**16 - 1),
    VarType.VT_I4: (-(2**31), 2**31 - 1),
    VarType.VT_UI4: (0, 2**32 - 1),
    VarType.VT_I8: (-(2**63), 2**63 - 1),
    VarType.VT_UI8: (0, 2**64 - 1),
}
BY_VARTYPE = {vt: st.integers(lo, hi) for vt, (lo, hi) in _INT_RANGES.items()}
BY_VARTYPE.update(
    {
        VarType.VT_LPWSTR: wtext,
        VarType.VT_CLSID: guids,
        VarType.VT_BLOB: st.binary(max_size=24),
        VarType.VT_UI1_VECTOR: st.binary(max_size=24),
        VarType.VT_CLSID_VECTOR: st.lists(guids, max_size=3).map(tuple),
        VarType.VT_UI4_VECTOR: st.lists(st.integers(0, 2**32 - 1), max_size=3).map(tuple),
        VarType.VT_LPWSTR_VECTOR: st.lists(wtext, max_size=3).map(tuple),
    }
)
#: every directory PROPID that has a flat PROPVALUE encoding
FLAT_PROPIDS = sorted(
    (p for p in PROPIDS.values() if p.vartype in BY_VARTYPE), key=lambda p: p.propid
)


def value_of(vartype: VarType) -> st.SearchStrategy[object]:
    """Values of one VARTYPE, as the model holds them."""
    return BY_VARTYPE[vartype]


@st.composite
def properties(draw) -> Property:
    """Any directory property with a value of its VARTYPE."""
    pdef = draw(st.sampled_from(FLAT_PROPIDS))
    return Property(pdef.propid, draw(value_of(pdef.vartype)))


@st.composite
def notification_updates(draw) -> NotificationUpdate:
    """Any Notification Update that section 2.2.6 allows."""
    by_guid = draw(st.booleans())
    return NotificationUpdate(
        command=draw(st.sampled_from(Command)),
        path_name=None if by_guid else draw(wtext),
        guid_identifier=draw(guids) if by_guid else None,
        guid_master_id=draw(guids),
        reserved=draw(st.one_of(st.just(bytes(24)), st.binary(min_size=24, max_size=24))),
        properties=draw(st.lists(properties(), max_size=5)),
    )


@st.composite
def guid_spellings(draw, guid: Guid) -> str | None:
    """None (canonical lowercase) or an upper/mixed-case spelling of ``guid``."""
    text = str(guid)
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    spelled = "".join(c.upper() if f else c for c, f in zip(text, flips, strict=True))
    return None if spelled == text else spelled


@st.composite
def notification_bodies(draw) -> NotificationBody:
    """Any Notification Body the ABNF of 2.2.5 allows (with either ObjectGuid end tag)."""
    guid = draw(guids)
    return NotificationBody(
        event=draw(st.sampled_from(Event)),
        object_guid=guid,
        domain_controller=draw(
            st.one_of(vchar_text, st.just("<" * 256), st.just("a</DomainController>"))
        ),
        object_guid_text=draw(guid_spellings(guid)),
        spaced_end_tag=draw(st.booleans()),
    )


def messages() -> st.SearchStrategy[ChangeNotificationMessage]:
    """Version 0x01 (0..4 updates) and version 0x02 Change Notification Messages."""
    v1 = st.lists(notification_updates(), max_size=4).map(
        lambda us: ChangeNotificationMessage(version=Version.DIRECTORY_SERVICE, updates=us)
    )
    v2 = notification_bodies().map(
        lambda b: ChangeNotificationMessage(version=Version.QUEUE_MANAGER, body=b)
    )
    return st.one_of(v1, v2)
