"""Which branches of the MC-MQDSRP handlers a run reached: the clause and branch counts of bench/stateful.py.

A *branch* is a block of statements a handler runs or skips as a whole: a function's body, and
each body of an ``if`` / ``elif`` / ``else``, ``for`` / ``while`` (and their ``else``), ``try``
(its handlers, ``else`` and ``finally``) and ``with`` inside it. It is reached when its first
statement runs. Branches are counted per function of the handler modules and, for a function
registered with ``@clause``, per clause (MC-MQDSRP section). :class:`Reach` records the lines
that run (``sys.settrace``, handler modules only) while it is active; :func:`vector_reach` is what
the handler vectors reach (:mod:`mqspec.vectors.handlers`), the measure a workload is held to.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path
from types import FrameType
from typing import Any

import attrs

REFIMPL = Path(__file__).resolve().parents[2] / "refimpl"
HANDLER_MODULES = ("mqdsrp_common.py", "mqdsrp_objects.py", "mqdsrp_server.py", "mqdsrp_client.py")
#: the fields of a compound statement that hold a block of statements
_BLOCKS = ("body", "orelse", "finalbody")


@attrs.frozen(order=True)
class Branch:
    """One block of a handler module: where its first statement is, the function and its clause."""

    module: str
    line: int
    function: str
    section: str | None  # the @clause section of the function, if it has one
    text: str  # the first statement's first line
    #: the headers of the compound statements holding the block, outermost first, " / " between
    #: ("orelse of if x:" for an else block): names a branch without its line number
    where: str = attrs.field(default="", eq=False, order=False)

    def __str__(self) -> str:
        where = f"{self.section} " if self.section else ""
        return f"{self.module}:{self.line} {where}{self.function}: {self.text}"


def _section(fn: ast.FunctionDef) -> str | None:
    for deco in fn.decorator_list:
        if (isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "clause" and len(deco.args) >= 2
                and isinstance(deco.args[1], ast.Constant)):
            return str(deco.args[1].value)
    return None


def _first(block: list[ast.stmt]) -> ast.stmt | None:
    for node in block:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring runs nothing
        return node
    return None


def module_branches(path: Path) -> list[Branch]:
    """Every branch of the functions in one module, in line order."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: list[Branch] = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        section = _section(fn)
        blocks: list[list[ast.stmt]] = [fn.body]
        for node in ast.walk(fn):
            if node is fn or isinstance(node, ast.FunctionDef):
                continue
            blocks.extend(getattr(node, f) for f in _BLOCKS if isinstance(getattr(node, f, None), list))
            if isinstance(node, ast.Try):
                blocks.extend(h.body for h in node.handlers)
        chains = _chains(fn.body, lines, ())
        for block in blocks:
            first = _first(block)
            if first is not None and _owner(fn, first) is fn:
                found.append(Branch(path.name, first.lineno, fn.name, section, lines[first.lineno - 1].strip(),
                                    " / ".join(chains.get(id(block), ()))))
    return sorted(set(found))


def _chains(block: list[ast.stmt], lines: list[str], chain: tuple[str, ...]) -> dict[int, tuple[str, ...]]:
    """For each block nested in ``block`` (not inside a nested function): the headers that hold it."""
    out: dict[int, tuple[str, ...]] = {}
    for node in block:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        header = lines[node.lineno - 1].strip()
        inner = [(f, getattr(node, f)) for f in _BLOCKS if isinstance(getattr(node, f, None), list)]
        if isinstance(node, ast.Try):
            inner += [(f"handler {lines[h.lineno - 1].strip()}", h.body) for h in node.handlers]
        for field, sub in inner:
            label = header if field == "body" else f"{field} of {header}"
            out[id(sub)] = (*chain, label)
            out.update(_chains(sub, lines, (*chain, label)))
    return out


def _owner(fn: ast.FunctionDef, stmt: ast.stmt) -> ast.FunctionDef:
    """The innermost function of ``fn`` (itself or a nested one) whose lines hold ``stmt``."""
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef) and node is not fn and node.lineno < stmt.lineno <= (node.end_lineno or 0):
            return node
    return fn


def handler_branches() -> list[Branch]:
    """The branches of every handler module."""
    return [b for name in HANDLER_MODULES for b in module_branches(REFIMPL / name)]


class Reach:
    """The handler lines that run while active (``with Reach() as r: ...``; then ``r.reached(branches)``)."""

    def __init__(self, modules: tuple[str, ...] = HANDLER_MODULES) -> None:
        self.files = {str(REFIMPL / name): name for name in modules}
        self.lines: set[tuple[str, int]] = set()
        #: the functions of those modules that ran (the refinement campaign empties it per handler run)
        self.called: set[str] = set()
        self._previous: Any = None

    def _trace(self, frame: FrameType, event: str, arg: object) -> Any:
        name = self.files.get(frame.f_code.co_filename)
        if name is None:
            return None
        self.called.add(frame.f_code.co_name)
        lines = self.lines

        def local(frame: FrameType, event: str, arg: object) -> Any:
            if event == "line":
                lines.add((name, frame.f_lineno))
            return local

        return local

    def __enter__(self) -> Reach:
        self._previous = sys.gettrace()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)

    def reached(self, branches: Iterable[Branch]) -> set[Branch]:
        return {b for b in branches if (b.module, b.line) in self.lines}


