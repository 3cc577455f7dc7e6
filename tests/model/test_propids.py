"""The PROPID registry against propid-types.md and the MC-MQDSRP 3.1.1.4 object-type mapping."""

import subprocess
import sys
from pathlib import Path

import pytest

from mqspec.clauses import covers
from mqspec.model.propids import (
    MANAGEMENT_PROPIDS,
    PROPID_BY_VALUE,
    PROPIDS,
    ObjectType,
    VarType,
    object_type_of,
    propid_value,
)

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "propid-types.md"


@pytest.mark.skipif(not SPEC.exists(), reason="the shared spec folder is not beside the checkout")
def test_committed_table_is_generated_from_the_spec_file():
    """model/propid_table.py is exactly what tools/gen_propids.py makes from propid-types.md."""
    generated = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_propids.py")], capture_output=True, text=True, check=True
    ).stdout
    assert generated == (ROOT / "model" / "propid_table.py").read_text(encoding="utf-8")


def test_every_mqdsrp_propid_constant_is_registered():
    """Every PROPID constant listed in MC-MQDSRP 2.2.1 is in the registry with that value."""
    listed = {
        "PROPID_Q_INSTANCE": 101, "PROPID_Q_LABEL_HASHKEY": 119, "PROPID_QM_SITE_ID": 201,
        "PROPID_QM_OS": 220, "PROPID_S_PATHNAME": 301, "PROPID_S_SEQNUM": 308, "PROPID_CN_SEQNUM": 505,
        "PROPID_E_CIPHER_MODE": 615, "PROPID_E_VERSION": 617, "PROPID_U_ID": 706, "PROPID_L_ID": 806,
        "PROPID_Q_SECURITY": 1101, "PROPID_QM_ENCRYPT_PK": 1203, "PROPID_S_PSC_SIGNPK": 1302,
        "PROPID_D_IDENTIFIER": 1405, "PROPID_CN_SECURITY": 1501, "PROPID_E_SECURITY": 1601,
    }
    for name, value in listed.items():
        assert PROPIDS[name].propid == value
        assert PROPID_BY_VALUE[value].name == name


def test_vartypes_follow_the_table():
    """Spot checks of VARTYPEs, including the vectors and the inferred VT_UI1|VT_VECTOR."""
    assert PROPIDS["PROPID_Q_PATHNAME"].vartype is VarType.VT_LPWSTR
    assert PROPIDS["PROPID_Q_BASEPRIORITY"].vartype is VarType.VT_I2
    assert PROPIDS["PROPID_QM_CNS"].vartype is VarType.VT_CLSID_VECTOR
    assert PROPIDS["PROPID_QM_ENCRYPTION_PK"].vartype is VarType.VT_UI1_VECTOR
    assert PROPIDS["PROPID_QM_OUTFRS_DN"].vartype is VarType.VT_LPWSTR_VECTOR


@covers("MC-MQDSRP", "3.1.1.4")
@pytest.mark.parametrize(
    ("propid", "expected"),
    [
        (101, ObjectType.MQDS_QUEUE), (1103, ObjectType.MQDS_QUEUE), (203, ObjectType.MQDS_MACHINE),
        (1205, ObjectType.MQDS_MACHINE), (304, ObjectType.MQDS_SITE), (501, ObjectType.MQDS_CN),
        (1601, ObjectType.MQDS_ENTERPRISE), (706, ObjectType.MQDS_USER), (813, ObjectType.MQDS_ROUTINGLINK),
        (1405, None), (5101, None), (99, None), (1000, None),
    ],
)
def test_object_type_mapping(propid, expected):
    """rType is (propID - 1000) / 100 above 1000, else propID / 100; values outside the table are unknown."""
    assert object_type_of(propid) is expected


def test_management_propids_are_kept_apart():
    """The MS-MQMR management PROPIDs (their own 1..27 space) are not directory properties."""
    assert "PROPID_MGMT_QUEUE_PATHNAME" in MANAGEMENT_PROPIDS
    assert "PROPID_MGMT_QUEUE_PATHNAME" not in PROPIDS
    assert all(pdef.propid > 100 for pdef in PROPIDS.values())


def test_names_and_numbers_are_both_accepted():
    """Scenario and JSON files may name a PROPID or give its number."""
    assert propid_value("PROPID_Q_LABEL") == 108
    assert propid_value(108) == 108
    assert propid_value("108") == 108
    with pytest.raises(KeyError):
        propid_value("PROPID_NOPE")
