"""The reference's state and effects in the model's terms: the projection the refinement check compares.

:func:`server_of` reads a :class:`~mqspec.refimpl.mqdsrp_state.QueueManager` into the model's
:class:`~mqspec.proofs.server_model.Server` (every attribute of 3.1.1 and the server's waits; the
directory as a copy, or the live store for an event that only reads it); :func:`view` turns a
model server into plain values, field by field, and :func:`emitted_of` the reference's effects into
the model's :data:`~mqspec.proofs.server_model.Emitted`. Two views are equal exactly when the
states agree on everything the model holds.
"""

from __future__ import annotations

from typing import Any

from mqspec.proofs import server_model as sm
from mqspec.refimpl.effects import (
    CancelTimer,
    DirectoryOperation,
    EnqueueMessage,
    RequestCompleted,
    StartTimer,
)
from mqspec.refimpl.mqdsrp_state import QueueManager


def _partition(p: Any) -> sm.Partition:
    part = sm.new_partition(p.partition_id, p.authority_name)
    part.last_seq_number = p.last_seq_number.value
    part.purged_seq_number = p.purged_seq_number.value
    part.allowed_purge_seq_number = p.allowed_purge_seq_number.value
    part.previous_purged_seq_number = p.previous_purged_seq_number.value
    part.change_missing_window = p.change_missing_window.value
    part.purge_state = int(p.purge_state)
    part.pending_changes = [sm.core_change(c) for c in p.pending_changes]
    return part


def _neighbor(n: Any) -> sm.Neighbor:
    return sm.Neighbor(n.partition_id, n.machine_name, n.acked_seq_number.value, n.acked_pec_seq_number.value,
                       n.last_acked_time, list(n.available_changes))


def _mine(qm: QueueManager, which: Any, parts: list[sm.Partition]) -> sm.Partition | None:
    """MyEnterprisePartition / MySitePartition: the model partition at the same place, or a detached copy."""
    if which is None:
        return None
    for i, p in enumerate(qm.partitions):
        if p is which:
            return parts[i]
    return _partition(which)  # a partition object no longer in the collection


def server_of(qm: QueueManager, directory: Any) -> sm.Server:
    """The model's state of ``qm``; ``directory`` is the store the model's directory events act on."""
    parts = [_partition(p) for p in qm.partitions]
    return sm.Server(
        machine_name=qm.machine_name, identifier=qm.identifier, site_identifier=qm.site_identifier,
        role=qm.role.value, pec_name=qm.pec_name, configured_psc_name=qm.configured_psc_name,
        partitions=parts, psc_neighbors=[_neighbor(n) for n in qm.psc_neighbors],
        bsc_neighbors=[_neighbor(n) for n in qm.bsc_neighbors],
        deleted_objects=[sm.tombstone(d.identifier, d.partition_id, d.seq_number.value, d.object_type, d.scope)
                         for d in qm.deleted_objects],
        my_enterprise_partition=_mine(qm, qm.my_enterprise_partition, parts),
        my_site_partition=_mine(qm, qm.my_site_partition, parts),
        my_psc_name=qm.my_psc_name, replication_queue_open=qm.replication_queue_open,
        pending_requests={k: sm.Waiting(w.request_identifier, w.message, w.origin, w.client_request)
                          for k, w in qm.pending_requests.items()},
        next_request_identifier=qm.next_request_identifier, next_client_request=qm.next_client_request,
        last_seq_number_header_time=qm.last_seq_number_header_time,
        last_seq_number_header_sent=dict(qm.last_seq_number_header_sent),
        directory=sm.Directory(directory),
    )


def _which(s: sm.Server, p: sm.Partition | None) -> Any:
    if p is None:
        return None
    for i, q in enumerate(s.partitions):
        if q is p:
            return i
    return ("not in the collection", p.partition_id)


def _neighbor_view(n: sm.Neighbor) -> tuple[Any, ...]:
    return (n.partition_id, n.machine_name, n.acked_seq_number, n.acked_pec_seq_number, n.last_acked_time,
            tuple(n.available_changes))


