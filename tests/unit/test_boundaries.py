"""The package boundaries hold: every import of every .py file is read (with ``ast``, lazy imports
inside functions too) and checked against the layout's rules.

- A service imports only ``shared/`` and its own package: what two services need lives in
  ``shared/``, so a service can change (or be deployed) without reaching into another's modules.
  ``services/registry.py`` lists every service's spec, and anything may read the registry.
- ``shared/`` imports nothing from ``services/``, ``orquestra/``, ``bench/`` or ``tests/``: the
  services build on it, it builds on nothing of theirs (the registry reaches it by parameter).
- ``bench/`` does not import ``tests/``: the benchmark runs without the test suite.
- ``orquestra/`` does not import ``bench/``, which imports ``orquestra/`` (its embedded Redis,
  its list of workers). The one doorway is the ``orquestra bench`` command itself
  (``orquestra/bench.py``), which imports ``bench`` inside its functions only, so no other
  command, and no service image, loads the benchmark.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("services", "shared", "orquestra", "bench", "tests")
REGISTRY = "services.registry"
BENCH_COMMAND = "orquestra/bench.py"


@dataclass(frozen=True)
class Import:
    line: int
    module: str
    # Inside a function or method: run when called, not when the module is imported.
    lazy: bool


def _module_of(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, path: str) -> list[Import]:
    """Every module ``source`` imports, absolute (relative imports resolved against ``path``),
    and the literal names passed to ``importlib.import_module``."""
    package = _module_of(path).split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(node.lineno, alias.name, lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from services import trial`` imports services.trial; ``from x.y import Name``
            # imports x.y (and names nothing deeper that matters to a boundary).
            found.extend(Import(node.lineno, f"{base}.{alias.name}", lazy) for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append(Import(node.lineno, node.args[0].value, lazy))
        inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(source, filename=path), False)
    return found


def _top(module: str) -> str:
    return module.split(".")[0]


def _service_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "services" and len(parts) > 1 else None


def problem(path: str, imported: Import) -> str | None:
    """Why ``path`` may not import ``imported``, with the fix; None when it may."""
    module = imported.module
    where = f"{path}:{imported.line} imports {module}"
    top = path.split("/")[0]
    if top == "services" and _top(module) == "services":
        if (
            path == "services/registry.py"
            or module == REGISTRY
            or module.startswith(REGISTRY + ".")
        ):
            return None
        ours = path.split("/")[1] if path.count("/") > 1 else None
        theirs = _service_of(module)
        if theirs is not None and theirs != ours:
            return (
                f"{where}: a service imports only shared/ and its own package. Move what both "
                f"services need into a module of shared/ (one job, a docstring saying who "
                f"shares it) and import it from there in both."
            )
        return None
    if top == "shared" and _top(module) in ("services", "orquestra", "bench", "tests"):
        return (
            f"{where}: shared/ builds on nothing of the services or the tools. Move the code "
            f"it needs into shared/, or pass it in as a parameter (as the registry is)."
        )
    if top == "bench" and _top(module) == "tests":
        return (
            f"{where}: bench/ runs without the test suite. Move what both need into bench/ "
            f"(tests may import bench/), as bench/fake_openai.py was."
        )
    if top == "orquestra" and _top(module) == "bench":
        if path == BENCH_COMMAND and imported.lazy:
            return None
        return (
            f"{where}: bench/ imports orquestra/, so orquestra/ must not import bench/. Move the "
            f"code into orquestra/ (or shared/), or, for the `orquestra bench` command only, "
            f"import bench inside the function that runs it."
        )
    return None


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def test_every_import_keeps_the_package_boundaries() -> None:
    problems = []
    for file in _sources():
        path = file.relative_to(ROOT).as_posix()
        for imported in imports_of(file.read_text(), path):
            found = problem(path, imported)
            if found is not None:
                problems.append(found)
    assert not problems, "\n".join(problems)


def test_the_rules_see_the_imports_they_are_about() -> None:
    """The checker is not vacuous: it finds imports in every form and flags each kind of
    crossing, with the file, the import and the fix."""
    source = (
        "from services.scheduler.funnel import plan_patterns\n"
        "import services.faq.index as index\n"
        "from services import trial\n"
        "from . import rules\n"
        "from ..faq import core\n"
        "from services.registry import SERVICES\n"
        "def later():\n"
        "    import importlib\n"
        "    importlib.import_module('services.trial.flow')\n"
    )
    found = imports_of(source, "services/triage/app.py")
    assert [(i.module, i.lazy) for i in found] == [
        ("services.scheduler.funnel.plan_patterns", False),
        ("services.faq.index", False),
        ("services.trial", False),
        ("services.triage.rules", False),
        ("services.faq.core", False),
        ("services.registry.SERVICES", False),
        ("importlib", True),
        ("services.trial.flow", True),
    ]
    flagged = [i.module for i in found if problem("services/triage/app.py", i)]
    assert flagged == [
        "services.scheduler.funnel.plan_patterns",
        "services.faq.index",
        "services.trial",
        "services.faq.core",
        "services.trial.flow",
    ]
    message = problem("services/triage/app.py", found[0])
    assert message is not None
    assert message.startswith("services/triage/app.py:1 imports services.scheduler.funnel")
    assert "shared/" in message

    assert problem("shared/x.py", Import(3, "services.trial.models", False)) is not None
    assert problem("shared/x.py", Import(3, "orquestra.up", True)) is not None
    assert problem("bench/x.py", Import(3, "tests.support.fixtures", False)) is not None
    assert problem("orquestra/up.py", Import(3, "bench.run", True)) is not None
    assert problem(BENCH_COMMAND, Import(3, "bench.run", False)) is not None
    assert problem(BENCH_COMMAND, Import(3, "bench.run", True)) is None
    assert problem("services/registry.py", Import(3, "services.trial.spec", False)) is None
    assert problem("services/gateway/api.py", Import(3, "services.registry", False)) is None
