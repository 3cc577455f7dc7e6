"""The explorer's steering rules: short input sequences that take the enterprise to handler branches the
rest of the workload reaches only by luck (issue 13: the soak reaches every branch the handler vectors reach).

:class:`Steering` is a base class of :class:`~mqspec.proofs.explore.machine.ReplicationMachine`; its rules
use the machine's ``_apply`` and state. Every input is one the enterprise can really see: a directory
client's request, a fault the machine models (drop, cut link), a topology change (4.1, 4.2), or a
message a conformant peer sent, arriving late (``send``: a SeqNumberHeader, Sync Reply or AlreadyPurged
holding only what its sender really said, or would say now). Each rule's docstring names the branch it
is for and why its inputs are real.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule
from mqspec.model import mqdsrp
from mqspec.model.mqdsrp import (
    AlreadyPurgedMessage,
    ChangePropagationMessage,
    CompleteSync0,
    PartitionSeqNumbers,
    SeqNumberHeader,
    SyncReplyMessage,
)
from mqspec.model.seqnum import SequenceNumber
from mqspec.refimpl.mqdsrp_client import seq_number_header_entries
from mqspec.refimpl.effects import TimerScope
from mqspec.refimpl.mqdsrp_state import PEC_PARTITION_ID, PurgeState, Role

MIN = SequenceNumber(0)


def upstream(world: Any, node: str, partition: Any) -> str | None:
    """The server ``node`` hears ``partition`` from: a BSC's PSC (3.3.7.3's MyPSCName), else the partition's authority."""
    qm = world.nodes[node]
    name = qm.my_psc_name if qm.role is Role.BSC else partition.authority_name
    return name if name in world.nodes and name != node else None


def header_body(world: Any, sender: str, receiver: str, partition_id: Any,
                last: SequenceNumber, purged: SequenceNumber) -> bytes:
    """A ChangePropagation with no changes whose SeqNumberHeader is the one ``sender`` sends ``receiver``
    now (3.3.7.2), but with ``partition_id``'s entry saying ``last`` and ``purged`` (what an earlier header said)."""
    qm = world.nodes[sender]
    scope = TimerScope.INTRASITE if world.nodes[receiver].role is Role.BSC else TimerScope.INTERSITE
    entries = [e for e in seq_number_header_entries(qm, scope) if e.partition_id != partition_id]
    entries.append(PartitionSeqNumbers(partition_id, last, purged))
    return mqdsrp.encode(ChangePropagationMessage(qm.site_identifier, False, (), SeqNumberHeader(sender, tuple(entries))))