def view(s: sm.Server) -> dict[str, Any]:
    """The model state as plain values: what the check compares and a departure shows."""
    return {
        "machine_name": s.machine_name, "role": s.role, "site_identifier": s.site_identifier,
        "pec_name": s.pec_name, "configured_psc_name": s.configured_psc_name,
        "partitions": [{
            "partition_id": p.partition_id, "authority_name": p.authority_name,
            "last_seq_number": p.last_seq_number, "purged_seq_number": p.purged_seq_number,
            "allowed_purge_seq_number": p.allowed_purge_seq_number,
            "previous_purged_seq_number": p.previous_purged_seq_number,
            "change_missing_window": p.change_missing_window, "purge_state": p.purge_state,
            "pending_changes": tuple(c.payload for c in p.pending_changes if c.present),
        } for p in s.partitions],
        "my_enterprise_partition": _which(s, s.my_enterprise_partition),
        "my_site_partition": _which(s, s.my_site_partition),
        "my_psc_name": s.my_psc_name,
        "replication_queue_open": s.replication_queue_open,
        "psc_neighbors": [_neighbor_view(n) for n in s.psc_neighbors],
        "bsc_neighbors": [_neighbor_view(n) for n in s.bsc_neighbors],
        "deleted_objects": [(t.payload.identifier, t.payload.partition_id, t.seq_number, t.payload.object_type,
                             t.payload.scope) for t in s.deleted_objects if t.present],
        "pending_requests": {k: (w.request_identifier, w.message, w.origin, w.client_request)
                             for k, w in sorted(s.pending_requests.items())},
        "next_request_identifier": s.next_request_identifier,
        "next_client_request": s.next_client_request,
        "last_seq_number_header_time": s.last_seq_number_header_time,
        "last_seq_number_header_sent": dict(sorted(s.last_seq_number_header_sent.items())),
    }


def _position(qm: QueueManager, which: Any) -> Any:
    if which is None:
        return None
    for i, p in enumerate(qm.partitions):
        if p is which:
            return i
    return ("not in the collection", which.partition_id)


def _reference_neighbor(n: Any) -> tuple[Any, ...]:
    return (n.partition_id, n.machine_name, n.acked_seq_number.value, n.acked_pec_seq_number.value, n.last_acked_time,
            tuple(n.available_changes))


def view_of(qm: QueueManager) -> dict[str, Any]:
    """:func:`view` of ``server_of(qm)``, read from the queue manager directly (the check's post-state)."""
    return {
        "machine_name": qm.machine_name, "role": qm.role.value, "site_identifier": qm.site_identifier,
        "pec_name": qm.pec_name, "configured_psc_name": qm.configured_psc_name,
        "partitions": [{
            "partition_id": p.partition_id, "authority_name": p.authority_name,
            "last_seq_number": p.last_seq_number.value, "purged_seq_number": p.purged_seq_number.value,
            "allowed_purge_seq_number": p.allowed_purge_seq_number.value,
            "previous_purged_seq_number": p.previous_purged_seq_number.value,
            "change_missing_window": p.change_missing_window.value, "purge_state": int(p.purge_state),
            "pending_changes": tuple(p.pending_changes),
        } for p in qm.partitions],
        "my_enterprise_partition": _position(qm, qm.my_enterprise_partition),
        "my_site_partition": _position(qm, qm.my_site_partition),
        "my_psc_name": qm.my_psc_name,
        "replication_queue_open": qm.replication_queue_open,
        "psc_neighbors": [_reference_neighbor(n) for n in qm.psc_neighbors],
        "bsc_neighbors": [_reference_neighbor(n) for n in qm.bsc_neighbors],
        "deleted_objects": [(d.identifier, d.partition_id, d.seq_number.value, d.object_type, d.scope)
                            for d in qm.deleted_objects],
        "pending_requests": {k: (w.request_identifier, w.message, w.origin, w.client_request)
                             for k, w in sorted(qm.pending_requests.items())},
        "next_request_identifier": qm.next_request_identifier,
        "next_client_request": qm.next_client_request,
        "last_seq_number_header_time": qm.last_seq_number_header_time,
        "last_seq_number_header_sent": dict(sorted(qm.last_seq_number_header_sent.items())),
    }


def emitted_of(qm: QueueManager, effects: list[Any]) -> list[sm.Emitted]:
    """The reference's effects as the model emits them (the records of clarifications are not compared)."""
    out: list[sm.Emitted] = []
    for e in effects:
        kind = type(e)
        if kind is EnqueueMessage:
            sender = "" if (e.node == qm.machine_name and e.sender_identifier == qm.identifier) else \
                f" (from {e.node} {e.sender_identifier})"
            # a message to no machine (literal E-336: a PSC neighbor with no name): the model writes its destination
            # as '' (server_model.py's Send), as the reference's Send Sync Request does
            out.append(sm.Send((e.destination or "") + sender, e.body, e.time_to_reach_queue, e.time_to_be_received,
                               e.priority, e.ack_requested.value, e.admin_queue, e.response_queue, e.format_name))
        elif kind is StartTimer:
            out.append(sm.StartTimer(e.timer.kind, tuple(e.timer.args), e.delay))
        elif kind is CancelTimer:
            out.append(sm.CancelTimer(e.timer.kind, tuple(e.timer.args)))
        elif kind is DirectoryOperation:
            out.append(sm.DirectoryEvent(e.operation, e.status, e.object_type, e.path_name, e.guid, e.partition_id,
                                         e.seq_number))
        elif kind is RequestCompleted:
            out.append(sm.Completed(e.request, e.status))
    return out