def vector_reach(mode: Any) -> set[Branch]:
    """The branches the handler vectors of ``mode`` (a refimpl Mode) reach."""
    from mqspec.vectors.handlers import all_situations, build_vector, run_event

    built = [build_vector(s, mode) for s in all_situations()]
    with Reach() as reach:
        for vector in built:
            run_event(vector.pre, vector.event)
    return reach.reached(handler_branches())


@attrs.frozen
class Unreachable:
    """A branch the handler vectors reach (from a state they build) that no run of a conforming
    enterprise can: where it is (module, function, the tail of its ``where`` and its first
    statement), in which modes, and why."""

    module: str
    function: str
    where: str
    text: str
    reason: str
    modes: tuple[str, ...] = ("clarified",)

    def matches(self, branch: Branch, mode: str) -> bool:
        return (mode in self.modes and branch.module == self.module and branch.function == self.function
                and branch.where.endswith(self.where) and branch.text == self.text)


_STATES = ("between events a partition's PurgeState is NORMAL or SYNC0: Start Sync0 State (3.3.7.10) sets "
           "STARTSYNC0 and then SYNC0 within the one event (the modelled reset cannot fail), and nothing sets "
           "COMPLETESYNC0 (E-135)")
_COMPLETING = ("no server sends CompleteSync0 COMPLETING in clarified mode to a server: ChangeMissingWindow is MAX for "
               "as long as a partition is in SYNC0 (Start Sync0 State sets it; 3.1.7.2.2, 3.1.7.2.4 and 3.2.7.1 change "
               "it only in NORMAL or below a finite window), so every sync0 request asks To = MAX, which 3.2.7.3 "
               "answers with To = LastSeqNumber: COMPLETED (a request sent by hand may ask less, as the campaign's "
               "a-bsc-acked-and-a-short-sync0-request.yaml does, for a requester that is no server)")
_AUTHORITY = ("mqspec's [MS-MQDS] model (mqds.directory_client_request) raises Read Next Sequence Number and "
              "Propagate Directory Change only at the partition's authority; elsewhere Change Remote Object")
_SYNC_OPERATION = ("not modelled: no related protocol mqspec models raises a synchronize (0x03) Change Remote "
                   "Object or Propagate Directory Change (directory clients create, update, delete: "
                   "mqds.ClientRequest); sync changes travel only in Sync Replies (3.2.7.8, 3.3.7.5)")

