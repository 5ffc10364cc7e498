#!/usr/bin/env python3
"""Checks the loader's includes against its layers.

    check-includes.py ROOT LAYER=USES... [LAYER=USES...]

USES is a comma-separated list of the layers LAYER may use (empty: none),
as loader/CMakeLists.txt declares them; the link checks there catch calls
across a forbidden edge, this catches what a link cannot see: a header
included for its inline code, constants or types. Every non-test source of
loader/<layer>/ (cli: loader/command_line.*) may include loader headers of
its own layer and of the layers it uses, and only the bpf layer may include
libbpf's <bpf/...> headers. Prints one line per violation and exits 1 when
there is any.
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def layer_of_header(path):
    if path == "loader/command_line.h":
        return "cli"
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "loader":
        return parts[1]
    return None


def sources(root, layer):
    if layer == "cli":
        return sorted(root.glob("loader/command_line.*"))
    return sorted(p for p in (root / "loader" / layer).glob("*")
                  if p.suffix in (".h", ".cc"))


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    uses = {}
    for spec in argv[2:]:
        layer, _, deps = spec.partition("=")
        uses[layer] = {d for d in deps.split(",") if d}
    bad = []
    for layer, deps in uses.items():
        files = sources(root, layer)
        if not files:
            bad.append(f"layer {layer}: no sources found")
        for f in files:
            if f.name.endswith("_test.cc"):
                continue  # tests are linked with every layer
            rel = f.relative_to(root)
            for header in INCLUDE.findall(f.read_text()):
                if header.startswith("bpf/") and layer != "bpf":
                    bad.append(f"{rel}: includes libbpf's <{header}> outside the bpf layer")
                other = layer_of_header(header)
                if other is not None and other != layer and other not in deps:
                    bad.append(f"{rel}: the {layer} layer includes {header} "
                               f"({other} is not among {sorted(deps) or 'none'})")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
