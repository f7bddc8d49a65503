"""Which of Harper's rules belong in `fix`'s draft: each rule's suggestions, alone, on the
benchmark's `fix` tasks (pedit/bench/corpus, their errors in SOURCES.md) and on
examples/essay.md. No model: Harper and pyspellchecker only, deterministic (about 20 s).

A suggestion is *right* when, made alone, it brings the file closer to the correct text
(token edit distance, pedit/bench/quality.py), *wrong* otherwise (a changed word that fixes
nothing, or a whitespace change). Kinds are chosen on what is not held out (the tuning tasks
and the essay); the held-out tasks (`heldout = true`) are shown apart. Then the drafts: spelling alone, Harper
alone, and the two in either order, scored with score_fix.

A rule is chosen when it made at least 3 suggestions on the tuning tasks and the essay, at
least 3 in 4 of them right (SpellCheck aside: spelling is pyspellchecker's); a rule with
fewer, too few to judge alone, when every one was right and its kind, all its rules
together, passes the same bar. `--write`
keeps the choice, and every rule's counts, in pedit/tools/harper_rules.json, which
grammarcheck.DEFAULT_RULES reads.

    python scripts/harper_rules.py            # the tables
    python scripts/harper_rules.py --write    # and pedit/tools/harper_rules.json
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

from pedit.bench.corpus import load_tasks
from pedit.bench.quality import distance, score_fix, tokens
from pedit.tools import grammarcheck as gc
from pedit.tools import spelling

RULES = Path(__file__).resolve().parent.parent / "pedit" / "tools" / "harper_rules.json"
ESSAY = Path(__file__).resolve().parent.parent / "examples" / "essay.md"
ESSAY_FIXES = [  # the essay's 12 wrong words (score_fix counts 10 errors:
    # "Their is" and "peoples enjoys" are two adjacent words each), as (error, correct)
    ("Their is many", "There are many"), ("peoples enjoys", "people enjoy"), ("book take", "book takes"),
    ("it teach", "it teaches"), ("storys she choose", "stories she chose"), ("also help", "also helps"),
    ("You learns", "You learn"), ("you sees", "you see"), ("nobody interrupt", "nobody interrupts"),
]  # fmt: skip


def cases() -> list[tuple[str, str, str, str, str]]:
    """(set, id, file name, text, correct text) of every fix task, and the essay."""
    out = []
    for t in load_tasks():
        if t.command == "fix":
            out.append(("heldout" if t.heldout else "tuning", t.id, t.file, t.text(), t.reference()))
    essay = ESSAY.read_text(encoding="utf-8")
    ref = essay
    for error, right in ESSAY_FIXES:
        ref = ref.replace(error, right)
    return [*out, ("essay", "essay", "essay.md", essay, ref)]


def judge(found: list[gc.Change], text: str, ref: str) -> dict[str, list[int]]:
    """{kind, or kind/rule: [suggestions, right, wrong]}, each kind's and rule's changes alone."""
    base, want = distance(tokens(text), tokens(ref)), tokens(ref)
    right = {c: distance(tokens(gc.apply(text, [c])), want) < base for c in found}
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for key in {c.kind for c in found} | {f"{c.kind}/{c.rule}" for c in found}:
        kind, _, rule = key.partition("/")
        for c in gc.chosen(found, {rule or kind}):
            row = table[key]
            row[0], row[1 + (not right[c])] = row[0] + 1, row[1 + (not right[c])] + 1
    return table


def print_table(name: str, table: dict[str, list[int]]) -> None:
    print(f"\n{name}: suggestions, right, wrong, precision (kind, then its rules)")
    kinds = sorted((k for k in table if "/" not in k), key=lambda k: (-table[k][1] / table[k][0], k))
    for kind in kinds:
        n, r, w = table[kind]
        print(f"  {kind:<34} {n:>4} {r:>4} {w:>4}  {r / n:5.2f}")
        for rule in sorted(k for k in table if k.startswith(kind + "/")):
            n, r, w = table[rule]
            print(f"    {rule.split('/')[1]:<32} {n:>4} {r:>4} {w:>4}  {r / n:5.2f}")


PRECISION, LEAST = 0.75, 3


def choose(table: dict[str, list[int]], *, precision: float = PRECISION, least: int = LEAST) -> set[str]:
    """The rules with at least `least` suggestions, `precision` of them right; those with
    fewer, every one right, whose kind has at least `least`, `precision` of them right."""

    def passes(key: str) -> bool:
        n, r, _ = table.get(key, (0, 0, 0))
        return n >= least and r / n >= precision

    chosen = set()
    for key, (n, r, _) in table.items():
        kind, _, rule = key.partition("/")
        if rule and rule != "SpellCheck" and (passes(key) or (n < least and r == n and passes(kind))):
            chosen.add(rule)
    return chosen


def write(table: dict[str, list[int]], heldout: dict[str, list[int]], chosen: set[str]) -> None:
    """pedit/tools/harper_rules.json: the chosen rules, and every rule's counts."""
    rules = {
        k.split("/")[1]: {
            "kind": k.split("/")[0],
            "suggestions": n,
            "right": r,
            "heldout_suggestions": heldout.get(k, [0, 0, 0])[0],
            "heldout_right": heldout.get(k, [0, 0, 0])[1],
        }  # fmt: skip
        for k, (n, r, _) in sorted(table.items())
        if "/" in k
    }
    data = {
        "generated by": "python scripts/harper_rules.py --write; do not edit by hand",
        "rule": f"on the tuning tasks and the essay: at least {LEAST} suggestions, {PRECISION:.0%} right; "
        "fewer, all right, and the rule's kind passes the same bar",
        "chosen": sorted(chosen),
        "rules": rules,
    }
    RULES.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RULES}")


