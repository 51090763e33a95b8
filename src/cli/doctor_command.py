"""``latence-retrieval-mcp doctor [--suggest]``: check a setup in order, one line each.

The order is the order a setup breaks in: the state directory and the token file's
modes, the dense model's files, the backend (reachable, authenticated), the
collection's shape against the settings, the agent-facing copy, and a live search
through the whole stack (dispatcher, pipeline, backend — everything but HTTP). Each
line says ``ok``, ``warn`` or ``FAIL``; every line that is not ``ok`` carries the fix.
A check that needs an earlier one that failed is skipped and says which. Exit 0 when
nothing failed, 1 otherwise.

``--suggest`` prints a settings snippet for pointing the server at an existing
collection, inferred from what the backend reports (see ``doctor_suggest.py``).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

import attrs
import trio

from retrieval_mcp.agent_copy.loader import CopyRejected
from retrieval_mcp.backends.protocol import LEGS, RetrievalBackend, unavailable_legs
from retrieval_mcp.cli.doctor_suggest import collection_shape, suggest_settings
from retrieval_mcp.encoders.minilm import model_files
from retrieval_mcp.errors import RetrievalMCPError, StoreLocked, project_error
from retrieval_mcp.mcp_surface.copy_reload import render_registry
from retrieval_mcp.mcp_surface.registry import registry_hash
from retrieval_mcp.services import Services, open_backend, open_services
from retrieval_mcp.settings import Settings
from retrieval_mcp.transport.caller import Caller

#: The query of the live round trip: words the demo corpus and most docs contain.
PROBE_QUERY = "how do I search the documents"


@attrs.frozen
class Check:
    status: str  # "ok", "warn", "FAIL", "skip"
    name: str
    detail: str
    remedy: str = ""

    def lines(self) -> list[str]:
        out = [f"{self.status:<4} {self.name}: {self.detail}"]
        if self.remedy and self.status != "ok":
            out.append(f"     fix: {self.remedy}")
        return out


def add_doctor_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor = sub.add_parser("doctor", help="check the setup, one line per check, with fixes")
    doctor.add_argument("--config", type=Path, help="operator settings file (TOML)")
    doctor.add_argument("--state-dir", type=Path, help="where the store, socket and tokens live")
    doctor.add_argument(
        "--suggest",
        action="store_true",
        help="print a settings snippet for the backend's collection (field mapping)",
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def check_state_dir(settings: Settings) -> list[Check]:
    state, tokens = settings.state_dir, settings.token_path
    if not state.exists():
        return [
            Check(
                "warn",
                "state dir",
                f"{state} does not exist yet",
                "latence-retrieval-mcp serve creates it (mode 0700) with a token file",
            )
        ]
    checks = []
    mode = _mode(state)
    if mode & 0o077:
        checks.append(
            Check("FAIL", "state dir", f"{state} is mode {mode:04o}", f"chmod 700 {state}")
        )
    else:
        checks.append(Check("ok", "state dir", f"{state} (mode {mode:04o})"))
    if not settings.server.require_auth:
        checks.append(Check("warn", "token file", "auth is off (server.require_auth = false)"))
    elif not tokens.exists():
        checks.append(
            Check(
                "warn",
                "token file",
                f"{tokens} does not exist yet",
                "serve creates it, or: latence-retrieval-mcp token create NAME",
            )
        )
    else:
        mode = _mode(tokens)
        if mode & 0o077:
            checks.append(
                Check("FAIL", "token file", f"{tokens} is mode {mode:04o}", f"chmod 600 {tokens}")
            )
        else:
            checks.append(Check("ok", "token file", f"{tokens} (mode {mode:04o})"))
    return checks


def check_model_files(settings: Settings) -> Check:
    if settings.backend.kind != "qdrant-embedded" and settings.encoder.kind != "minilm-onnx":
        return Check("ok", "model files", "not used (encoder.kind = openai-compatible)")
    try:
        onnx, tokenizer = model_files()
    except RetrievalMCPError as exc:
        severity = "warn" if settings.backend.kind == "qdrant-embedded" else "FAIL"
        consequence = " (keyword search only)" if severity == "warn" else ""
        return Check(severity, "model files", exc.message + consequence, exc.remedy)
    return Check("ok", "model files", f"{onnx.name} ({onnx.parent.name}), {tokenizer}")


async def check_backend_declares(settings: Settings, backend: RetrievalBackend) -> Check:
    """The collection's shape against the settings: legs forced on must be declared, and
    what the backend says it cannot do, it says here too."""
    declared = backend.capabilities()
    problems = []
    for leg in LEGS:
        mode = getattr(settings.pipeline.legs, leg.value).mode
        if mode == "on" and leg not in declared:
            problems.append(
                f"pipeline.legs.{leg.value}.mode = 'on' but {backend.name} has no {leg.value} leg"
            )
    gaps = [f"{u.leg.value}: {u.reason}" for u in unavailable_legs(backend)]
    shape, shape_remedy = await collection_shape(settings, backend)
    detail = f"{backend.name} declares {', '.join(sorted(c.value for c in declared))}"
    if shape:
        detail += f"; {shape}"
    if problems:
        return Check(
            "FAIL",
            "collection shape",
            "; ".join(problems),
            "Map it in the [backend.*] settings (see doctor --suggest), or set the mode to 'auto'.",
        )
    if gaps:
        remedies = "; ".join(u.remedy for u in unavailable_legs(backend))
        return Check(
            "warn", "collection shape", f"{detail}; unavailable: {'; '.join(gaps)}", remedies
        )
    if shape_remedy:
        return Check("warn", "collection shape", detail, shape_remedy)
    return Check("ok", "collection shape", detail)


def check_copy(settings: Settings, backend: RetrievalBackend) -> Check:
    try:
        registry = render_registry(settings, backend.capabilities())
    except CopyRejected as exc:
        return Check("FAIL", "copy lint", exc.message, exc.remedy)
    where = settings.copy_dir or "shipped copy"
    return Check(
        "ok", "copy lint", f"{where}: {len(registry.tools)} tools, hash {registry_hash(registry)}"
    )


async def check_round_trip(services: Services) -> Check:
    doctor = Caller(token_name="doctor")
    result = await services.dispatcher.call("search", {"query": PROBE_QUERY, "top_k": 3}, doctor)
    envelope = result.structured_content or {}
    if not envelope.get("ok"):
        error = envelope.get("error") or {}
        return Check(
            "FAIL",
            "search round trip",
            f"{error.get('code')}: {error.get('message')}",
            str(error.get("remedy", "")),
        )
    meta = envelope["meta"]
    hits = envelope["data"]["hits"]
    legs = meta["legs"]
    detail = f"{len(hits)} hits in {meta['took_ms']:.0f} ms over {', '.join(legs['used'])}" + (
        f"; dropped {', '.join(d['leg'] + ' (' + d['reason'] + ')' for d in legs['dropped'])}"
        if legs["dropped"]
        else ""
    )
    if not hits:
        return Check(
            "warn",
            "search round trip",
            detail + "; the index is empty",
            "latence-retrieval-mcp ingest PATH (or serve once: it ingests the demo corpus)",
        )
    return Check("warn" if legs["dropped"] else "ok", "search round trip", detail)


def _skipped(names: list[str], why: str) -> list[Check]:
    return [Check("skip", name, why) for name in names]


async def run_checks(settings: Settings, say: Callable[[Check], None]) -> bool:
    """Run every check in order, reporting each as it finishes; True when none failed."""
    failed = False

    def report(check: Check) -> None:
        nonlocal failed
        failed = failed or check.status == "FAIL"
        say(check)

    for check in check_state_dir(settings):
        report(check)
    report(check_model_files(settings))
    later = ["collection shape", "copy lint", "search round trip"]
    if settings.backend.kind == "qdrant-embedded" and not settings.store_path.exists():
        report(
            Check(
                "warn",
                "backend",
                f"no store at {settings.store_path} yet",
                "latence-retrieval-mcp serve (ingests the demo corpus) or ingest PATH",
            )
        )
        for check in _skipped(later, "no store yet"):
            report(check)
        return not failed
    async with AsyncExitStack() as stack:
        try:
            backend = await stack.enter_async_context(open_backend(settings))
        except (RetrievalMCPError, BaseExceptionGroup) as exc:
            error = project_error(exc)
            if error is None:
                raise
            if isinstance(error, StoreLocked):
                held = f"the store at {settings.store_path} is held by a running server"
                report(Check("ok", "backend", held))
                for check in _skipped(later, "stop the server to run these checks on its store"):
                    report(check)
                return not failed
            report(Check("FAIL", "backend", f"{error.code}: {error.message}", error.remedy))
            for check in _skipped(later, "needs the backend"):
                report(check)
            return False
        status = await backend.status()
        report(
            Check(
                "ok" if status.ready else "FAIL",
                "backend",
                f"{status.backend}: {'ready' if status.ready else 'not ready'}, "
                f"{status.chunks} chunks" + (f" ({status.detail})" if status.detail else ""),
                "" if status.ready else "See the server log for the backend's error.",
            )
        )
        report(await check_backend_declares(settings, backend))
        copy = check_copy(settings, backend)
        report(copy)
    if copy.status == "FAIL":
        report(Check("skip", "search round trip", "needs a copy that passes the lint"))
        return False
    # The whole stack this time (WAL, actors, registry, dispatcher), as serve builds it.
    async with open_services(settings) as services:
        report(await check_round_trip(services))
    return not failed


def run_doctor_command(args: argparse.Namespace, settings: Settings) -> int:
    def say(check: Check) -> None:
        sys.stdout.write("\n".join(check.lines()) + "\n")
        sys.stdout.flush()

    if args.suggest:
        return _suggest(settings)
    healthy = trio.run(run_checks, settings, say)
    sys.stdout.write(
        "doctor: all checks passed\n" if healthy else "doctor: something failed (FAIL above)\n"
    )
    return 0 if healthy else 1


def _suggest(settings: Settings) -> int:
    async def main() -> str:
        return await suggest_settings(settings)

    sys.stdout.write(trio.run(main))
    return 0
