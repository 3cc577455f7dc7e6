"""A counterexample of the enterprise model as text: its servers, partitions and objects, the pre-state, the
transition with its arguments, and what changed ("invariant X is not preserved by Y", then named states)."""

from __future__ import annotations

import itertools
from typing import Any

import z3

from .vocabulary import BY_NAME, MUTABLE, State

#: how each sort's elements are named in a counterexample
_PREFIX = {"Server": "S", "Partition": "P", "Object": "O", "SeqNumber": "n", "SyncReply": "R"}
#: the symbols a rendering lists (per state); the order is the vocabulary's
_LIMIT = 40


def _universe(model: z3.ModelRef, sort: z3.SortRef) -> list[Any]:
    try:
        return list(model.get_universe(sort) or [])
    except z3.Z3Exception:
        return []


class _Names:
    """Readable names: sequence numbers by rank in the order (MIN, n1, n2, ..., MAX), other elements by sort and index."""

    def __init__(self, model: z3.ModelRef, st: State) -> None:
        self.model = model
        self.names: dict[str, str] = {}
        self.order: dict[str, list[Any]] = {}
        for sort_name, prefix in _PREFIX.items():
            elems = _universe(model, _sort(sort_name))
            if sort_name == "SeqNumber":
                everything = list(elems)  # (list.sort empties the list while it sorts)
                elems.sort(key=lambda e: sum(1 for f in everything if z3.is_true(
                    model.eval(st.le(f, e), model_completion=True))))
                for i, e in enumerate(elems):
                    label = "MIN" if _eq(model, e, st.zero) else "MAX" if _eq(model, e, st.top) else f"n{i}"
                    self.names[str(e)] = label
            else:
                for i, e in enumerate(elems):
                    self.names[str(e)] = f"{prefix}{i}"
            self.order[sort_name] = elems

    def __call__(self, value: Any) -> str:
        v = self.model.eval(value, model_completion=True)
        if z3.is_true(v):
            return "true"
        if z3.is_false(v):
            return "false"
        return self.names.get(str(v), str(v))


def _sort(name: str) -> z3.SortRef:
    from . import vocabulary

    return getattr(vocabulary, name)


def _eq(model: z3.ModelRef, a: Any, b: Any) -> bool:
    return z3.is_true(model.eval(a == b, model_completion=True))


def _state_lines(model: z3.ModelRef, names: _Names, st: State, symbols: list[str]) -> list[str]:
    out = []
    for name in symbols:
        sym = BY_NAME[name]
        decl = getattr(st, name)
        domains = [_universe(model, d) for d in sym.domain]
        if not sym.domain:
            out.append(f"{name} = {names(decl)}")
            continue
        rows = []
        for args in itertools.product(*domains):
            value = decl(*args)
            if sym.range == z3.BoolSort():
                if z3.is_true(model.eval(value, model_completion=True)):
                    rows.append("(" + ", ".join(names(a) for a in args) + ")")
            else:
                rows.append(f"{name}(" + ", ".join(names(a) for a in args) + f") = {names(value)}")
        if sym.range == z3.BoolSort():
            out.append(f"{name} = {{{', '.join(rows[:_LIMIT])}{', ...' if len(rows) > _LIMIT else ''}}}")
        else:
            out += rows[:_LIMIT]
    return out


def render_model(model: z3.ModelRef, ob: Any, pre: State, post: State | None, tr: Any, params: dict[str, Any],
                 errata: list[str] | None = None) -> str:
    names = _Names(model, pre)
    head = (f"invariant {ob.invariant} is not preserved by {ob.handler} ({ob.mode} mode, enterprise model)"
            if post is not None else f"invariant {ob.invariant} does not hold initially (enterprise model)")
    lines = [head]
    if errata:
        lines.append(f"  caused by the literal reading of: {', '.join(errata)}")
    for sort_name in _PREFIX:
        elems = names.order[sort_name]
        if elems:
            lines.append(f"  {sort_name}: {', '.join(names(e) for e in elems)}")
    lines.append("  pre-state:")
    lines += [f"    {x}" for x in _state_lines(model, names, pre, [m for m in MUTABLE])]
    if post is not None and tr is not None:
        args = ", ".join(f"{k}={names(v)}" for k, v in params.items())
        lines.append(f"  event: {tr.name}({args})  [MC-MQDSRP {tr.section}]")
        changed = [m for m in MUTABLE if m in post.fresh]
        before = dict(zip(changed, [_state_lines(model, names, pre, [m]) for m in changed], strict=True))
        lines.append("  post-state (changed):")
        for m in changed:
            after = _state_lines(model, names, post, [m])
            if after != before[m]:
                lines += [f"    {x}" for x in after]
    return "\n".join(lines)
