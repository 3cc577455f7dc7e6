"""The enterprise model's transitions: one per handler of the reference (or group the pseudo-code raises together).

Each :class:`Transition` is named as the refimpl handler it models and cites its section; its
``build`` gives, for a pre-state and the transition's arguments, a :class:`Step`: the guard (when
the event can happen: a message in flight, the server's role), the new value of each symbol it
changes (every other symbol keeps its value), its branches by name (each shown reachable by a
test) and, as the per-server model does, the register entries under whose literal reading it acts
differently (``literal``), branching on :class:`~mqspec.proofs.z3_reading.Reading` where refimpl
branches on ``ctx.clarified``.

Where the model is coarser than the handler (see the package docstring): events raised by other
events at a cadence the arithmetic sets (a PSC's ack at every 256th change, Purge Deleted Objects
every 256 changes, Send Sync Request from eight places) are transitions of their own that may
happen at any time; a change queued out of order (PendingChangeCollection) is the change still
in flight, received again when it is in order (Check Pending Changes); a change that fails to
apply changes nothing (a stutter, which preserves every invariant).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import z3

from ..z3_reading import Reading
from .vocabulary import (
    BY_NAME,
    N,
    O,
    P,
    R,
    S,
    State,
    auth,
    exists,
    forall,
    lt,
    owner,
    smax,
    successor,
    var,
)

Formula = Any


@attrs.define
class Step:
    """What one transition does from a pre-state: guard, updates (symbol -> new value as a function of its
    arguments), branches by name, literal branches (guard, erratum) and named assumptions it makes."""

    guard: list[Formula] = attrs.field(factory=list)
    updates: dict[str, Callable[..., Any]] = attrs.field(factory=dict)
    branches: dict[str, Formula] = attrs.field(factory=dict)
    literal: list[tuple[Formula, str]] = attrs.field(factory=list)
    assumptions: dict[str, Formula] = attrs.field(factory=dict)

    def lit(self, guard: Formula, erratum: str) -> None:
        self.literal.append((guard, erratum))


@attrs.frozen
class Transition:
    name: str
    section: str
    title: str
    params: tuple[tuple[str, z3.SortRef], ...]
    build: Callable[[State, dict[str, Any], Reading], Step]


def params_of(tr: Transition, tag: str = "") -> dict[str, Any]:
    return {name: z3.Const(f"{tr.name}.{name}{tag}", sort) for name, sort in tr.params}


def _vars(name: str) -> list[Any]:
    sym = BY_NAME[name]
    return [var(f"{name}_{i}", sort) for i, sort in enumerate(sym.domain)]


def relation(tr: Transition, pre: State, params: dict[str, Any], reading: Reading,
             tag: str = "'") -> tuple[State, Step, list[Formula]]:
    """The post-state (fresh declarations for the changed symbols, the pre-state's for the others), the step,
    and the transition as formulas: its guard and one definition per changed symbol."""
    step = tr.build(pre, params, reading)
    post = State(tag, fresh=tuple(step.updates), base=pre)
    defs = []
    for name, new in step.updates.items():
        vs = _vars(name)
        defs.append(forall(vs, getattr(post, name)(*vs) == new(*vs)) if vs else getattr(post, name) == new())
    return post, step, list(step.guard) + defs


# --- helpers -----------------------------------------------------------------------------------------------------


def point(f: Any, key: tuple[Any, ...], value: Any) -> Callable[..., Any]:
    """``f`` with ``f(*key)`` set to ``value``."""
    return lambda *args: z3.If(z3.And(*(a == k for a, k in zip(args, key, strict=True))), value, f(*args))


def where(f: Any, cond: Callable[..., Any], value: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` with every point where ``cond`` holds set to ``value`` there."""
    return lambda *args: z3.If(cond(*args), value(*args), f(*args))


def add(f: Any, cond: Callable[..., Any]) -> Callable[..., Any]:
    """The relation ``f`` with the tuples where ``cond`` holds added."""
    return lambda *args: z3.Or(f(*args), cond(*args))


def _tuple_is(args: tuple[Any, ...], key: tuple[Any, ...]) -> Any:
    return z3.And(*(a == k for a, k in zip(args, key, strict=True)))


# --- 3.1.7.1.2 Propagate Directory Change (with 3.1.7.1.3 and 3.2.7.2 at the authority) --------------------


def _propagate(a: State, p: dict[str, Any], r: Reading) -> Step:
    """The authority numbers a change LastSeqNumber + 1 (3.1.7.1.3), applies it, records a deletion's tombstone
    and queues the change for its neighbors (3.1.7.1.2; a change request it owns, 3.2.7.2, raises the same)."""
    s, part, o, x, dele, named = p["server"], p["partition"], p["object"], p["seq"], p["delete"], p["named"]
    y = var("y", N)
    new_object = z3.And(z3.Not(dele), z3.ForAll([y], z3.Not(a.hist(o, y))))
    live = a.held(s, o)
    st = Step(guard=[auth(a, s, part), a.part(o) == part, successor(a, a.alast(part), x),
                     z3.Or(new_object, live)])
    # E-260: fewer than 2**64 - 1 changes in a partition (Increment would wrap at MAX)
    st.assumptions["fewer_changes_than_max_seq_number"] = lt(a, x, a.top)
    if r("E-108"):  # clarification E-108: every successful delete records its tombstone
        records = dele
    else:  # literal: only Receive Change Request records one, and only for a request naming the GUID
        records = z3.And(dele, named)
        st.lit(z3.And(dele, z3.Not(named)), "E-108")
    if r("E-103"):  # clarification E-103: the change carries the partition's PurgedSeqNumber
        stamp = a.purged(s, part)
    else:
        stamp = x
        st.lit(z3.BoolVal(True), "E-103")
    st.updates = {
        "alast": point(a.alast, (part,), x),
        "last": point(a.last, (s, part), x),
        "hist": add(a.hist, lambda o2, y2: z3.And(o2 == o, y2 == x)),
        "hdel": add(a.hdel, lambda o2, y2: z3.And(dele, o2 == o, y2 == x)),
        "held": point(a.held, (s, o), z3.Not(dele)),
        "ver": point(a.ver, (s, o), x),
        "tombd": point(a.tombd, (s, o), z3.Or(a.tombd(s, o), records)),
        "tseq": point(a.tseq, (s, o), z3.If(records, x, a.tseq(s, o))),
        "prop": add(a.prop, lambda p2, x2, u2: z3.And(p2 == part, x2 == x, u2 == stamp)),
    }
    st.branches = {"create": new_object, "update": z3.And(live, z3.Not(dele)), "delete": z3.And(live, dele)}
    return st


# --- 3.1.7.2.2 Handle Directory Change, with 3.1.7.2.3 Handle In-Sync Change -------------------------------


def _handle_change(a: State, p: dict[str, Any], r: Reading) -> Step:
    """A replica receives the change x of p (3.2.7.1 via 3.1.5.2): ignore it if old, apply it in order (3.1.7.2.3),
    else queue it and widen the missing-change window (E-109; E-311)."""
    s, part, x, u, first = p["server"], p["partition"], p["seq"], p["purged"], p["queue_was_empty"]
    last, window = a.last(s, part), a.window(s, part)
    st = Step(guard=[a.alive(s), a.has(s, part), a.prop(part, x, u)])
    stale = z3.Or(a.le(x, last), lt(a, u, a.purged(s, part)))
    z = var("z", N)
    # PreviousSeqNumber (the number before x) <= LastSeqNumber < x
    in_order = z3.And(z3.Not(stale), z3.ForAll([z], z3.Implies(lt(a, z, x), a.le(z, last))))
    gap = z3.And(z3.Not(stale), z3.Not(in_order))
    widen = z3.And(gap, first, lt(a, window, x))
    if r("E-311"):  # clarification E-311: a window of MAX in NORMAL asks for the gap at once
        widen = z3.Or(widen, z3.And(gap, first, window == a.top, z3.Not(a.sync0(s, part))))
    else:
        st.lit(z3.And(gap, first, window == a.top, z3.Not(a.sync0(s, part))), "E-311")

    def this(o2: Any) -> Any:  # the object the change is about
        return z3.And(in_order, a.part(o2) == part, a.hist(o2, x))

    records = z3.BoolVal(True) if r("E-108") else z3.BoolVal(False)
    if not r("E-108"):  # literal: Handle Directory Delete records no DeletedObject at a replica
        o3 = var("o", O)
        st.lit(z3.Exists([o3], z3.And(this(o3), a.hdel(o3, x))), "E-108")
    st.updates = {
        "last": point(a.last, (s, part), z3.If(in_order, x, last)),
        "held": where(a.held, lambda s2, o2: z3.And(s2 == s, this(o2)), lambda s2, o2: z3.Not(a.hdel(o2, x))),
        "ver": where(a.ver, lambda s2, o2: z3.And(s2 == s, this(o2)), lambda s2, o2: x),
        "tombd": add(a.tombd, lambda s2, o2: z3.And(records, s2 == s, this(o2), a.hdel(o2, x))),
        "tseq": where(a.tseq, lambda s2, o2: z3.And(records, s2 == s, this(o2), a.hdel(o2, x)), lambda s2, o2: x),
        "window": point(a.window, (s, part), z3.If(widen, x, window)),
    }
    o4 = var("o", O)
    st.branches = {"stale": stale, "apply": z3.And(in_order, z3.Not(z3.Exists([o4], this(o4)))),
                   "apply_object": z3.Exists([o4], z3.And(this(o4), z3.Not(a.hdel(o4, x)))),
                   "apply_delete": z3.Exists([o4], z3.And(this(o4), a.hdel(o4, x))),
                   "queue_and_widen": widen, "queue": z3.And(gap, z3.Not(widen))}
    return st


# --- 3.2.7.1 Receive Change Propagation (the SeqNumberHeader) ---------------------------------------------------


def _receive_header(a: State, p: dict[str, Any], r: Reading) -> Step:
    """Raise AllowedPurgeSeqNumber; when the header shows changes this server missed, take its sender as the
    authority (a PSC) and set the window to them (the Send Sync Request it raises is :data:`SEND_SYNC_REQUEST`)."""
    s, src, part, l, u, l1 = p["server"], p["sender"], p["partition"], p["last"], p["purged"], p["last_plus_one"]
    intersite = z3.If(a.bsc(s), a.hdr_b(src, part, l, u), a.hdr_i(src, part, l, u))
    st = Step(guard=[a.alive(s), a.has(s, part), intersite])
    last, window, sync0 = a.last(s, part), a.window(s, part), a.sync0(s, part)
    go = z3.Not(lt(a, u, a.purged(s, part)))
    behind = z3.And(go, lt(a, last, l))
    is_max = window == a.top
    literal_skip = lt(a, l, window)
    if r("E-264"):  # clarification E-264: a window of MAX holds no header back in NORMAL
        proceed = z3.And(behind, z3.If(is_max, z3.Not(sync0), z3.Not(literal_skip)))
    else:
        proceed = z3.And(behind, z3.Not(literal_skip))
        st.lit(z3.And(behind, is_max, z3.Or(sync0, literal_skip != sync0)), "E-264")
    if r("E-116"):  # clarification E-116: the window is the header's LastSeqNumber
        new_window = l
    else:
        new_window = l1
        st.guard.append(successor(a, l, l1))
        st.lit(proceed, "E-116")
    st.updates = {
        "allowed": point(a.allowed, (s, part), z3.If(go, smax(a, a.allowed(s, part), u), a.allowed(s, part))),
        "window": point(a.window, (s, part), z3.If(proceed, new_window, window)),
        # "If the queue manager is a PSC: Set dirPartition.AuthorityName to machineName" (a BSC sets MyPSCName)
        "authname": lambda s2, p2, t: z3.If(z3.And(proceed, z3.Not(a.bsc(s)), s2 == s, p2 == part), t == src,
                                            a.authname(s2, p2, t)),
    }
    st.branches = {"older_purge": z3.Not(go), "not_behind": z3.And(go, z3.Not(behind)),
                   "held_back": z3.And(behind, z3.Not(proceed)),
                   "ask_psc": z3.And(proceed, z3.Not(a.bsc(s))), "ask_bsc": z3.And(proceed, a.bsc(s))}
    return st


# --- 3.3.7.2 Send Change Propagation (the SeqNumberHeader entries) ----------------------------------------------


def _send_header(a: State, p: dict[str, Any], r: Reading) -> Step:
    """A PSC sends a SeqNumberHeader entry: intersite for a partition it owns (LastSeqNumber, PurgedSeqNumber),
    intrasite to its BSCs for any partition (PurgedSeqNumber if it owns it, else AllowedPurgeSeqNumber)."""
    s, part, inter = p["server"], p["partition"], p["intersite"]
    own = auth(a, s, part)
    st = Step(guard=[a.alive(s), a.has(s, part), z3.Not(a.bsc(s)), z3.Implies(inter, own)])
    last = a.last(s, part)
    stamp = z3.If(own, a.purged(s, part), a.allowed(s, part))
    st.updates = {
        "hdr_i": add(a.hdr_i, lambda s2, p2, l2, u2: z3.And(inter, s2 == s, p2 == part, l2 == last, u2 == stamp)),
        "hdr_b": add(a.hdr_b, lambda s2, p2, l2, u2: z3.And(z3.Not(inter), s2 == s, p2 == part, l2 == last,
                                                         u2 == stamp)),
    }
    st.branches = {"intersite": inter, "intrasite_own": z3.And(z3.Not(inter), own),
                   "intrasite_replica": z3.And(z3.Not(inter), z3.Not(own))}
    return st


# --- 3.3.7.3 Send Sync Request ------------------------------------------------------------------------------------


def _send_sync_request(a: State, p: dict[str, Any], r: Reading) -> Step:
    """Ask for the changes after LastSeqNumber up to ChangeMissingWindow, with KnownPurgedSeqNumber (raised by 3.3.3,
    3.2.7.1, 3.1.7.2.2, 3.1.7.2.4, 3.3.7.5, 3.3.7.10, 3.1.7.2.11: modelled as possible at any time)."""
    s, part = p["server"], p["partition"]
    st = Step(guard=[a.alive(s), a.has(s, part), z3.Not(auth(a, s, part))])
    key = (s, part, a.last(s, part), a.window(s, part), a.purged(s, part))
    sync0 = a.sync0(s, part)
    st.updates = {
        "sreq": add(a.sreq, lambda *args: z3.And(z3.Not(sync0), _tuple_is(args, key))),
        "sreq0": add(a.sreq0, lambda *args: z3.And(sync0, _tuple_is(args, key))),
    }
    st.branches = {"normal": z3.Not(sync0), "sync0": sync0}
    return st


# --- 3.2.7.3 Receive Sync Request (with 3.2.7.7 Send Already Purged and 3.2.7.8 Lookup Directory Objects) ------


def _receive_sync_request(a: State, p: dict[str, Any], r: Reading) -> Step:
    """Answer AlreadyPurged, or with the objects and tombstones numbered in [From, To] (To: LastSeqNumber for MAX)."""
    d, req, part, f, t, k, s0, rep = (p["server"], p["requester"], p["partition"], p["from"], p["to"], p["known"],
                                      p["sync0"], p["reply"])
    asked = z3.If(s0, a.sreq0(req, part, f, t, k), a.sreq(req, part, f, t, k))
    st = Step(guard=[a.alive(d), a.has(d, part), z3.Not(a.sync0(d, part)), asked])
    last, purged = a.last(d, part), a.purged(d, part)
    # the per-server model's assumption, not provable here: see ASSUMPTIONS
    st.assumptions["sync_request_to_within_responder_history"] = z3.Or(t == a.top, a.le(t, last))
    already = z3.And(lt(a, f, purged), lt(a, k, purged))
    answer = z3.Not(already)
    to2 = z3.If(t == a.top, last, t)
    if r("E-314"):  # clarification E-314: a replica stamps the purge point its headers allow
        stamp = z3.If(z3.And(z3.Not(auth(a, d, part)), lt(a, purged, a.allowed(d, part))), a.allowed(d, part), purged)
    else:
        stamp = purged
        st.lit(z3.And(answer, z3.Not(auth(a, d, part)), lt(a, purged, a.allowed(d, part))), "E-314")

    def in_range(y: Any) -> Any:
        return z3.And(a.le(f, y), a.le(y, to2))

    o = var("o", O)
    sends_objects = z3.BoolVal(True) if r("E-117") else auth(a, d, part)
    if not r("E-117"):  # literal: syncObjectTypes is empty for a partition this server only replicates
        st.lit(z3.And(answer, z3.Not(auth(a, d, part))), "E-117")
    obj = z3.And(sends_objects, a.part(o) == part, a.held(d, o), in_range(a.ver(d, o)))
    if r("E-118"):  # clarification E-118: only this partition's tombstones in [From, To]
        tomb = z3.And(a.part(o) == part, a.tombd(d, o), in_range(a.tseq(d, o)))
    else:  # literal: every tombstone of every partition, relabelled with this PartitionID
        tomb = a.tombd(d, o)
        st.lit(z3.And(answer, z3.Exists([o], z3.And(a.tombd(d, o), z3.Not(
            z3.And(a.part(o) == part, in_range(a.tseq(d, o))))))), "E-118")
    st.guard += [
        z3.Implies(answer, z3.And(
            z3.Not(a.rsent(rep)), a.rsrc(rep) == d, a.rdst(rep) == req, a.rpart(rep) == part, a.rfrom(rep) == f,
            a.rto(rep) == to2, a.rpur(rep) == stamp, a.rknown(rep) == k,
            a.rc2(rep) == z3.And(s0, to2 == last),
            z3.ForAll([o], z3.And(a.rhas(rep, o) == z3.Or(obj, tomb),
                                  z3.Implies(obj, z3.And(a.rseq(rep, o) == a.ver(d, o), z3.Not(a.rdl(rep, o)))),
                                  z3.Implies(tomb, z3.And(a.rseq(rep, o) == a.tseq(d, o), a.rdl(rep, o)))))))]
    # E-119 (ascending order) is the receiver's reading of the chain: see _receive_sync_reply
    st.updates = {
        "ap": add(a.ap, lambda *args: z3.And(already, _tuple_is(args, (d, req, part, purged)))),
        "rsent": add(a.rsent, lambda r2: z3.And(answer, r2 == rep)),
    }
    st.branches = {"already_purged": already, "reply": z3.And(answer, z3.Not(s0)),
                   "reply_sync0_complete": z3.And(answer, s0, to2 == last),
                   "reply_sync0_partial": z3.And(answer, s0, to2 != last)}
    return st


# --- 3.3.7.5 Receive Sync Reply (with 3.1.7.2.2-4 for its changes and 3.3.7.11 Complete Sync0 State) -----------


def _receive_sync_reply(a: State, p: dict[str, Any], r: Reading) -> Step:
    """Apply the reply's changes in order, then complete sync0 (CompleteSync0 2) or close the missing-change
    window; an empty reply to the outstanding window moves LastSeqNumber to its ToSeqNumber."""
    s, rep, m = p["server"], p["reply"], p["top"]
    part = a.rpart(rep)
    st = Step(guard=[a.alive(s), a.rsent(rep), a.rdst(rep) == s, a.has(s, part)])
    last, window, sync0 = a.last(s, part), a.window(s, part), a.sync0(s, part)
    used = z3.Not(lt(a, a.rpur(rep), a.purged(s, part)))
    # the changes chain from FromSeqNumber: all are applied (in order) when FromSeqNumber <= LastSeqNumber;
    # otherwise the first is out of order and every one is queued (received again when in order)
    applies = z3.And(used, a.le(a.rfrom(rep), last))
    o = var("o", O)

    def above(o2: Any) -> Any:
        return z3.And(a.rhas(rep, o2), a.part(o2) == part, lt(a, last, a.rseq(rep, o2)))

    # m: the largest SeqNumber of the changes above LastSeqNumber (LastSeqNumber when there is none)
    st.guard += [z3.ForAll([o], z3.Implies(above(o), a.le(a.rseq(rep, o), m))),
                 z3.Or(z3.And(m == last, z3.ForAll([o], z3.Not(above(o)))),
                       z3.Exists([o], z3.And(above(o), a.rseq(rep, o) == m)))]
    if r("E-119"):  # clarification E-119: ascending order, so every change above LastSeqNumber is applied

        def applied(o2: Any) -> Any:
            return z3.And(applies, above(o2))
    else:  # literal: descending order chains each change to a larger one; only the largest is applied

        def applied(o2: Any) -> Any:
            return z3.And(applies, above(o2), a.rseq(rep, o2) == m)
        st.lit(z3.And(applies, z3.Exists([o], z3.And(above(o), a.rseq(rep, o) != m))), "E-119")
    last1 = z3.If(applies, m, last)
    # the per-server model's assumptions of a reply, not provable here: see ASSUMPTIONS
    st.assumptions["sync0_reply_reaches_purged_seq"] = z3.Implies(
        z3.And(used, sync0), z3.And(a.le(a.purged(s, part), a.rto(rep)),
                                    z3.Implies(a.rc2(rep), a.le(a.purged(s, part), last1))))
    records = z3.BoolVal(r("E-108"))
    if not r("E-108"):
        st.lit(z3.Exists([o], z3.And(applied(o), a.rdl(rep, o))), "E-108")
    # then the sync0 state or the window
    complete = z3.And(used, sync0, a.rc2(rep))
    normal = z3.And(used, z3.Not(sync0))
    was_max = window == a.top
    empty = z3.ForAll([o], z3.Not(a.rhas(rep, o)))
    answers = z3.And(normal, z3.Not(was_max), empty, window == a.rto(rep))
    # the empty answer moves LastSeqNumber to ToSeqNumber: it must answer a request made from LastSeqNumber or below
    st.assumptions["sync_reply_answers_a_request_since_sync0"] = z3.Implies(answers, a.le(a.rfrom(rep), last))
    if r("E-166"):  # clarification E-166: never backwards
        moves = z3.And(answers, lt(a, last1, a.rto(rep)))
    else:
        moves = answers
        st.lit(z3.And(answers, lt(a, a.rto(rep), last1)), "E-166")
    new_last = z3.If(moves, a.rto(rep), last1)
    new_window = z3.If(complete, a.zero, z3.If(z3.And(normal, z3.Or(was_max, answers)), a.zero, window))

    def marked(s2: Any, o2: Any, version: Any) -> Any:  # what Complete Sync0 State deletes
        return z3.And(complete, s2 == s, a.part(o2) == part, version == a.zero)

    st.updates = {
        "last": point(a.last, (s, part), new_last),
        "window": point(a.window, (s, part), new_window),
        "sync0": point(a.sync0, (s, part), z3.And(sync0, z3.Not(complete))),
        "held": lambda s2, o2: z3.If(z3.And(s2 == s, applied(o2)), z3.Not(a.rdl(rep, o2)),
                                     z3.And(a.held(s2, o2), z3.Not(marked(s2, o2, a.ver(s2, o2))))),
        "ver": where(a.ver, lambda s2, o2: z3.And(s2 == s, applied(o2)), lambda s2, o2: a.rseq(rep, o2)),
        "tombd": lambda s2, o2: z3.If(z3.And(records, s2 == s, applied(o2), a.rdl(rep, o2)), True,
                                      z3.And(a.tombd(s2, o2), z3.Not(marked(s2, o2, a.tseq(s2, o2))))),
        "tseq": where(a.tseq, lambda s2, o2: z3.And(records, s2 == s, applied(o2), a.rdl(rep, o2)),
                      lambda s2, o2: a.rseq(rep, o2)),
    }
    st.branches = {"older_purge": z3.Not(used), "queued": z3.And(used, z3.Not(applies)),
                   "applies_changes": z3.And(applies, z3.Exists([o], above(o))),
                   "complete_sync0": complete, "sync0_continues": z3.And(used, sync0, z3.Not(a.rc2(rep))),
                   "window_was_max": z3.And(normal, was_max), "empty_answer_moves_last": moves,
                   "window_stays": z3.And(normal, z3.Not(was_max), z3.Not(answers))}
    return st


# --- 3.3.7.7 Receive Already Purged, with 3.3.7.10 Start Sync0 State -------------------------------------------


def _receive_already_purged(a: State, p: dict[str, Any], r: Reading) -> Step:
    """Start sync0 when the sender purged history this replica still needs: reset the partition to MIN, mark every
    object and tombstone of it (MQDS Reset Directory Partition) and take the sender's PurgedSeqNumber (E-134)."""
    s, src, part, u = p["server"], p["sender"], p["partition"], p["purged"]
    st = Step(guard=[a.alive(s), a.has(s, part), a.ap(src, s, part, u)])
    go = z3.And(lt(a, a.last(s, part), u), lt(a, a.purged(s, part), u))

    def mine(s2: Any, o2: Any) -> Any:
        return z3.And(go, s2 == s, a.part(o2) == part)

    st.updates = {
        "sync0": point(a.sync0, (s, part), z3.Or(go, a.sync0(s, part))),
        "last": point(a.last, (s, part), z3.If(go, a.zero, a.last(s, part))),
        "window": point(a.window, (s, part), z3.If(go, a.top, a.window(s, part))),
        "purged": point(a.purged, (s, part), z3.If(go, u, a.purged(s, part))),
        "ver": where(a.ver, mine, lambda s2, o2: a.zero),
        "tseq": where(a.tseq, mine, lambda s2, o2: a.zero),
    }
    st.branches = {"start_sync0": go, "ignored": z3.Not(go)}
    return st


# --- 3.1.7.2.9 Purge Deleted Objects ------------------------------------------------------------------------------


def _purge(a: State, p: dict[str, Any], r: Reading) -> Step:
    """Remove the tombstones every PSC neighbor acknowledged (authority) or the authority allows (replica), keeping
    the buffer below LastSeqNumber; raised every 256 changes (3.1.7.2.3; at the authority, E-131)."""
    s, part, b, m = p["server"], p["partition"], p["buffer_end"], p["min_acked"]
    last, purged, allowed = a.last(s, part), a.purged(s, part), a.allowed(s, part)
    own = auth(a, s, part)
    st = Step(guard=[a.alive(s), a.has(s, part), z3.Not(a.sync0(s, part))])
    if r("E-130"):  # clarification E-130: LastSeqNumber - 1024 stops at MIN (below LastSeqNumber, or MIN)
        st.guard.append(z3.Or(lt(a, b, last), b == a.zero))
    else:  # literal: below 1024 it wraps to a number above LastSeqNumber
        st.lit(lt(a, last, b), "E-130")
    if not r("E-131"):  # literal: nothing raises Purge Deleted Objects at the authority
        st.guard.append(z3.Not(own))
    n = var("n", S)
    # minAckedSeqNumber over the PSC neighbors (E-132: LastSeqNumber when there are none)
    st.guard += [z3.ForAll([n], z3.Implies(a.pscnb(s, n), a.le(m, a.acked(s, n, part)))),
                 z3.Or(z3.Exists([n], z3.And(a.pscnb(s, n), m == a.acked(s, n, part))),
                       z3.And(m == last, z3.ForAll([n], z3.Not(a.pscnb(s, n)))))]
    stop = a.le(b, purged)
    if r("E-130"):
        auth_seq = z3.If(a.le(m, b), m, b)
    else:
        auth_seq = m
    auth_go = z3.And(own, z3.Not(stop), z3.Not(a.le(m, purged)))
    rep_below = lt(a, allowed, b)
    rep_go = z3.And(z3.Not(own), z3.Not(stop), z3.Not(z3.And(rep_below, lt(a, allowed, purged))))
    go = z3.Or(auth_go, rep_go)
    seq = z3.If(own, auth_seq, z3.If(rep_below, allowed, b))
    raise_purged = z3.And(go, lt(a, purged, seq))
    if not r("E-133"):  # literal: PurgedSeqNumber is never advanced
        st.lit(raise_purged, "E-133")
        raise_purged = z3.BoolVal(False)
    st.updates = {
        "tombd": lambda s2, o2: z3.And(a.tombd(s2, o2), z3.Not(z3.And(go, s2 == s, a.part(o2) == part,
                                                                     a.le(a.tseq(s2, o2), seq)))),
        "purged": point(a.purged, (s, part), z3.If(raise_purged, seq, purged)),
        "apurged": point(a.apurged, (part,), z3.If(z3.And(own, raise_purged), seq, a.apurged(part))),
    }
    st.branches = {"authority_purges": auth_go, "replica_purges_to_allowed": z3.And(rep_go, rep_below),
                   "replica_purges_to_buffer": z3.And(rep_go, z3.Not(rep_below)), "nothing": z3.Not(go)}
    return st


# --- 3.3.7.4 Send PSC Ack and 3.2.7.4 Receive PSC Ack -----------------------------------------------------------


def _send_psc_ack(a: State, p: dict[str, Any], r: Reading) -> Step:
    """A PSC acknowledges its LastSeqNumber of a partition to the server its AuthorityName names (raised by
    3.1.7.2.3 when LastSeqNumber's eighth byte is 0, in NORMAL or once LastSeqNumber reached PurgedSeqNumber)."""
    s, part, t = p["server"], p["partition"], p["authority"]
    st = Step(guard=[a.alive(s), z3.Not(a.bsc(s)), a.has(s, part), z3.Not(auth(a, s, part)), a.authname(s, part, t),
                     z3.Or(z3.Not(a.sync0(s, part)), a.le(a.purged(s, part), a.last(s, part)))])
    st.updates = {"ack": add(a.ack, lambda *args: _tuple_is(args, (s, t, part, a.last(s, part))))}
    st.branches = {"normal": z3.Not(a.sync0(s, part)), "sync0_caught_up": a.sync0(s, part)}
    return st


def _receive_psc_ack(a: State, p: dict[str, Any], r: Reading) -> Step:
    """The authority records what a PSC neighbor acknowledged of a partition it owns."""
    s, n, part, v = p["server"], p["neighbor"], p["partition"], p["acked"]
    st = Step(guard=[a.alive(s), a.ack(n, s, part, v), z3.Not(a.bsc(s)), a.pscnb(s, n), auth(a, s, part)])
    st.updates = {"acked": point(a.acked, (s, n, part), v)}
    st.branches = {"records": z3.BoolVal(True)}
    return st


# --- 3.1.7.2.11 Handle Site Update (a site object's PROPID_S_PSC applied) -----------------------------------------


def _site_update(a: State, p: dict[str, Any], r: Reading) -> Step:
    """Follow a site's PSC: set AuthorityName and rename the site's PSC neighbor, or create the site's partition
    (a sync change of a site this server lacks, E-114) with a PSC neighbor for its PSC at a PSC (E-106)."""
    s, part, t, old, again = p["server"], p["partition"], p["psc"], p["old_neighbor"], p["create_again"]
    st = Step(guard=[a.alive(s), part != a.ent])
    u = var("u", S)
    # the site object's PROPID_S_PSC names the site's PSC; a server learns a site's PSCs in handover order (its
    # AuthorityName and the PSC neighbor standing for the site name t or a PSC t took the site over from)
    st.assumptions["site_object_names_its_psc"] = z3.And(
        owner(a, t, part), a.used(t),
        z3.ForAll([u], z3.Implies(z3.Or(a.authname(s, part, u), z3.And(a.pscnb(s, u), a.site(u) == part)),
                                  z3.Or(u == t, a.handed(u, t)))))
    exists_ = a.has(s, part)
    create = z3.Not(exists_)
    is_psc = z3.Not(a.bsc(s))
    # the PSC neighbor standing for the site: renamed (3.1.7.2.11, E-310), or made for a new partition
    rename = z3.And(exists_, is_psc, a.pscnb(s, old), a.site(old) == part, z3.Not(a.bsc(old)), old != t)
    adds = z3.And(create, t != s, is_psc if r("E-106") else z3.BoolVal(True))
    if not r("E-106"):
        st.lit(z3.And(create, t != s, a.bsc(s)), "E-106")
    # E-104: at the PEC, Handle Directory Create of the site runs twice (a change request's create, then Propagate
    # Directory Change's with iPostCreate); its site block is not guarded by iPostCreate
    twice = z3.And(exists_, again, s == a.pec)
    if r("E-104"):  # clarification E-104: the site block is skipped when the partition exists
        makes_twice = z3.BoolVal(False)
    else:
        makes_twice = twice
        st.lit(twice, "E-104")
    st.updates = {
        "has": point(a.has, (s, part), True),
        "twice": point(a.twice, (s, part), z3.Or(a.twice(s, part), makes_twice)),
        "authname": lambda s2, p2, t2: z3.If(z3.And(s2 == s, p2 == part), t2 == t, a.authname(s2, p2, t2)),
        "last": point(a.last, (s, part), z3.If(create, a.zero, a.last(s, part))),
        "purged": point(a.purged, (s, part), z3.If(create, a.zero, a.purged(s, part))),
        "allowed": point(a.allowed, (s, part), z3.If(create, a.zero, a.allowed(s, part))),
        "window": point(a.window, (s, part), z3.If(create, a.top, a.window(s, part))),
        "sync0": point(a.sync0, (s, part), z3.And(exists_, a.sync0(s, part))),
        "pscnb": lambda s2, n2: z3.If(s2 == s, z3.If(n2 == t, z3.Or(a.pscnb(s, t), rename, adds),
                                                     z3.And(a.pscnb(s, n2), z3.Not(z3.And(rename, n2 == old)))),
                                      a.pscnb(s2, n2)),
        "acked": lambda s2, n2, p2: z3.If(z3.And(s2 == s, n2 == t, z3.Or(rename, z3.And(adds, z3.Not(a.pscnb(s, t))))),
                                          z3.If(rename, a.acked(s, old, p2), a.zero), a.acked(s2, n2, p2)),
    }
    st.branches = {"rename": rename, "rename_without_neighbor": z3.And(exists_, z3.Not(rename)),
                   "site_created_again_at_the_pec": twice,
                   "create_with_neighbor": adds, "create": z3.And(create, z3.Not(adds))}
    return st


# --- the handover (refimpl/handover.py, modelling E-313) and servers joining -----------------------------------

_PER_SERVER = ("has", "twice", "authname", "last", "purged", "allowed", "window", "sync0", "held", "ver", "tombd", "tseq",
               "pscnb", "acked")


def _move_psc(a: State, p: dict[str, Any], r: Reading) -> Step:
    """A site's PSC moves to another machine: the old one stops for good, the new one (a name no server had) takes
    over its persisted replication state and directory (3.1.1) and owns the site's partition; its volatile state
    starts over (the window MAX). The PEC's update of the site object then reaches the others (Handle Site Update)."""
    old, new, part = p["old"], p["new"], p["partition"]
    st = Step(guard=[a.alive(old), owner(a, old, part), part != a.ent, old != a.pec, z3.Not(a.used(new)),
                     owner(a, new, part), new != a.pec])

    def moved(name: str) -> Callable[..., Any]:
        f = getattr(a, name)
        return lambda s2, *rest: z3.If(s2 == new, f(old, *rest), f(s2, *rest))

    st.updates = {name: moved(name) for name in _PER_SERVER}
    st.updates["window"] = lambda s2, p2: z3.If(s2 == new, a.top, a.window(s2, p2))
    st.updates["authname"] = lambda s2, p2, t: z3.If(z3.And(s2 == new, p2 == part), t == new,
                                                     moved("authname")(s2, p2, t))
    st.updates["alive"] = lambda s2: z3.If(s2 == old, False, z3.Or(s2 == new, a.alive(s2)))
    st.updates["used"] = lambda s2: z3.Or(s2 == new, a.used(s2))
    st.updates["handed"] = lambda u1, u2: z3.Or(a.handed(u1, u2), z3.And(u2 == new, z3.Or(u1 == old,
                                                                                            a.handed(u1, old))))
    st.branches = {"move": z3.BoolVal(True)}
    return st


def _add_server(a: State, p: dict[str, Any], r: Reading) -> Step:
    """A new server joins (3.1.3.1): a BSC, or the PSC of a new site; it holds the enterprise partition, whose
    AuthorityName is the PEC's name "provided by the administrator"."""
    s = p["server"]
    x = var("x", S)
    # the PSC of a new site: no server of the enterprise was ever a PSC of it
    new_site_psc = z3.And(z3.Not(a.bsc(s)), a.alast(a.site(s)) == a.zero,
                          z3.ForAll([x], z3.Implies(a.used(x), z3.Not(owner(a, x, a.site(s))))))
    st = Step(guard=[z3.Not(a.used(s)), z3.Or(a.bsc(s), new_site_psc)])
    st.updates = {
        "alive": point(a.alive, (s,), True),
        "used": point(a.used, (s,), True),
        "has": point(a.has, (s, a.ent), True),
        "authname": lambda s2, p2, t: z3.If(z3.And(s2 == s, p2 == a.ent), t == a.pec, a.authname(s2, p2, t)),
    }
    st.branches = {"bsc": a.bsc(s), "psc_of_a_new_site": z3.Not(a.bsc(s))}
    return st


def _crash(a: State, p: dict[str, Any], r: Reading) -> Step:
    """A crash and restart (3.3.3 Initialization): what 3.1.1 does not persist is lost; the window is MAX again
    (the sync requests it raises are :data:`SEND_SYNC_REQUEST`)."""
    s = p["server"]
    st = Step(guard=[a.alive(s)])
    st.updates = {"window": lambda s2, p2: z3.If(s2 == s, a.top, a.window(s2, p2))}
    st.branches = {"restart": z3.BoolVal(True)}
    return st


TRANSITIONS: tuple[Transition, ...] = (
    Transition("propagate_directory_change", "3.1.7.1.2", "Propagate Directory Change (with Read Next Sequence "
               "Number, 3.1.7.1.3, and Receive Change Request at the authority, 3.2.7.2)",
               (("server", S), ("partition", P), ("object", O), ("seq", N), ("delete", z3.BoolSort()),
                ("named", z3.BoolSort())), _propagate),
    Transition("handle_directory_change", "3.1.7.2.2", "Handle Directory Change (with Handle In-Sync Change, "
               "3.1.7.2.3, and Check Pending Changes, 3.1.7.2.4)",
               (("server", S), ("partition", P), ("seq", N), ("purged", N), ("queue_was_empty", z3.BoolSort())),
               _handle_change),
    Transition("receive_change_propagation", "3.2.7.1", "Receive Change Propagation (the SeqNumberHeader)",
               (("server", S), ("sender", S), ("partition", P), ("last", N), ("purged", N), ("last_plus_one", N)),
               _receive_header),
    Transition("send_change_propagation", "3.3.7.2", "Send Change Propagation (the SeqNumberHeader)",
               (("server", S), ("partition", P), ("intersite", z3.BoolSort())), _send_header),
    Transition("send_sync_request", "3.3.7.3", "Send Sync Request", (("server", S), ("partition", P)),
               _send_sync_request),
    Transition("receive_sync_request", "3.2.7.3", "Receive Sync Request (with Send Already Purged, 3.2.7.7, and "
               "Lookup Directory Objects, 3.2.7.8)",
               (("server", S), ("requester", S), ("partition", P), ("from", N), ("to", N), ("known", N),
                ("sync0", z3.BoolSort()), ("reply", R)), _receive_sync_request),
    Transition("receive_sync_reply", "3.3.7.5", "Receive Sync Reply (with Handle Directory Change for its changes "
               "and Complete Sync0 State, 3.3.7.11)", (("server", S), ("reply", R), ("top", N)), _receive_sync_reply),
    Transition("receive_already_purged", "3.3.7.7", "Receive Already Purged (with Start Sync0 State, 3.3.7.10)",
               (("server", S), ("sender", S), ("partition", P), ("purged", N)), _receive_already_purged),
    Transition("purge_deleted_objects", "3.1.7.2.9", "Purge Deleted Objects",
               (("server", S), ("partition", P), ("buffer_end", N), ("min_acked", N)), _purge),
    Transition("send_psc_ack", "3.3.7.4", "Send PSC Ack", (("server", S), ("partition", P), ("authority", S)),
               _send_psc_ack),
    Transition("receive_psc_ack", "3.2.7.4", "Receive PSC Ack",
               (("server", S), ("neighbor", S), ("partition", P), ("acked", N)), _receive_psc_ack),
    Transition("handle_site_update", "3.1.7.2.11", "Handle Site Update (a site's PSC, or a new site's partition)",
               (("server", S), ("partition", P), ("psc", S), ("old_neighbor", S), ("create_again", z3.BoolSort())),
               _site_update),
    Transition("move_psc", "3.1.7.2.11", "A site's PSC moves to another machine (the handover, E-313)",
               (("old", S), ("new", S), ("partition", P)), _move_psc),
    Transition("replication_state_initialization", "3.1.3.1", "A server joins: Replication State Initialization",
               (("server", S),), _add_server),
    Transition("client_initialization", "3.3.3", "Initialization after a crash (volatile state lost)",
               (("server", S),), _crash),
)
BY_TRANSITION = {t.name: t for t in TRANSITIONS}

#: the register entries whose two readings the transitions model (literal mode reads all of them literally)
ERRATA = ("E-103", "E-104", "E-106", "E-108", "E-116", "E-117", "E-118", "E-119", "E-130", "E-131", "E-133", "E-166",
          "E-264", "E-311", "E-314")


def reading(mode: str) -> Reading:
    """Clarified, or the literal text wherever a transition models both readings."""
    return Reading.clarified() if mode == "clarified" else Reading(frozenset(ERRATA))
SEND_SYNC_REQUEST = BY_TRANSITION["send_sync_request"]

_ = (exists, R)  # re-exported helpers