#: the branches the vectors reach that a conforming enterprise cannot (bench/stateful.py reports them
#: apart from the missed ones, with their reason; a run that reaches one is reported too)
UNREACHABLE: tuple[Unreachable, ...] = (
    Unreachable("mqdsrp_client.py", "send_sync_request", "if partition.purge_state not in (PurgeState.NORMAL, PurgeState.SYNC0):",
                "return", _STATES, ("clarified", "literal")),
    Unreachable("mqdsrp_server.py", "receive_change_propagation", "if partition.purge_state is not PurgeState.NORMAL:",
                "continue", _STATES),
    Unreachable("mqdsrp_client.py", "complete_sync0_state",
                "if partition.purge_state not in (PurgeState.SYNC0, PurgeState.COMPLETESYNC0):", "return",
                "its only caller, Receive Sync Reply (3.3.7.5), raises it only for a partition in SYNC0",
                ("clarified", "literal")),
    Unreachable("mqdsrp_client.py", "start_sync0_state",
                "if partition.last_seq_number >= purged_seq_number or partition.purged_seq_number >= purged_seq_number:",
                "return", "its only caller, Receive Already Purged (3.3.7.7), returns on the same two tests first",
                ("clarified", "literal")),
    Unreachable("mqdsrp_client.py", "receive_sync_reply", "orelse of if sync0_state == CompleteSync0.COMPLETED:",
                "elif sync0_state == CompleteSync0.COMPLETING:", _COMPLETING),
    Unreachable("mqdsrp_client.py", "receive_sync_reply", "elif sync0_state == CompleteSync0.COMPLETING:",
                "send_sync_request(qm, ctx, partition)", _COMPLETING),
    Unreachable("mqdsrp_server.py", "receive_sync_request", "elif to_seq != partition.last_seq_number:",
                "complete = CompleteSync0.COMPLETING", _COMPLETING),
    Unreachable("mqdsrp_common.py", "propagate_directory_change",
                "orelse of elif qm.is_psc and qm.my_site_partition is not None and partition_id == qm.my_site_partition.partition_id:",
                "return", _AUTHORITY, ("clarified", "literal")),
    Unreachable("mqdsrp_common.py", "read_next_sequence_number",
                "orelse of elif qm.is_psc and qm.my_site_partition is not None and partition_id == qm.my_site_partition.partition_id:",
                "return MIN_SEQ_NUMBER", _AUTHORITY, ("clarified", "literal")),
    Unreachable("mqdsrp_common.py", "receiving_replication_messages",
                "if operation == Operation.CHANGE_REQUEST: / handler except DecodeError: of try:", "return",
                "a Nack carries the body of a message its sender sent and asked acknowledgments for; servers "
                "send only ChangeRequests that decode (the explorer's raw `send` asks for none)",
                ("clarified", "literal")),
    Unreachable("mqdsrp_client.py", "receive_request_nack", "handler except DecodeError: of try:", "return",
                "a NackBadSignature carries the body of a message its sender sent and asked acknowledgments for; "
                "servers send only replication messages that decode (the explorer's raw `send` asks for none)",
                ("clarified", "literal")),
    Unreachable("mqdsrp_server.py", "receive_sync_request", "if deleted.identifier is None:",
                "continue  # literal: a tombstone without an Identifier cannot be encoded (E-108)",
                "clarified Handle Directory Delete records a tombstone only with its object's GUID (E-108)"),
    Unreachable("mqdsrp_objects.py", "handle_enterprise_update",
                "if new_pec_name is not None and new_pec_name != partition.authority_name:",
                "partition.authority_name = new_pec_name  # type: ignore[assignment]",
                "not modelled: moving the PEC to another machine (the handover of E-313 moves a site's PSC); every "
                "replica's enterprise partition names the PEC from initialization (3.1.3.1) on",
                ("clarified", "literal")),
    Unreachable("mqdsrp_server.py", "receive_change_request", "orelse of elif change.command is Command.DELETE:",
                "elif change.command is Command.SYNC:", _SYNC_OPERATION, ("clarified", "literal")),
    Unreachable("mqdsrp_server.py", "receive_change_request", "elif change.command is Command.SYNC:",
                "change_result, _ = handle_directory_sync(qm, ctx, my_partition, object_type_value, path_name, guid,",
                _SYNC_OPERATION, ("clarified", "literal")),
    Unreachable("mqdsrp_common.py", "propagate_directory_change", "orelse of elif operation == 0x02:",
                "elif operation == 0x03:", _SYNC_OPERATION, ("clarified", "literal")),
    Unreachable("mqdsrp_common.py", "propagate_directory_change", "elif operation == 0x03:",
                "sync_type = object_type if ctx.clarified else second_value(properties)", _SYNC_OPERATION,
                ("clarified", "literal")),
    Unreachable("mqdsrp_common.py", "propagate_directory_change", "elif operation == 0x03: / if ctx.clarified:  # clarification E-100",
                "status = r_status", _SYNC_OPERATION),
    Unreachable("mqdsrp_objects.py", "handle_directory_sync", "if status != st.MQ_OK:", "return status, need_flush",
                "clarified, a sync change names its object by GUID (E-112) and the authority's names are unique: a "
                "replica's namesake of another GUID was deleted there, and its deletion comes first in the ascending "
                "reply (E-119), or, purged, the replica is in sync0, where the reset marked the namesake and E-317 "
                "deletes it; a create or update refused by the directory would need a change a conforming authority "
                "does not send"),
    Unreachable("mqdsrp_common.py", "propagate_directory_change", "if status != st.MQ_OK:", "return",
                "with iPostCreate / iPostUpdate / iPostDelete true, Handle Directory Create, Update and Delete "
                "return MQ_OK on every path (the directory operation ran before); only the synchronize operation's "
                "Handle Directory Sync can fail here. " + _SYNC_OPERATION),
)


def unreachable_reason(branch: Branch, mode: str) -> str | None:
    """Why ``branch`` cannot run in a conforming enterprise in ``mode`` (None: it can)."""
    return next((u.reason for u in UNREACHABLE if u.matches(branch, mode)), None)


def summary(reached: set[Branch], against: set[Branch] | None = None, mode: str = "clarified") -> dict[str, Any]:
    """Clause and branch counts of ``reached``; with ``against``, the branches of it not reached: those
    :data:`UNREACHABLE` names for ``mode`` (with their reason) apart from the ``missed`` ones."""
    branches = handler_branches()
    clauses = {b.section for b in branches if b.section}
    out: dict[str, Any] = {
        "branches": len(branches), "branches_reached": len(reached),
        "clauses": len(clauses), "clauses_reached": len({b.section for b in reached if b.section}),
    }
    if against is not None:
        not_reached = sorted(against - reached)
        reasons = {b: unreachable_reason(b, mode) for b in not_reached}
        missed = [b for b in not_reached if reasons[b] is None]
        out.update(vector_branches=len(against), vector_branches_missed=len(missed),
                   missed=[str(b) for b in missed],
                   vector_branches_unreachable=len(not_reached) - len(missed),
                   unreachable=[f"{b}: unreachable: {reasons[b]}" for b in not_reached if reasons[b] is not None],
                   # a branch said to be unreachable that a run reached: the reason is wrong
                   reached_unreachable=[str(b) for b in sorted(reached) if unreachable_reason(b, mode)])
    return out