class Steering:
    """Rules that steer a run to rare handler branches (mixed into the replication machine)."""

    #: at least this many steps between stale-message rounds and between overtaken-header rounds
    STALE_EVERY = 30
    OVERTAKE_EVERY = 30
    #: at least this many steps between pending-across-a-purge rounds (600 updates each, as costly as a burst)
    PENDING_EVERY = 100
    steps_since_stale = 0
    steps_since_overtake = 0
    steps_since_pending = 0

    # --- late messages about a purged partition ------------------------------------------------

    def _purged_replicas(self) -> list[tuple[str, Any, str]]:
        """(server, partition, its upstream) for each partition a running server holds, does not own, and has purged."""
        world = self.world
        found = []
        for name, qm in world.nodes.items():
            if not world.up.get(name):
                continue
            for p in qm.partitions:
                if p.purged_seq_number == MIN or qm.is_authority_of(p):
                    continue
                source = upstream(world, name, p)
                if source is not None and world.up.get(source):
                    found.append((name, p, source))
        return found

    @precondition(lambda self: self.driver is not None and self.steps_since_stale >= self.STALE_EVERY)
    @rule(which=st.integers(0, 255))
    def late_messages(self, which: int) -> None:
        """Messages a server's upstream sent before the server purged a partition arrive now (held in the network):
        a SeqNumberHeader and an empty Sync Reply with the PurgedSeqNumber of then (MIN), and the AlreadyPurged that
        told it the purge point it has. 3.2.7.1 skips the header's entry ("PurgedSeqNumber < dirPartition.PurgedSeqNumber:
        continue"), 3.3.7.5 drops the reply, 3.3.7.7 ignores the AlreadyPurged (LastSeqNumber or PurgedSeqNumber there already)."""
        self.steps_since_stale = 0
        found = self._purged_replicas()
        if not found:
            return
        node, p, source = found[which % len(found)]
        pid = p.partition_id
        bodies = {
            "SeqNumberHeader": header_body(self.world, source, node, pid, p.last_seq_number, MIN),
            "SyncReply": mqdsrp.encode(SyncReplyMessage(self.world.nodes[source].site_identifier, pid, MIN, MIN, MIN,
                                                        CompleteSync0.NOT_IN_SYNC0, ())),
            "AlreadyPurged": mqdsrp.encode(AlreadyPurgedMessage(self.world.nodes[source].site_identifier, pid,
                                                                p.purged_seq_number)),
        }
        for kind, body in bodies.items():
            self._apply({"input": "send", "from": source, "to": node, "body": body.hex()},
                        f"late {kind} {source}->{node}")
        self._apply({"input": "advance", "seconds": 0.1}, "deliver (0.1 s)")

    # --- a header overtaken by a newer one, and an empty Sync Reply -----------------------------

    def _overtake_pairs(self) -> list[tuple[str, str, Any, dict[str, Any]]]:
        """(replica, authority, partition, an update at the authority of one object of it): a BSC and its
        site's PSC (the site's directory client machine), or a PSC and the PEC (the enterprise object)."""
        world = self.world
        machines = {m["site"]: m for m in self.catalog.get("machine", []) if m.get("fixed")}
        pairs = []
        for name, qm in world.nodes.items():
            if not world.up.get(name):
                continue
            if qm.role is Role.BSC:
                site = next((s for s in self.sites if name in s["bscs"]), None)
                if site is None or site["site"] not in machines or qm.my_psc_name != site["psc"]:
                    continue
                authority, pid = site["psc"], world.site_guid(site["site"])
                update = {"input": "request", "at": authority, "operation": "update", "type": "machine",
                          "path": machines[site["site"]]["path"], "site": site["site"]}
            elif qm.role is Role.PSC:
                authority, pid = "PEC0", PEC_PARTITION_ID
                update = {"input": "request", "at": authority, "operation": "update", "type": "enterprise",
                          "path": "enterprise"}
            else:
                continue
            p = qm.find_partition(pid)
            if (p is None or p.purge_state is not PurgeState.NORMAL or not world.up.get(authority)
                    or (name, authority) in self.cut or (authority, name) in self.cut):
                continue
            pairs.append((name, authority, pid, update))
        return pairs

    @precondition(lambda self: self.driver is not None and self.steps_since_overtake >= self.OVERTAKE_EVERY)
    @rule(which=st.integers(0, 255))
    def overtaken_header(self, which: int) -> None:
        """Three updates at a partition's authority; its SeqNumberHeader of now reaches a replica, then an older one
        (sent after the first update, delayed in the network); then the object is updated once more.

        The first header opens the window and sends a Sync Request (3.2.7.1); the older one is skipped ("LastSeqNumber <
        ChangeMissingWindow: continue"); the Sync Reply for the window holds no change (the object's SeqNumber has moved
        past it, 3.2.7.8), and "the reply answers exactly the window" moves LastSeqNumber to ToSeqNumber (3.3.7.5).
        """
        self.steps_since_overtake = 0
        pairs = self._overtake_pairs()
        if not pairs:
            return
        replica, authority, pid, update = pairs[which % len(pairs)]
        props = ({"PROPID_QM_QUOTA": which} if update["type"] == "machine" else {"PROPID_E_S_INTERVAL1": 200 + which})
        update = {**update, "properties": props}
        for i in range(3):
            self._apply(update, f"overtaken header: update {i + 1} at {authority}")
        p = self.world.nodes[authority].find_partition(pid)
        last, purged = p.last_seq_number, p.purged_seq_number
        for what, seq in (("now", last), ("older", last.sub(2))):
            body = header_body(self.world, authority, replica, pid, seq, purged)
            self._apply({"input": "send", "from": authority, "to": replica, "body": body.hex()},
                        f"overtaken header: {authority}'s header of {what} -> {replica}")
        self._apply(update, f"overtaken header: update 4 at {authority}")
        self._apply({"input": "advance", "seconds": 0.5}, "overtaken header: the sync (0.5 s)")

    # --- a PSC in sync0 asked by its new BSC ---------------------------------------------------------

    def _site_purged(self) -> bool:
        """Whether a running site authority has purged its site partition (a new PSC's replica of it starts in sync0)."""
        world = self.world
        return any(world.up.get(n) and qm.my_site_partition is not None
                   and qm.my_site_partition.purged_seq_number != MIN for n, qm in world.nodes.items() if qm.is_psc)

    @precondition(lambda self: (self._topology_due() and len(self.sites) < self.MAX_SITES
                                and self.bscs_added < self.MAX_NEW_BSCS and self._site_purged()))
    @rule()
    def new_site_in_sync0(self) -> None:
        """A site and its PSC join after another site's PSC purged its partition (4.1); the new PSC's request for
        that partition gets AlreadyPurged and it starts sync0 (3.3.7.10). Its sync0 reply is lost, so it stays in
        sync0 until the next SeqNumberHeader (E-264), and a BSC joins the new site meanwhile (4.2): its Sync
        Request for that partition reaches a PSC in sync0 ("If dirPartition.PurgeState is not NORMAL: Take no
        further action", 3.2.7.3)."""
        before = len(self.sites)
        self.add_site()
        if len(self.sites) == before:  # the PEC is down
            return
        site = self.sites[-1]
        qm = self.world.nodes.get(site["psc"])
        if qm is None:
            return
        in_sync0 = None
        for _ in range(80):
            in_sync0 = next((p for p in qm.partitions if p.purge_state is PurgeState.SYNC0), None)
            if in_sync0 is not None and qm.my_site_partition is not None:
                break
            if self.world.scheduler.peek_time() is None:
                return
            self._next_event()
        else:
            return
        self._apply({"input": "drop", "from": in_sync0.authority_name, "to": site["psc"], "operation": "SyncReply",
                     "times": 1}, f"new site in sync0: drop {site['psc']}'s sync0 reply")
        if not self.world.up.get(site["psc"]):
            return
        self.bscs_added += 1
        bsc = self._new(f"BSC{site['site'].removeprefix('site')}n")
        site["bscs"].append(bsc)
        self._apply({"input": "add_bsc", "site": site["site"], "bsc": bsc}, f"add {bsc} to {site['site']}")
        self._apply({"input": "advance", "seconds": 2.0}, "new site in sync0: the BSC's requests (2 s)")

    # --- a just-added site's PSC moved before it got its site partition ------------------------------

    @precondition(lambda self: (self._topology_due() and len(self.sites) < self.MAX_SITES
                                and self.moves < self.MAX_MOVES))
    @rule()
    def new_site_moved_at_once(self) -> None:
        """A site and its PSC join (4.1), the PEC's first Sync Request for the new partition is lost (a drop), and at
        once the site's PSC moves to another machine (the handover, E-313): the new machine learns the site object
        by replication, holds the partition as a replica, and is then named its PSC (3.1.7.2.11, E-315)."""
        before = len(self.sites)
        self.add_site()
        if len(self.sites) == before:  # the PEC is down
            return
        site = self.sites[-1]
        self._apply({"input": "drop", "operation": "SyncRequest", "times": 1}, "drop the next SyncRequest")
        self.moves += 1
        new = self._new(f"PSC{site['site'].removeprefix('site')}m")
        old, site["psc"] = site["psc"], new
        self._apply({"input": "move_psc", "site": site["site"], "to": new},
                    f"move {site['site']}'s PSC from {old} to {new}")

    # --- a pending change older than the purge point ---------------------------------------------------

    @precondition(lambda self: self.driver is not None and self.steps_since_pending >= self.PENDING_EVERY)
    @rule(which=st.integers(0, 255))
    def pending_across_a_purge(self, which: int) -> None:
        """A BSC loses the ChangePropagation carrying 300 updates at its site's PSC, which has purged; the next change
        is queued out of order (3.1.7.2.2) and the reply to its Sync Request is lost too. The PSC purges further
        during 300 more updates, and its SeqNumberHeader of now raises the BSC's AllowedPurgeSeqNumber: the BSC's
        sync then moves it far enough to purge (3.1.7.2.9, E-133) past the queued change's PurgedSeqNumber, and
        Check Pending Changes removes it ("pending.PurgedSeqNumber < PurgedSeqNumber", 3.1.7.2.4)."""
        self.steps_since_pending = 0
        pairs = [(r, a, pid, u) for r, a, pid, u in self._overtake_pairs()
                 if u["type"] == "machine" and self.world.nodes[a].my_site_partition is not None
                 and self.world.nodes[a].my_site_partition.purged_seq_number != MIN]
        if not pairs:
            return
        replica, authority, pid, update = pairs[which % len(pairs)]

        def updates(times: int, value: int) -> None:
            self._apply({"input": "repeat", "times": times, "inputs": [{**update, "properties": {"PROPID_QM_QUOTA": value}}]},
                        f"pending across a purge: {times} updates at {authority}")

        self._apply({"input": "drop", "from": authority, "to": replica, "operation": "ChangePropagation", "times": 1},
                    f"pending across a purge: drop {authority}'s next ChangePropagation to {replica}")
        updates(300, which)
        self._apply({"input": "advance", "seconds": 3.0}, "pending across a purge: propagation (3 s)")
        self._apply({"input": "drop", "from": authority, "to": replica, "operation": "SyncReply", "times": 1},
                    f"pending across a purge: drop {authority}'s next SyncReply to {replica}")
        updates(1, which + 1)
        self._apply({"input": "advance", "seconds": 3.0}, "pending across a purge: propagation (3 s)")
        updates(300, which + 2)
        self._apply({"input": "advance", "seconds": 60.0}, "pending across a purge: acks (60 s)")
        p = self.world.nodes[authority].find_partition(pid)
        if p is None or not self.world.up.get(authority) or not self.world.up.get(replica):
            return
        body = header_body(self.world, authority, replica, pid, p.last_seq_number, p.purged_seq_number)
        self._apply({"input": "send", "from": authority, "to": replica, "body": body.hex()},
                    f"pending across a purge: {authority}'s header of now -> {replica}")
        self._apply({"input": "advance", "seconds": 1.0}, "pending across a purge: the sync (1 s)")
