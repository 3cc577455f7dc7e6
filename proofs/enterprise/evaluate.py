"""The enterprise invariants evaluated on one concrete state: a :class:`~.projection.Snapshot` of a running World.

The invariants (:mod:`.invariants`) are Z3 formulas quantified over the vocabulary's sorts. On a snapshot every
sort but ``SeqNumber`` is a finite set (the servers, partitions, objects and replies the snapshot names), and every
symbol has a value: a relation is a set of tuples, a function a table with the default the model gives a symbol
outside its domain (``last`` of a partition a server does not hold is MIN, ``window`` MAX, 3.1.1.2.3's initial
values; :data:`DEFAULTS`). :class:`Compiled` turns a formula into a Python predicate over such a structure
once; :func:`violations` runs every state invariant (or a step invariant over two snapshots) on it.

``SeqNumber`` is the 64-bit order of 2.2.2, too large to enumerate. A quantified number ranges over the numbers the
snapshot holds, each with its two neighbours, and MIN and MAX (:meth:`Structure.numbers`). That decides every
invariant exactly: a number the snapshot does not hold is in no relation and is no function's value, so the only
thing a formula can ask of it is its order against held numbers; any two numbers in the same gap between held
numbers answer alike, except at the gap's ends, where "no number between a and b" (:func:`~.vocabulary.successor`)
asks whether the gap is empty, which the neighbours answer. No invariant nests more than one such question, so
the neighbours suffice.

A quantifier whose body is ``guard → conclusion`` does not range over a whole sort when a conjunct of the guard is
a relation over its variables: it takes that relation's tuples (indexed by the variables already bound), so a
purge scenario's thousands of numbers cost what its tuples do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs
import z3

from mqspec.model.seqnum import MAX_SEQ_NUMBER

from . import invariants as ei
from .projection import Snapshot
from .vocabulary import BY_NAME, MUTABLE, State

MAX = MAX_SEQ_NUMBER.value
#: the value of a function symbol where the snapshot has none (3.1.1.2.3's initial values; an acknowledgement
#: never received is MIN)
DEFAULTS = {"last": 0, "purged": 0, "allowed": 0, "window": MAX, "ver": 0, "tseq": 0, "acked": 0, "alast": 0,
            "apurged": 0}

Env = dict[str, Any]
Fn = Callable[[Env], Any]


@attrs.define
class Structure:
    """A snapshot's symbols as Python values (see :data:`DEFAULTS`), and the finite domain of each sort."""

    relations: dict[str, set[tuple[Any, ...]]]
    functions: dict[str, Callable[..., Any]]
    domains: dict[str, list[Any]]
    _index: dict[tuple[str, tuple[int, ...]], dict[tuple[Any, ...], list[tuple[Any, ...]]]] = attrs.field(factory=dict)

    def matching(self, name: str, bound: dict[int, Any]) -> list[tuple[Any, ...]]:
        """The tuples of relation ``name`` whose positions ``bound`` hold the given values."""
        positions = tuple(sorted(bound))
        key = (name, positions)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = {}
            for row in self.relations[name]:
                index.setdefault(tuple(row[i] for i in positions), []).append(row)
        return index.get(tuple(bound[i] for i in positions), [])


