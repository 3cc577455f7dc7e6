"""Moving a site's PSC to another machine: the scenario step ``move_psc`` (modelling E-313).

MC-MQDSRP provides for a site whose PSC changes, but not for how the new machine comes to own the
partition. What the text provides:

* the site object's PROPID_S_PSC is updated in the enterprise partition, whose authority is the
  PEC (an [MS-MQDS] directory client's update, 3.1.7.1.1); every server that applies the change
  runs Handle Site Update (3.1.7.2.11): "Set dirPartition.AuthorityName to newPSCName ... Set
  dirPSCNeighbor.MachineName to newPSCName";
* the new PSC is the authority of its site's partition because the partition is its
  MySitePartition (3.1.3.1, 1.3.1.2).

What the text leaves to the implementation, and mqspec models (the authority handover): the new
machine takes over the old PSC's persisted replication state (3.1.1: the partitions with their
sequence numbers, the PSC and BSC neighbors with their acknowledgements, the deleted objects) and
its directory, as an administrator moving the directory database would; the old PSC stops for
good and leaves the world, and the site's BSCs are configured with the new PSC's name (how a BSC
learns it before it has the site partition "is implementation-specific", 3.1.3.1). The new PSC's own
site partition names it as the authority, and it starts (3.3.3: its timers, and sync requests for the partitions it does not own). Then the PEC
updates the site object, and the rename reaches every server by replication.

Only a site whose PSC is not the PEC can move (moving the PEC is 3.1.7.2.10's enterprise update).
"""

from __future__ import annotations

import copy

from mqspec.model.propids import ObjectType
from mqspec.model.propvalue import Property

from .mqds import ClientRequest, default_scope
from .mqdsrp_state import PEC_PARTITION_ID, QueueManager, Role, lose_volatile_state
from .world import P, World


class HandoverError(Exception):
    """The move cannot be made in the state the world is in (no PSC, the PEC, a name taken)."""


def site_psc(world: World, site: str) -> str | None:
    """The server that is the PSC of ``site`` (None when the site has none)."""
    site_id = world.site_guid(site)
    return next((n for n, qm in world.nodes.items() if qm.is_psc and qm.site_identifier == site_id), None)


def bsc_can_join(world: World, site: str) -> bool:
    """Whether a BSC can be added to ``site`` now (4.2): its PSC runs and holds its own site partition.

    The PSC creates the BSC's machine object in that partition; a PSC that has not yet received its
    partition (a site just added) fails the create, and the BSC would never become its neighbor.
    """
    psc = site_psc(world, site)
    return psc is not None and bool(world.up.get(psc)) and world.nodes[psc].my_site_partition is not None


def move_psc(world: World, site: str, new: str) -> str:
    """Make ``new`` the PSC of ``site``; returns the old PSC's name (see the module docstring)."""
    old = site_psc(world, site)
    if old is None:
        raise HandoverError(f"site {site} has no PSC")
    old_qm = world.nodes[old]
    if old_qm.is_pec:
        raise HandoverError(f"{old} is the PEC: its site's PSC cannot move")
    if new in world.nodes:
        raise HandoverError(f"{new} is already a server")
    pec = next((n for n, qm in world.nodes.items() if qm.is_pec), None)
    if pec is None or not world.up.get(pec):
        raise HandoverError("the PEC is not running: it cannot update the site object")
    # the old PSC stops for good: what it has not sent is lost, as with any crash
    if world.up.get(old):
        world.crash(old)
    del world.nodes[old]
    del world.up[old]
    qm = world.add_node(new, Role.PSC, site, pec)
    take_over(qm, old_qm)
    for other in world.nodes.values():
        if other.is_bsc and other.site_identifier == qm.site_identifier:
            # how a BSC learns its PSC's name before it has the site partition is implementation-
            # specific (3.1.3.1): the administrator configures the new name
            other.configured_psc_name = new
    for observer in world.observers:  # observation hook: the servers changed under the observers
        changed = getattr(observer, "topology_changed", None)
        if changed is not None:
            changed(world)
    world.note("handover", site=site, old=old, new=new)
    world.start(new)
    world.client_request(pec, ClientRequest(
        "update", ObjectType.MQDS_SITE, PEC_PARTITION_ID, path_name=site,
        properties=(Property(P["PROPID_S_PSC"], new),),
        scope=default_scope(ObjectType.MQDS_SITE, PEC_PARTITION_ID),
    ))
    return old


def take_over(qm: QueueManager, old: QueueManager) -> None:
    """Give ``qm`` the old PSC's persisted replication state and directory; it owns the site partition.

    A recorded trace declares what this transfers (a ``handover`` event, :mod:`mqspec.oracle.handover`).
    """
    qm.partitions = copy.deepcopy(old.partitions)
    qm.psc_neighbors = copy.deepcopy(old.psc_neighbors)
    qm.bsc_neighbors = copy.deepcopy(old.bsc_neighbors)
    qm.deleted_objects = copy.deepcopy(old.deleted_objects)
    qm.directory = old.directory.copy()
    lose_volatile_state(qm)
    for partition in qm.partitions:
        if partition.partition_id == qm.site_identifier:
            partition.authority_name = qm.machine_name
