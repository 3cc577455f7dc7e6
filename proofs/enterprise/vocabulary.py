"""The enterprise model's sorts, state and axioms: what a state of a whole enterprise is, for any number of servers.

Sorts (uninterpreted, so every statement is about every enterprise): ``Server``, ``Partition``,
``Object`` (a directory object, named by its GUID), ``SeqNumber`` (SEQUENCE_NUMBER, 2.2.2, with
only its order: ``le`` is a total order by axiom, MIN and MAX its ends) and ``SyncReply`` (one
SyncReplyMessage, 2.2.8, its fields immutable; ``rsent`` says which ones are in flight).

The state is a set of relations and functions over them (:data:`SYMBOLS`): per server and
partition the replication state of 3.1.1.2.3 (``last``, ``purged``, ``allowed``, ``window``,
``sync0``), the AuthorityName (``authname``), the directory objects with their SeqNumber
(``held``/``ver``), the DeletedObjectCollection (``tombd``/``tseq``, 3.1.1.2.2), the PSC neighbors
with their acknowledgements (``pscnb``/``acked``, 3.1.1.2.4); the network (messages in flight,
never removed: a message that is never received is lost, one received twice is duplicated, and
any order of receipt is possible); and ghost state (``alast``/``apurged``: the partition's
authority's LastSeqNumber and PurgedSeqNumber, kept across handovers; ``hist``/``hdel``: the
authority's history, which change touched or deleted which object; ``used``: the servers that
ever existed; ``handed``: which PSC took a site over from which, through handovers).

A state is a :class:`State`: one Z3 declaration per mutable symbol (the immutable ones are
shared by every state), named by the symbol and the state's tag (``last`` and ``last'``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import z3

Server = z3.DeclareSort("Server")
Partition = z3.DeclareSort("Partition")
Object = z3.DeclareSort("Object")
SeqNumber = z3.DeclareSort("SeqNumber")
SyncReply = z3.DeclareSort("SyncReply")
B = z3.BoolSort()

S, P, O, N, R = Server, Partition, Object, SeqNumber, SyncReply


@attrs.frozen
class Symbol:
    """A relation (range Bool) or function of the vocabulary; ``ghost`` symbols are proof state, not protocol state."""

    name: str
    domain: tuple[z3.SortRef, ...]
    range: z3.SortRef
    mutable: bool
    doc: str
    ghost: bool = False


def _sym(name: str, domain: tuple[z3.SortRef, ...], rng: z3.SortRef, doc: str, *, mutable: bool = True,
         ghost: bool = False) -> Symbol:
    return Symbol(name, domain, rng, mutable, doc, ghost)


SYMBOLS: tuple[Symbol, ...] = (
    # the order of sequence numbers (2.2.2 Compare) and the configuration
    _sym("le", (N, N), B, "x <= y in the order of 2.2.2 Compare", mutable=False),
    _sym("zero", (), N, "MIN_SEQ_NUMBER", mutable=False),
    _sym("top", (), N, "MAX_SEQ_NUMBER", mutable=False),
    _sym("pec", (), S, "the PEC", mutable=False),
    _sym("ent", (), P, "the enterprise partition (PEC_PARTITION_ID)", mutable=False),
    _sym("bsc", (S,), B, "the server is a BSC (else a PSC; the PEC is a PSC, 1.3.1.1)", mutable=False),
    _sym("site", (S,), P, "the server's site partition (QueueManager.SiteIdentifier)", mutable=False),
    _sym("part", (O,), P, "the partition an object belongs to", mutable=False),
    # a SyncReplyMessage's fields (2.2.8) and changes, one item per object
    _sym("rsrc", (R,), S, "who sent the reply", mutable=False),
    _sym("rdst", (R,), S, "the requester it answers", mutable=False),
    _sym("rpart", (R,), P, "PartitionID", mutable=False),
    _sym("rfrom", (R,), N, "FromSeqNumber", mutable=False),
    _sym("rto", (R,), N, "ToSeqNumber", mutable=False),
    _sym("rpur", (R,), N, "PurgedSeqNumber", mutable=False),
    _sym("rknown", (R,), N, "the request's KnownPurgedSeqNumber (ghost: what the reply may leave out)",
         mutable=False, ghost=True),
    _sym("rc2", (R,), B, "CompleteSync0 is 2 (the sync0 synchronization is complete)", mutable=False),
    _sym("rhas", (R, O), B, "the reply carries a change of the object", mutable=False),
    _sym("rseq", (R, O), N, "that change's SeqNumber", mutable=False),
    _sym("rdl", (R, O), B, "that change is a delete (a tombstone sent)", mutable=False),
    # per-server state
    _sym("alive", (S,), B, "the server runs in the enterprise (not yet added, or stopped for good by a handover)"),
    _sym("has", (S, P), B, "the server holds a DirectoryPartition of the partition"),
    _sym("authname", (S, P, S), B, "DirectoryPartition.AuthorityName names the server"),
    _sym("last", (S, P), N, "DirectoryPartition.LastSeqNumber"),
    _sym("purged", (S, P), N, "DirectoryPartition.PurgedSeqNumber"),
    _sym("allowed", (S, P), N, "DirectoryPartition.AllowedPurgeSeqNumber"),
    _sym("window", (S, P), N, "DirectoryPartition.ChangeMissingWindow"),
    _sym("sync0", (S, P), B, "DirectoryPartition.PurgeState is SYNC0 (else NORMAL: STARTSYNC0 never outlives "
                             "Start Sync0 State, nothing sets COMPLETESYNC0, E-135)"),
    _sym("held", (S, O), B, "the server's directory holds the object"),
    _sym("ver", (S, O), N, "the object's SeqNumber there (MIN: marked by Reset Directory Partition, 3.3.7.10)"),
    _sym("tombd", (S, O), B, "a DeletedObject of the object is in the DeletedObjectCollection"),
    _sym("tseq", (S, O), N, "its SeqNumber"),
    _sym("twice", (S, P), B, "the server holds a second DirectoryPartition of the partition, and a second PSC "
                             "neighbor for its PSC (E-104)"),
    _sym("pscnb", (S, S), B, "the second server is in the first's PSCNeighborCollection"),
    _sym("acked", (S, S, P), N, "what that PSC neighbor acknowledged of the partition (AckedSeqNumber / "
                                "AckedPECSeqNumber)"),
    # messages in flight
    _sym("prop", (P, N, N), B, "a ChangePropagationMessage carries the change x of p with PurgedSeqNumber u "
                               "(PreviousSeqNumber: the number before x)"),
    _sym("hdr_i", (S, P, N, N), B, "an intersite SeqNumberHeader of the sender: p's LastSeqNumber l, PurgedSeqNumber u"),
    _sym("hdr_b", (S, P, N, N), B, "an intrasite SeqNumberHeader (to BSCs) of the sender: p's l and u"),
    _sym("sreq", (S, P, N, N, N), B, "a SyncRequestMessage of the requester: p, From, To, KnownPurgedSeqNumber"),
    _sym("sreq0", (S, P, N, N, N), B, "the same with IsSync0 set"),
    _sym("ap", (S, S, P, N), B, "an AlreadyPurgedMessage from the first server to the second: p, PurgedSeqNumber"),
    _sym("ack", (S, S, P, N), B, "a PSCAckMessage from a PSC to the server it names as authority: p, AckedSeqNumber"),
    _sym("rsent", (R,), B, "the SyncReplyMessage is in flight"),
    # ghost state
    _sym("alast", (P,), N, "the partition's authority's LastSeqNumber (kept across handovers)", ghost=True),
    _sym("apurged", (P,), N, "the partition's authority's PurgedSeqNumber", ghost=True),
    _sym("hist", (O, N), B, "the authority's change x touched the object (its SeqNumber became x)", ghost=True),
    _sym("hdel", (O, N), B, "the authority's change x deleted the object", ghost=True),
    _sym("used", (S,), B, "the server has been in the enterprise (a name a handover's new PSC may not take)",
         ghost=True),
    _sym("handed", (S, S), B, "the second server took a site over from the first, through one or more handovers",
         ghost=True),
)
BY_NAME = {s.name: s for s in SYMBOLS}
MUTABLE = tuple(s.name for s in SYMBOLS if s.mutable)


def declare(sym: Symbol, tag: str) -> Any:
    name = sym.name + tag
    if not sym.domain:
        return z3.Const(name, sym.range)
    return z3.Function(name, *sym.domain, sym.range)


_IMMUTABLE = {s.name: declare(s, "") for s in SYMBOLS if not s.mutable}


class State:
    """One state: an attribute per symbol (``st.last(s, p)``); immutable symbols are the same in every state."""

    def __init__(self, tag: str = "", fresh: Iterable[str] = MUTABLE, base: State | None = None) -> None:
        self.tag = tag
        for name, decl in _IMMUTABLE.items():
            setattr(self, name, decl)
        fresh = set(fresh)
        for name in MUTABLE:
            if name in fresh or base is None:
                setattr(self, name, declare(BY_NAME[name], tag))
            else:
                setattr(self, name, getattr(base, name))
        self.fresh = frozenset(fresh)

    def __getattr__(self, name: str) -> Any:  # pragma: no cover - a typo in a formula
        raise AttributeError(f"no symbol {name!r} in the enterprise vocabulary")


# --- quantifiers and the order ---------------------------------------------------------------------------------

_COUNTER = [0]


def var(name: str, sort: z3.SortRef) -> Any:
    return z3.Const(name, sort)


def forall(vs: list[Any], body: Any) -> Any:
    return z3.ForAll(vs, body) if vs else body


def exists(vs: list[Any], body: Any) -> Any:
    return z3.Exists(vs, body) if vs else body


X, Y, Z = var("X", N), var("Y", N), var("Z", N)


def le(st: State, a: Any, b: Any) -> Any:
    return st.le(a, b)


def lt(st: State, a: Any, b: Any) -> Any:
    return z3.And(st.le(a, b), a != b)


def axioms(st: State) -> list[Any]:
    """``le`` is a total order with MIN its least and MAX its greatest element (2.2.2); the PEC is a PSC and the
    enterprise partition is no server's site (1.3.1.2)."""
    s = var("s", S)
    return [
        z3.ForAll([X], st.le(X, X)),
        z3.ForAll([X, Y, Z], z3.Implies(z3.And(st.le(X, Y), st.le(Y, Z)), st.le(X, Z))),
        z3.ForAll([X, Y], z3.Implies(z3.And(st.le(X, Y), st.le(Y, X)), X == Y)),
        z3.ForAll([X, Y], z3.Or(st.le(X, Y), st.le(Y, X))),
        z3.ForAll([X], z3.And(st.le(st.zero, X), st.le(X, st.top))),
        st.zero != st.top,
        z3.Not(st.bsc(st.pec)),
        z3.ForAll([s], st.site(s) != st.ent),
    ]


def owner(st: State, t: Any, p: Any) -> Any:
    """1.3.1.2: the PEC owns the enterprise partition, a site's PSC the site's partition."""
    return z3.And(z3.Not(st.bsc(t)), z3.Or(st.site(t) == p, z3.And(t == st.pec, p == st.ent)))


def auth(st: State, t: Any, p: Any) -> Any:
    """``QueueManager.is_authority_of``: the server runs, holds the partition and owns it."""
    return z3.And(st.alive(t), st.has(t, p), owner(st, t, p))


def successor(st: State, a: Any, b: Any) -> Any:
    """``b`` is ``a`` + 1 (2.2.2 Increment below MAX): the next number, with none between."""
    z = var("between", N)
    return z3.And(lt(st, a, b), z3.ForAll([z], z3.Not(z3.And(lt(st, a, z), lt(st, z, b)))))


def smax(st: State, a: Any, b: Any) -> Any:
    return z3.If(st.le(a, b), b, a)