def structure(snap: Snapshot) -> Structure:
    """The symbols of ``snap`` (one state of the model) as a :class:`Structure`."""
    replies = snap.replies
    items = [{o: (seq, dl) for o, seq, dl in r.items} for r in replies]
    relations: dict[str, set[tuple[Any, ...]]] = {
        "alive": {(s,) for s in snap.alive}, "used": {(s,) for s in snap.used}, "bsc": {(s,) for s in snap.bsc},
        "has": set(snap.has), "twice": set(snap.twice), "authname": set(snap.authname), "sync0": set(snap.sync0),
        "held": set(snap.ver), "tombd": set(snap.tseq), "pscnb": set(snap.pscnb), "prop": set(snap.prop),
        "hdr_i": set(snap.hdr_i), "hdr_b": set(snap.hdr_b), "sreq": set(snap.sreq), "sreq0": set(snap.sreq0),
        "ap": set(snap.ap), "ack": set(snap.ack), "hist": set(snap.hist), "hdel": set(snap.hdel),
        "handed": set(snap.handed), "rsent": {(i,) for i in range(len(replies))},
        "rc2": {(i,) for i, r in enumerate(replies) if r.complete},
        "rhas": {(i, o) for i, r in enumerate(items) for o in r},
        "rdl": {(i, o) for i, r in enumerate(items) for o, (_, dl) in r.items() if dl},
    }

    def table(name: str, values: dict[Any, Any]) -> Callable[..., Any]:
        default = DEFAULTS[name]
        return lambda *args: values.get(args if len(args) > 1 else args[0], default)

    functions: dict[str, Callable[..., Any]] = {
        "zero": lambda: 0, "top": lambda: MAX, "pec": lambda: snap.pec, "ent": lambda: snap.ent,
        "site": lambda s: snap.site.get(s), "part": lambda o: snap.part.get(o),
        "rsrc": lambda r: replies[r].src, "rdst": lambda r: replies[r].dst, "rpart": lambda r: replies[r].part,
        "rfrom": lambda r: replies[r].frm, "rto": lambda r: replies[r].to, "rpur": lambda r: replies[r].pur,
        # a reply the recorder saw answer no request (none in the reference) would have left out nothing
        "rknown": lambda r: replies[r].known if replies[r].known is not None else 0,
        "rseq": lambda r, o: items[r].get(o, (0, False))[0],
        **{name: table(name, getattr(snap, name)) for name in ("last", "purged", "allowed", "window", "ver", "tseq",
                                                               "acked", "alast", "apurged")},
    }
    servers = set(snap.used) | set(snap.alive) | set(snap.site)
    partitions = {snap.ent, *snap.site.values(), *snap.part.values(), *(p for _, p in snap.has)}
    objects = set(snap.part) | {o for o, _ in snap.hist}
    domains = {"Server": sorted(servers), "Partition": sorted(partitions, key=str),
               "Object": sorted(objects, key=str), "SyncReply": list(range(len(replies))),
               "SeqNumber": numbers(snap)}
    return Structure(relations, functions, domains)


def numbers(snap: Snapshot) -> list[int]:
    """The numbers a quantified SeqNumber ranges over: each the snapshot holds, its neighbours, MIN and MAX."""
    held: set[int] = {0, MAX}
    for name in ("last", "purged", "allowed", "window", "ver", "tseq", "acked", "alast", "apurged"):
        held.update(getattr(snap, name).values())
    for rows in (snap.prop, snap.hdr_i, snap.hdr_b, snap.sreq, snap.sreq0, snap.ap, snap.ack, snap.hist, snap.hdel):
        for row in rows:
            held.update(v for v in row if type(v) is int)
    for r in snap.replies:
        held.update((r.frm, r.to, r.pur, r.known or 0, *(seq for _, seq, _ in r.items)))
    out = set(held)
    for v in held:
        out.update(w for w in (v - 1, v + 1) if 0 <= w <= MAX)
    return sorted(out)


# --- compiling a formula ------------------------------------------------------------------------------------------


class Slot:
    """Where a compiled formula reads one state's structure: set ``structure`` before evaluating (a formula is
    compiled once and evaluated on every snapshot)."""

    structure: Structure


def _symbol(decl: z3.FuncDeclRef) -> tuple[str, str]:
    """(symbol, state tag) of a vocabulary declaration: ``last'`` is ``last`` of the state tagged ``'``."""
    name = decl.name()
    base = name.rstrip("'")
    if base not in BY_NAME:
        raise ValueError(f"{name!r} is no symbol of the enterprise vocabulary")
    return base, name[len(base):]


def _is_relation(symbol: str) -> bool:
    return BY_NAME[symbol].range == z3.BoolSort() and bool(BY_NAME[symbol].domain) and symbol != "le"


