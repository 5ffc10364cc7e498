#!/usr/bin/env python3
"""Reads scripts/mutate.d/mutants.txt and applies one mutant to a tree.

  mutants.py list MUTANTS             one line per mutant: ID<TAB>TIER
  mutants.py apply MUTANTS ID ROOT    edit files under ROOT; prints each
                                      file it changed, relative to ROOT

A block of old text that does not occur exactly once is an error (exit 2):
a mutant that silently applies nowhere would be "killed" by nothing.
"""
import sys


def parse(path):
    mutants, current, block = [], None, None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            where = f"{path}:{number}"
            if line.startswith("=="):
                ident, _, tier = line[2:].partition("|")
                current = {"id": ident.strip(), "tier": tier.strip(),
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
    for m in mutants:
        if not m["edits"] or not m.get("file") or not m["tier"]:
            sys.exit(f"{m['where']}: mutant {m['id']} needs file, tier and edits")
    return mutants


def apply(mutant, root):
    changed = {}
    for edit in mutant["edits"]:
        path = f"{root}/{edit['file']}"
        text = changed.get(path)
        if text is None:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        old, new = "\n".join(edit["old"]), "\n".join(edit["new"])
        count = text.count(old)
        if count != 1:
            print(f"mutant {mutant['id']}: {edit['file']} holds its old text "
                  f"{count} times, not once: {edit['old'][0].strip()}",
                  file=sys.stderr)
            sys.exit(2)
        changed[path] = text.replace(old, new)
    for path, text in changed.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(path[len(root) + 1:])


def main(argv):
    if len(argv) == 3 and argv[1] == "list":
        for m in parse(argv[2]):
            print(f"{m['id']}\t{m['tier']}")
    elif len(argv) == 5 and argv[1] == "apply":
        for m in parse(argv[2]):
            if m["id"] == argv[3]:
                apply(m, argv[4])
                return
        sys.exit(f"no mutant {argv[3]}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
