"""Extract the text of every section of MC-MQDSRP, MS-MQSD and MS-MQCN for the annotated spec.

    python tools/extract_spec.py [--spec ../shared/spec] [--out docs/spec_text]

Reads ``<spec>/<DOC>.txt`` (the converted Open Specifications documents) and writes
``<out>/<DOC>.json``: for each section of chapters 1 to 5, its number, title, the lines it spans
in the source file and its own text (up to the next heading), with page headers and footers
removed and the conversion's inline markup (``<u>``, links, ``*emphasis*``, ``\\_``) dropped. The output
is committed so that a clone without ``../shared`` still builds the documentation; the bytes are
the same on every run. The Open Specifications notice permits distributing portions of the
documents in documentation.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

DOCUMENTS = ("MC-MQDSRP", "MS-MQSD", "MS-MQCN")
LAST_CHAPTER = 5  # 6 Appendix (product behavior notes) and 7 Change Tracking are not annotated

_HEADING = re.compile(r"^#*\s*(?:\*\*)?(\d+(?:\.\d+)*)\.?(?:\*\*)?[ \t]+(?:\*\*)?(\S.*?)(?:\*\*)?\s*$")
#: the PDF's page furniture (running header and footer lines), matched on whole lines, inside code fences
#: too: the conversion put some footers in a fence of their own, and one page's footer in a handler's text
_NOISE = (
    re.compile(r"^\d+ / \d+$"),  # page numbers
    re.compile(r"^\[(?:\[\])?M[CS]-MQ\w+\] ?[—-] ?v\d{8}"),  # running headers ("[[]MC-MQDSRP]" is one spelling)
    re.compile(r"^\$\[\{\\it MS-"),  # a header the conversion rendered as TeX
    re.compile(r"^Copyright (?:©|\$\{\\ensuremath\{\\mathbb C\}\}\$) \d{4} Microsoft Corporation\.$"),
    re.compile(r"^Release: \w+day, "),
    # the running title on a line of its own (a sentence that starts with the title goes on and is kept)
    re.compile(r"^Message Queuing \(MSMQ\): Directory Service [A-Za-z ]+ Protocol(?: Specification)?$"),
)
_MARKUP = (
    (re.compile(r"</?(?:u|i|b|sup|sub)>"), ""),
    (re.compile(r'<a href="[^"]*">(.*?)</a>'), r"\1"),  # MS-MQCN's links: their words stay
    (re.compile(r"\*\*(\S(?:.*?\S)?)\*\*"), r"\1"),
    (re.compile(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])"), r"\1"),
    (re.compile(r"\\([_*\[\]|#$])"), r"\1"),
)


def _key(section: str) -> tuple[int, ...]:
    return tuple(int(p) for p in section.split("."))


def _follows(prev: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """``new`` can be the next heading after ``prev``: its first child, or a later sibling of it or of an ancestor."""
    if new == prev + (1,):
        return True
    for depth in range(len(prev), 0, -1):
        if len(new) == depth and new[:-1] == prev[: depth - 1] and 0 < new[-1] - prev[depth - 1] <= 3:
            return True
    return False


def _clean(lines: list[str]) -> str:
    kept: list[str] = []
    fence = False
    for raw in lines:
        line = raw.rstrip()
        if line.strip().startswith("```"):
            fence = not fence
            continue
        if any(p.match(line.strip()) for p in _NOISE):
            continue
        if not fence:
            for pattern, repl in _MARKUP:
                line = pattern.sub(repl, line)
        if not line.strip() and (not kept or not kept[-1].strip()):
            continue
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def extract(text: str, document: str) -> list[dict[str, object]]:
    """The sections of chapters 1..LAST_CHAPTER, in document order."""
    lines = text.splitlines()
    # the body starts at the last "1 Introduction" heading (the earlier ones are the table of contents)
    starts = [i for i, line in enumerate(lines) if re.match(r"^#*\s*1\.?\s+Introduction\s*$", line)]
    if not starts:
        raise ValueError(f"{document}: no '1 Introduction' heading")
    heads: list[tuple[int, str, str]] = [(starts[-1], "1", "Introduction")]
    for i in range(starts[-1] + 1, len(lines)):
        m = _HEADING.match(lines[i])
        if not m or "\t" in m.group(2) or not re.match(r"[A-Z*]", m.group(2)):
            continue
        number = m.group(1)
        if not _follows(_key(heads[-1][1]), _key(number)):
            continue
        heads.append((i, number, _clean([m.group(2)])))
        if _key(number)[0] > LAST_CHAPTER:
            break
    sections = []
    for n, (line, number, title) in enumerate(heads):
        if _key(number)[0] > LAST_CHAPTER:
            break
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        sections.append({"section": number, "title": title, "lines": [line + 1, end],
                         "text": _clean(lines[line + 1:end])})
    return sections


#: the [MS-MQDS] structures mqspec implements, as the Go binding in MS-MQDS-query-types.txt names them,
#: with the constants that belong to each
MQDS_TYPES = {
    "ColumnSet": ("2.2.11", "MQCOLUMNSET", ()),
    "PropertyRestriction": ("2.2.12", "MQPROPERTYRESTRICTION", ("EQ", "GE", "GT", "LE", "LT", "NE")),
    "Restriction": ("2.2.13", "MQRESTRICTION", ()),
    "SortKey": ("2.2.14", "MQSORTKEY", ("QuerySortAscend", "QuerySortDescend")),
    "SortSet": ("2.2.15", "MQSORTSET", ()),
}


def extract_mqds(text: str) -> list[dict[str, object]]:
    """The query structures of [MS-MQDS] section 2.2, from the Go binding's documentation of them."""
    lines = text.splitlines()
    constants: dict[str, list[str]] = {}
    starts: dict[str, int] = {}
    for i, line in enumerate(lines):
        if m := re.match(r"^const (\w+) = ", line):
            constants[m.group(1)] = lines[i:i + 2]
        if m := re.match(r"^type (\w+) ¶$", line):
            starts[m.group(1)] = i
    sections = []
    for name, (number, title, consts) in MQDS_TYPES.items():
        if name not in starts:
            raise ValueError(f"MS-MQDS: no 'type {name}' in the query types file")
        begin = starts[name]
        end = next((i for i in sorted(starts.values()) if i > begin), len(lines))
        body = [ln for ln in lines[begin + 1:end] if not re.match(r"^func \(", ln)]
        for c in consts:
            body += [""] + constants[c]
        sections.append({"section": number, "title": title, "lines": [begin + 1, end], "text": _clean(body)})
    return sorted(sections, key=lambda s: _key(str(s["section"])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "spec")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "docs" / "spec_text")
    args = parser.parse_args(argv)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"extract_spec: cannot make {args.out}: {exc.strerror}", file=sys.stderr)
        return 2
    for document in DOCUMENTS:
        source = args.spec / f"{document}.txt"
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"extract_spec: cannot read {source}: {exc.strerror}", file=sys.stderr)
            return 2
        version = re.search(r"v(\d{8})", text)
        data = {"document": document, "version": f"v{version.group(1)}" if version else "",
                "source": f"../shared/spec/{document}.txt", "sections": extract(text, document)}
        _write(args.out, data)
    source = args.spec / "MS-MQDS-query-types.txt"
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"extract_spec: cannot read {source}: {exc.strerror}", file=sys.stderr)
        return 2
    _write(args.out, {"document": "MS-MQDS", "version": "(query structures, from a public Go binding's documentation)",
                      "source": "../shared/spec/MS-MQDS-query-types.txt", "sections": extract_mqds(text)})
    return 0


def _write(folder: Path, data: dict[str, object]) -> None:
    out = folder / f"{data['document']}.json"
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{out}: {len(data['sections'])} sections")  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