class Compiled:
    """A formula compiled over the states tagged in ``slots``; quantified variables range over ``domains.structure``'s
    domains (the untagged state's unless told otherwise)."""

    def __init__(self, expr: Any, tags: Iterable[str]) -> None:
        self.slots = {tag: Slot() for tag in tags}
        self.domains = Slot()
        #: the values of the variables where the last evaluation found the formula false (its instance)
        self.witness: dict[str, Any] = {}
        self.fresh = 0
        self.fn = self.term(expr)

    def __call__(self, states: dict[str, Structure], domains: Structure | None = None) -> bool:
        for tag, slot in self.slots.items():
            slot.structure = states[tag]
        self.domains.structure = domains if domains is not None else states[""]
        self.witness = {}
        return bool(self.fn({}))

    def term(self, e: Any) -> Fn:
        if z3.is_quantifier(e):
            return self.quantifier(e)
        if z3.is_true(e):
            return lambda env: True
        if z3.is_false(e):
            return lambda env: False
        kind = e.decl().kind()
        args = [self.term(a) for a in e.children()]
        if kind == z3.Z3_OP_AND:
            return lambda env: all(a(env) for a in args)
        if kind == z3.Z3_OP_OR:
            return lambda env: any(a(env) for a in args)
        if kind == z3.Z3_OP_NOT:
            [a] = args
            return lambda env: not a(env)
        if kind == z3.Z3_OP_IMPLIES:
            a, b = args
            return lambda env: (not a(env)) or b(env)
        if kind == z3.Z3_OP_EQ:
            a, b = args
            return lambda env: a(env) == b(env)
        if kind == z3.Z3_OP_DISTINCT:
            return lambda env: len({a(env) for a in args}) == len(args)
        if kind == z3.Z3_OP_ITE:
            c, a, b = args
            return lambda env: a(env) if c(env) else b(env)
        if kind != z3.Z3_OP_UNINTERPRETED:
            raise ValueError(f"no evaluation of {e.decl().name()!r} over a snapshot")
        return self.application(e, args)

    def application(self, e: Any, args: list[Fn]) -> Fn:
        name = e.decl().name()
        if e.num_args() == 0 and name.startswith("?"):  # a bound variable (see quantifier)
            return lambda env: env[name]
        symbol, tag = _symbol(e.decl())
        slot = self.slots[tag]
        if symbol == "le":
            a, b = args
            return lambda env: a(env) <= b(env)
        if _is_relation(symbol):
            if len(args) == 1:
                [a] = args
                return lambda env: (a(env),) in slot.structure.relations[symbol]
            return lambda env: tuple(a(env) for a in args) in slot.structure.relations[symbol]
        if not args:
            return lambda env: slot.structure.functions[symbol]()
        if len(args) == 1:
            [a] = args
            return lambda env: slot.structure.functions[symbol](a(env))
        return lambda env: slot.structure.functions[symbol](*(a(env) for a in args))

    def quantifier(self, q: Any) -> Fn:
        names = []
        for i in range(q.num_vars()):
            self.fresh += 1
            names.append(f"?{q.var_name(i)}{self.fresh}")
        consts = [z3.Const(n, q.var_sort(i)) for i, n in enumerate(names)]
        body = z3.substitute_vars(q.body(), *reversed(consts))
        sorts = {n: q.var_sort(i).name() for i, n in enumerate(names)}
        universal = q.is_forall()
        inner = body if universal else _negated(body)  # ∃v. B is ¬∀v. ¬B
        narrower = _miniscoped(inner, consts)
        if narrower is not None:
            whole = self.term(narrower)
            return whole if universal else (lambda env: not whole(env))
        guards, conclusion = _split(inner)
        test = self.term(conclusion)
        steps = self.plan(names, sorts, guards)
        closed = [self.term(g) for g in guards if not _free(g, names)]
        domains = self.domains

        def bind(env: Env, i: int) -> bool:
            """False when some binding of the variables from step ``i`` on satisfies the guards, not the conclusion."""
            if i == len(steps):
                if test(env):
                    return True
                self.witness = {name.lstrip("?").rstrip("0123456789"): value for name, value in env.items()}
                return False
            enumerate_, checks = steps[i]
            for values in enumerate_(env, domains.structure):
                env.update(values)
                if all(c(env) for c in checks) and not bind(env, i + 1):
                    return False
            return True

        def holds(env: Env) -> bool:
            if not all(c(env) for c in closed):
                return True
            return bind(dict(env), 0)

        return holds if universal else (lambda env: not holds(env))

    def plan(self, names: list[str], sorts: dict[str, str], guards: list[Any]) -> list[tuple[Any, list[Fn]]]:
        """The steps binding ``names``, each (how it enumerates values, the guards it can then test): by a guard
        relation whose tuples give values to some of them, else over the variable's sort."""
        steps: list[tuple[Any, list[Fn]]] = []
        left = list(names)
        pending = [g for g in guards if _free(g, names)]
        while left:
            best, covered = None, []
            for g in pending:
                here = _enumerable(g, left)
                if len(here) > len(covered):
                    best, covered = g, here
            if best is None:
                covered = [left[0]]
                enumerate_ = _over_sort(left[0], sorts[left[0]])
            else:
                enumerate_ = self.over_relation(best, covered)
            left = [n for n in left if n not in covered]
            ready = [g for g in pending if not _free(g, left)]
            pending = [g for g in pending if _free(g, left)]
            steps.append((enumerate_, [self.term(g) for g in ready]))
        return steps

    def over_relation(self, atom: Any, covered: list[str]) -> Callable[[Env, Structure], Iterable[dict[str, Any]]]:
        if z3.is_or(atom):  # R1(..) ∨ R2(..): the tuples of each (a binding both give is tested twice, harmlessly)
            parts = [self.over_relation(a, covered) for a in atom.children()]
            return lambda env, structure: (v for part in parts for v in part(env, structure))
        symbol, tag = _symbol(atom.decl())
        slot = self.slots[tag]
        free: dict[int, str] = {}
        bound: dict[int, Fn] = {}
        for i, a in enumerate(atom.children()):
            name = a.decl().name() if z3.is_const(a) else None
            if name in covered:
                free[i] = name
            else:
                bound[i] = self.term(a)

        def values(env: Env, _: Structure) -> Iterator[dict[str, Any]]:
            rows = slot.structure.matching(symbol, {i: fn(env) for i, fn in bound.items()})
            for row in rows:
                out: dict[str, Any] = {}
                if all(out.setdefault(n, row[i]) == row[i] for i, n in free.items()):
                    yield out

        return values