def score_drafts(rows, kinds) -> None:
    spellcheck = cache(spelling.spellcheck)  # the slow step (pyspellchecker's edit-distance search)
    drafts = {
        "spelling only": lambda t, f: spellcheck(t, f),
        "harper only": lambda t, f: gc.suggest(t, f, kinds=kinds),
        "harper, then spelling": lambda t, f: spellcheck(gc.suggest(t, f, kinds=kinds), f),
        "spelling, then harper": lambda t, f: gc.suggest(spellcheck(t, f), f, kinds=kinds),
    }
    print(f"\ndrafts with kinds {sorted(kinds)}: errors fixed, collateral tokens, mean score, files worse")
    for group in ("tuning", "heldout", "essay"):
        mine = [r for r in rows if r[0] == group]
        errors = sum(score_fix(text, text, ref).errors for _, _, _, text, ref in mine)
        print(f"  {group} ({len(mine)} files, {errors} errors)")
        for label, make in drafts.items():
            scores = [score_fix(text, make(text, f), ref) for _, _, f, text, ref in mine]
            fixed, coll = sum(s.fixed for s in scores), sum(s.collateral for s in scores)
            mean = sum(s.score for s in scores) / len(scores)
            worse = sum(s.worse for s in scores)
            print(f"    {label:<24} {fixed:>4} {coll:>4}  {mean:6.3f}  {worse}")
            if group == "essay":
                print(f"      missed: {'; '.join(scores[0].missed)}")


def main() -> None:
    # grammarcheck turns Harper's SpellCheck rule off (spelling is pyspellchecker's): on, to show it
    gc._linter().set_lint_config({"SpellCheck": True})
    rows = cases()
    tables: dict[str, dict[str, list[int]]] = {}
    for group, _, name, text, ref in rows:
        found = gc.changes(text, name)
        for g in (group, "tuning + essay") if group != "heldout" else (group,):
            table = tables.setdefault(g, defaultdict(lambda: [0, 0, 0]))
            for key, (n, r, w) in judge(found, text, ref).items():
                table[key] = [table[key][0] + n, table[key][1] + r, table[key][2] + w]
    for group in ("tuning", "essay", "tuning + essay", "heldout"):
        print_table(group, tables[group])
    rules = choose(tables["tuning + essay"])
    print(
        f"\nchosen on tuning + essay (choose: precision >= 0.75 over >= 3, or all of fewer): {sorted(rules)}"
    )
    print(f"  on the tuning tasks alone: {sorted(choose(tables['tuning']))}")
    print(f"grammarcheck.DEFAULT_RULES: {sorted(gc.DEFAULT_RULES)}")
    if "--write" in sys.argv:
        write(tables["tuning + essay"], tables["heldout"], rules)
    score_drafts(rows, rules)


if __name__ == "__main__":
    main()
