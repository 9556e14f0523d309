#!/usr/bin/env bash
# docs/architecture.md's table of layers says what each module under Sources/ depends on: the
# modules of ours, then packages (an external product counts as its package, a C system library
# as its apt package). This checks the table against Package.swift (`swift package
# dump-package`): every module listed, each with exactly its dependencies. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

swift package dump-package | python3 -c '
import json, re, sys

package = json.load(sys.stdin)
declared = {}
for target in package["targets"]:
    path = target.get("path") or ""
    if target["type"] == "test" or path.startswith("Tests/"):
        continue
    deps = set()
    for dependency in target.get("dependencies", []):
        (kind, value), = dependency.items()
        deps.add(value[1] if kind == "product" else value[0])
    for provider in target.get("providers") or []:
        for names in provider.get("apt", []):
            deps.update(names)
    declared[target["name"]] = deps

text = open("docs/architecture.md").read()
section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
documented = {}
for line in section.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 3 or not re.fullmatch(r"`[A-Za-z0-9_-]+`", cells[0]):
        continue
    deps = cells[-1]
    documented[cells[0].strip("`")] = set() if deps in ("—", "-", "") else {d.strip() for d in deps.split(",")}

comma = ", "
problems = []
for name in sorted(declared.keys() - documented.keys()):
    problems.append(f"{name} is in Package.swift but not in the table")
for name in sorted(documented.keys() - declared.keys()):
    problems.append(f"{name} is in the table but not in Package.swift")
for name in sorted(declared.keys() & documented.keys()):
    missing, extra = declared[name] - documented[name], documented[name] - declared[name]
    if missing:
        problems.append(f"{name}: the table leaves out {comma.join(sorted(missing))}")
    if extra:
        problems.append(f"{name}: the table names {comma.join(sorted(extra))}, which Package.swift does not")
if problems:
    print("check-architecture: docs/architecture.md disagrees with Package.swift:")
    for p in problems:
        print("  " + p)
    sys.exit(1)
print(f"check-architecture: ok ({len(declared)} modules, each with its dependencies as Package.swift declares them)")
'