def _over_sort(name: str, sort: str) -> Callable[[Env, Structure], Iterable[dict[str, Any]]]:
    return lambda env, structure: ({name: v} for v in structure.domains[sort])


def _split(body: Any) -> tuple[list[Any], Any]:
    """``a ∧ (b ∧ c) → d`` as ([a, b, c], d), the guard's conjunctions flattened; any other body as ([], body)."""
    if not z3.is_app_of(body, z3.Z3_OP_IMPLIES):
        return [], body
    guard, conclusion = body.children()
    guards, todo = [], [guard]
    while todo:
        g = todo.pop(0)
        if z3.is_and(g):
            todo[:0] = g.children()
        else:
            guards.append(g)
    return guards, conclusion


def _negated(body: Any) -> Any:
    """``¬body``; a conjunction ``¬(A ∧ B ∧ C)`` as ``A ∧ B → ¬C``, whose relation atoms are then guards that
    enumerate (an existential's witness is looked for among their tuples, not over whole domains)."""
    if z3.is_and(body) and body.num_args() > 1:
        *first, last = body.children()
        return z3.Implies(z3.And(*first), z3.Not(last))
    return z3.Not(body)


def _miniscoped(body: Any, consts: list[Any]) -> Any:
    """``∀ consts. body`` with each variable quantified over the smallest part of ``body`` that uses it, or None when
    no part can be narrowed: ``∀v. A ∧ B`` as ``(∀v. A) ∧ (∀v. B)``, and ``∀v w. G(v) → A(v) ∧ B(v, w)`` (no guard
    naming ``w``) as ``∀v. G(v) → A(v) ∧ ∀w. B(v, w)``. Equivalent where no sort is empty, as in Z3 (the SeqNumber
    domain always holds MIN and MAX; a snapshot with no object or no reply has an empty domain, and there the narrowed
    form is the one Z3 means), and each part then enumerates by a guard relation of its own rather than over a
    product of whole domains."""

    def over(vs: list[Any], e: Any) -> Any:
        used = _free(e, [str(v) for v in vs])
        return z3.ForAll([v for v in vs if str(v) in used], e) if used else e

    if z3.is_and(body):
        return z3.And(*(over(consts, part) for part in body.children()))
    guards, conclusion = _split(body)
    loose = [c for c in consts if not any(_free(g, [str(c)]) for g in guards)]
    if not guards or not loose or not z3.is_and(conclusion):
        return None
    kept = [c for c in consts if all(str(c) != str(v) for v in loose)]
    narrowed = z3.Implies(z3.And(*guards), z3.And(*(over(loose, part) for part in conclusion.children())))
    return z3.ForAll(kept, narrowed) if kept else narrowed


