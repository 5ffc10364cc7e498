#!/usr/bin/env python3
"""Reads scripts/mutate.d/mutants.txt and applies one mutant to a tree.

  mutants.py list MUTANTS             one line per mutant:
                                      ID<TAB>KIND<TAB>EXPECTED KILLERS
  mutants.py apply MUTANTS ID ROOT    edit files under ROOT; prints each
                                      file it changed, relative to ROOT
  mutants.py check MUTANTS UNIT_BINARY CASES_DIR
                                      every named killer exists (a gtest
                                      of UNIT_BINARY, or a case_NAME of
                                      CASES_DIR/*.sh) and every mutant
                                      applies to the tree MUTANTS is in
                                      (exit 1, naming them)

The header line of a mutant is `== ID | KIND NAME...`: KIND is unit, vm
or vm-flat, and the names are the tests meant to kill it (gtest names for
unit, VM cases for vm and vm-flat: the cases a VM mutant boots are these).
A mutant without a name is an error: a kill counts only when the test meant
to notice the rule noticed it.

A block of old text that does not occur exactly once is an error (exit 2):
a mutant that silently applies nowhere would be "killed" by nothing.
"""
import sys

KINDS = ("unit", "vm", "vm-flat")


def parse(path):
    mutants, current, block = [], None, None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            where = f"{path}:{number}"
            if line.startswith("=="):
                ident, _, tier = line[2:].partition("|")
                kind, *names = tier.split()
                current = {"id": ident.strip(), "kind": kind, "names": names,
                           "edits": [], "where": where}
                mutants.append(current)
                block = None
            elif current is None or not line.strip() or line.startswith("#"):
                continue
            elif line.startswith("file "):
                current["file"] = line[5:].strip()
            elif line.startswith("- ") or line == "-":
                if block is None or block["new"]:
                    block = {"old": [], "new": [], "file": current.get("file")}
                    current["edits"].append(block)
                block["old"].append(line[2:])
            elif line.startswith("+ ") or line == "+":
                if block is None:
                    sys.exit(f"{where}: '+' before any '-'")
                block["new"].append(line[2:])
            else:
                sys.exit(f"{where}: cannot read: {line}")
    seen = set()
    for m in mutants:
        if not m["edits"] or not m.get("file"):
            sys.exit(f"{m['where']}: mutant {m['id']} needs a file and edits")
        if m["kind"] not in KINDS:
            sys.exit(f"{m['where']}: mutant {m['id']}: tier '{m['kind']}' is "
                     f"not one of {', '.join(KINDS)}")
        if not m["names"]:
            sys.exit(f"{m['where']}: mutant {m['id']} names no test meant to "
                     f"kill it")
        if m["id"] in seen:
            sys.exit(f"{m['where']}: mutant {m['id']} is listed twice")
        seen.add(m["id"])
    return mutants


def edited(mutant, root):
    """The mutant's files under ROOT with its edits applied in turn, and a
    list of problems: an edit whose old text does not occur exactly once,
    or a file that cannot be read."""
    texts, problems = {}, []
    for edit in mutant["edits"]:
        path = f"{root}/{edit['file']}"
        if path not in texts:
            try:
                with open(path, encoding="utf-8") as f:
                    texts[path] = f.read()
            except OSError as e:
                problems.append(f"mutant {mutant['id']}: {edit['file']}: {e.strerror}")
                continue
        old, new = "\n".join(edit["old"]), "\n".join(edit["new"])
        count = texts[path].count(old)
        if count != 1:
            problems.append(f"mutant {mutant['id']}: {edit['file']} holds its old text "
                            f"{count} times, not once: {edit['old'][0].strip()}")
            continue
        texts[path] = texts[path].replace(old, new)
    return texts, problems


def apply(mutant, root):
    texts, problems = edited(mutant, root)
    if problems:
        print(problems[0], file=sys.stderr)
        sys.exit(2)
    for path, text in texts.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(path[len(root) + 1:])


def check(mutants, unit_binary, cases_dir, root):
    import glob
    import re
    import subprocess
    listing = subprocess.run([unit_binary, "--gtest_list_tests"], check=True,
                             capture_output=True, text=True).stdout
    tests, suite = set(), None
    for line in listing.splitlines():
        if not line.startswith(" "):
            suite = line.strip()
        else:
            tests.add(suite + line.split("#")[0].strip())
    cases = set()
    for path in glob.glob(f"{cases_dir}/*.sh"):
        with open(path, encoding="utf-8") as f:
            cases.update(re.findall(r"^case_([A-Za-z0-9_]+)\s*\(\)", f.read(), re.M))
    missing = []
    for m in mutants:
        known = tests if m["kind"] == "unit" else cases
        missing += [f"{m['id']}: {n}" for n in m["names"] if n not in known]
    if missing:
        sys.exit("mutants name tests that do not exist:\n  " + "\n  ".join(missing))
    stale = [problem for m in mutants for problem in edited(m, root)[1]]
    if stale:
        sys.exit("mutants that no longer apply:\n  " + "\n  ".join(stale))
    print(f"{len(mutants)} mutants, every one applies and every named killer exists")


def main(argv):
    if len(argv) == 3 and argv[1] == "list":
        for m in parse(argv[2]):
            print(f"{m['id']}\t{m['kind']}\t{' '.join(m['names'])}")
    elif len(argv) == 5 and argv[1] == "apply":
        for m in parse(argv[2]):
            if m["id"] == argv[3]:
                apply(m, argv[4])
                return
        sys.exit(f"no mutant {argv[3]}")
    elif len(argv) == 5 and argv[1] == "check":
        import os
        root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(argv[2])), "..", ".."))
        check(parse(argv[2]), argv[3], argv[4], root)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
