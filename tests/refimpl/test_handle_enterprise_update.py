"""MC-MQDSRP 3.1.7.2.10 Handle Enterprise Update."""

from mqspec.model.propvalue import Property
from mqspec.refimpl import status as st
from mqspec.refimpl.mqdsrp_objects import handle_enterprise_update

from mqspec.clauses import covers

from .mqdsrp_fixtures import ENT, PEC, P, context, psc_node


def _update(qm, props):
    ctx = context(qm)
    result = handle_enterprise_update(qm, ctx, qm.find_partition(ENT), tuple(props))
    assert ctx.effects == []
    return result


@covers("MC-MQDSRP", "3.1.7.2.10")
def test_new_pec_name_becomes_the_partition_authority():
    """"If newPECName is different from iPartition.AuthorityName: Set iPartition.AuthorityName to newPECName. Set rNeedFlush to true"."""
    qm = psc_node()
    assert _update(qm, [Property(P["PROPID_E_NAME"], "e"), Property(P["PROPID_E_PECNAME"], "PEC9")]) == (st.MQ_OK, True)
    assert qm.find_partition(ENT).authority_name == "PEC9"


@covers("MC-MQDSRP", "3.1.7.2.10")
def test_same_pec_name_needs_no_flush():
    """A PROPID_E_PECNAME equal to AuthorityName changes nothing and rNeedFlush stays false."""
    qm = psc_node()
    assert _update(qm, [Property(P["PROPID_E_PECNAME"], PEC)]) == (st.MQ_OK, False)
    assert qm.find_partition(ENT).authority_name == PEC


@covers("MC-MQDSRP", "3.1.7.2.10")
def test_update_without_pec_name_changes_nothing():
    """"If PROPID_E_PECNAME is found in iPropertyID" guards the change: other enterprise properties leave the authority alone."""
    qm = psc_node()
    assert _update(qm, [Property(P["PROPID_E_NAME"], "renamed")]) == (st.MQ_OK, False)
    assert qm.find_partition(ENT).authority_name == PEC