def _free(e: Any, names: list[str]) -> list[str]:
    """The names of ``names`` that occur in ``e``."""
    found: list[str] = []
    todo = [e]
    while todo:
        t = todo.pop()
        if z3.is_quantifier(t):
            todo.append(t.body())
        elif z3.is_const(t):
            if t.decl().name() in names and t.decl().name() not in found:
                found.append(t.decl().name())
        elif z3.is_app(t):
            todo.extend(t.children())
    return found


def _enumerable(g: Any, left: list[str]) -> list[str]:
    """The variables of ``left`` that guard ``g`` binds by enumerating its relation's tuples: those that are its
    arguments, when it is a relation atom whose other arguments mention none of ``left`` (so they have values), or
    a disjunction of such atoms that bind the same variables."""
    if z3.is_or(g):
        each = [_enumerable(a, left) for a in g.children()]
        return each[0] if all(each) and all(set(e) == set(each[0]) for e in each) else []
    if not z3.is_app(g) or g.decl().kind() != z3.Z3_OP_UNINTERPRETED or g.num_args() == 0:
        return []
    if not _is_relation(_symbol(g.decl())[0]):
        return []
    direct = [a.decl().name() for a in g.children() if z3.is_const(a) and a.decl().name() in left]
    others = [a for a in g.children() if not (z3.is_const(a) and a.decl().name() in left)]
    if not direct or any(_free(a, left) for a in others):
        return []
    return list(dict.fromkeys(direct))


# --- the invariants -----------------------------------------------------------------------------------------------


PRE, POST = State(""), State("'")
_COMPILED: dict[str, Compiled] = {}


def compiled(inv: ei.Invariant) -> Compiled:
    """``inv``'s formula compiled once (a state invariant over the untagged state, a step one over "" and "'")."""
    found = _COMPILED.get(inv.name)
    if found is None:
        if inv.kind == "step":
            found = Compiled(inv.formula(PRE, POST), ("", "'"))
        else:
            found = Compiled(inv.formula(PRE), ("",))
        _COMPILED[inv.name] = found
    return found


def violations(snap: Snapshot, previous: Snapshot | None = None,
               invariants: Iterable[ei.Invariant] = ei.INVARIANTS) -> list[str]:
    """The names of the invariants ``snap`` violates; the step invariants too when ``previous`` is the state
    before it (the immutable symbols are read from ``snap``, which knows every server and object that was)."""
    now = structure(snap)
    pre = _with_immutable(structure(previous), now) if previous is not None else None
    out = []
    for inv in invariants:
        if inv.kind == "step":
            if pre is None:
                continue
            ok = compiled(inv)({"": pre, "'": now}, pre)
        else:
            ok = compiled(inv)({"": now})
        if not ok:
            out.append(inv.name)
    return out


def _with_immutable(before: Structure, now: Structure) -> Structure:
    """``before`` with ``now``'s immutable symbols and domains (a step's two states share them)."""
    relations = {**before.relations, **{k: v for k, v in now.relations.items() if k not in MUTABLE}}
    functions = {**before.functions, **{k: v for k, v in now.functions.items() if k not in MUTABLE}}
    domains = {k: sorted(set(before.domains[k]) | set(now.domains[k]), key=int if k == "SeqNumber" else str)
               for k in now.domains}
    return Structure(relations, functions, domains)
