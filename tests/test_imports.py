"""The package's modules import each other in one direction only: no module imports a module that imports it.

A package's ``__init__`` may import its own submodules (that is what a package is); any other pair of modules
that import each other, at the top or inside a function, fails.
"""
import ast
import pathlib

import cule

ROOT = pathlib.Path(cule.__file__).parent


def module_imports() -> dict[str, set[str]]:
    """Module name -> the package's modules it imports (a name imported from a package counts as its submodule
    when there is one)."""
    files = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        files[name] = (path, name if is_package else ".".join(parts[:-1]))
    imports = {}
    for name, (path, package) in files.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    found.add(sub if sub in files else source)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        imports[name] = {m for m in found if m in files and m != name}
    return imports


def test_no_two_modules_import_each_other():
    imports = module_imports()
    assert len(imports) > 20 and "cule.blocks" in imports["cule.vector_env"]  # the scan sees the package
    pairs = []
    for a, deps in imports.items():
        for b in deps:
            own_submodule = b.startswith(a + ".") or a.startswith(b + ".")
            if a < b and a in imports[b] and not own_submodule:
                pairs.append((a, b))
    assert not pairs, f"modules that import each other: {pairs}"
