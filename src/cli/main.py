"""The ``latence-retrieval-mcp`` command: serve, ingest, status."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import attrs
import httpx
import structlog
import trio

from retrieval_mcp import __version__
from retrieval_mcp.cli.client_configs import client_configs
from retrieval_mcp.cli.config_command import add_config_parser, run_config_command
from retrieval_mcp.cli.doctor_command import add_doctor_parser, run_doctor_command
from retrieval_mcp.cli.ingest_command import ingest_token, ingest_via_server, progress_line
from retrieval_mcp.cli.sessions_command import add_sessions_parser, run_sessions_command
from retrieval_mcp.cli.stdio_command import add_stdio_parser, run_stdio_command
from retrieval_mcp.cli.token_command import add_token_parser, run_token_command
from retrieval_mcp.errors import RetrievalMCPError, StoreLocked, project_error
from retrieval_mcp.eval_runner import (
    CONTEXT_BUDGETS,
    DEFAULT_VARIANTS,
    VARIANTS,
    context_table,
    evaluate,
    evaluate_context,
    results_table,
)
from retrieval_mcp.ingest.formats.format_settings import parse_columns
from retrieval_mcp.ingest.runner import IngestReport
from retrieval_mcp.logs import configure_logging, log_file, stop_stderr_logging
from retrieval_mcp.server_run import ServerInfo, run_server
from retrieval_mcp.services import ingest_path, open_backend
from retrieval_mcp.settings import ENV_STATE_DIR, Settings, default_state_dir, load_settings
from retrieval_mcp.transport.operator_channel import summary
from retrieval_mcp.transport.worker_pool import check_worker_count, run_pool


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="operator settings file (TOML)")
    parser.add_argument("--state-dir", type=Path, help="where the store, socket and tokens live")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="latence-retrieval-mcp",
        description="An MCP retrieval server over your existing search stack.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the MCP server (loopback HTTP + Unix socket)")
    _common(serve)
    serve.add_argument("--port", type=int, help="TCP port on loopback (default 8765)")
    serve.add_argument("--host", help="loopback address to bind (default 127.0.0.1)")
    serve.add_argument("--socket", help='Unix socket path, or "none"')
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve from N processes sharing the sockets (remote stores only; default 1)",
    )
    serve.add_argument(
        "--no-demo",
        action="store_true",
        help="do not ingest the bundled demo corpus into an empty store",
    )

    ingest = sub.add_parser(
        "ingest",
        help="ingest a folder, a file or a BEIR folder "
        "(Markdown, reST, HTML, PDF, DOCX, code, JSONL/CSV, text)",
    )
    _common(ingest)
    ingest.add_argument("path", type=Path)
    ingest.add_argument("--source", help="source name (default: the folder's name)")
    ingest.add_argument(
        "--prune",
        action="store_true",
        help="delete stored documents of this source that are gone from PATH",
    )
    ingest.add_argument(
        "--columns",
        type=parse_columns,
        metavar="KEY=COLUMN,...",
        help="JSONL/CSV column mapping, e.g. text=body,title=name,id=uid,metadata=lang;tags",
    )
    ingest.add_argument(
        "--token-file",
        type=Path,
        help="a 0600 file holding a token of scope ingest, used when a server holds the "
        "store (default: $LATENCE_INGEST_TOKEN)",
    )

    status = sub.add_parser("status", help="show the store and whether a server is running")
    _common(status)

    add_config_parser(sub)
    add_sessions_parser(sub)
    add_token_parser(sub)
    add_doctor_parser(sub)
    add_stdio_parser(sub)

    evaluate = sub.add_parser("eval", help="run a test collection end to end over MCP")
    _common(evaluate)
    evaluate.add_argument("dataset", type=Path, help="a BEIR folder or the SMART Cranfield folder")
    evaluate.add_argument(
        "--variants",
        default=",".join(DEFAULT_VARIANTS),
        help=f"comma-separated, from: {', '.join(VARIANTS)}",
    )
    evaluate.add_argument("--queries", type=int, help="only the first N queries")
    evaluate.add_argument(
        "--context",
        action="store_true",
        help="measure get_context per token budget against search's ranking cut to it",
    )
    evaluate.add_argument(
        "--budgets",
        default=",".join(str(b) for b in CONTEXT_BUDGETS),
        help="token budgets for --context (comma-separated)",
    )
    evaluate.add_argument("--json", type=Path, help="also write the figures here")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    server: dict[str, Any] = {}
    if getattr(args, "port", None) is not None:
        server["port"] = args.port
    if getattr(args, "host", None):
        server["host"] = args.host
    if getattr(args, "socket", None):
        server["unix_socket"] = args.socket
    if server:
        overrides["server"] = server
    if getattr(args, "columns", None):
        overrides["formats"] = {"columns": args.columns}
    if getattr(args, "no_demo", False):
        overrides["demo"] = {"ingest_on_first_start": False}
    return load_settings(args.config, state_dir=args.state_dir, overrides=overrides)


def client_config(info: ServerInfo) -> str:
    token = info.new_token or "<your token>"
    lines = ["", "latence-retrieval-mcp is serving.", f"  MCP over HTTP : {info.url}"]
    if info.socket_path:
        lines.append(f"  Unix socket   : {info.socket_path} (send Host: localhost)")
    if info.demo_chunks:
        lines.append(f"  Demo corpus   : {info.demo_chunks} chunks ingested as source 'demo'")
    lines += [
        "",
        "Client configuration (paste into your MCP client):",
        client_configs(info.url, token, info.token_path.parent, info.socket_path),
    ]
    if info.new_token:
        lines.append(f"This token is shown once; only its digest is stored in {info.token_path}.")
    else:
        lines.append(
            f"The token was shown when {info.token_path} was created. To issue a "
            "new one: latence-retrieval-mcp token create NAME (or token rotate NAME)."
        )
    return "\n".join(lines) + "\n"


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings(args)
    configure_logging(
        settings.logging.level,
        stderr=settings.logging.stderr,
        log_content=settings.logging.log_content,
    )

    workers: int = args.workers
    check_worker_count(settings, workers)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            if workers > 1:
                info = await nursery.start(
                    lambda task_status: run_pool(settings, workers, task_status=task_status)
                )
            else:
                info = await nursery.start(
                    lambda task_status: run_server(settings, task_status=task_status)
                )
            sys.stdout.write(client_config(info))
            sys.stdout.flush()

    trio.run(main)
    return 0


def _progress(report: IngestReport, pending: int) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(
            f"\r{report.source}: {report.chunks_written} chunks written, "
            f"{report.documents_unchanged} documents unchanged   "
        )
        sys.stderr.flush()


def cmd_ingest(args: argparse.Namespace) -> int:
    settings = _settings(args)
    configure_logging("warning")
    source = args.source or args.path.resolve().name or "default"

    async def main() -> IngestReport:
        async with open_backend(settings) as backend:
            return await ingest_path(
                backend, settings, args.path, source=source, prune=args.prune, progress=_progress
            )

    try:
        ingested = summary(trio.run(main))
    except StoreLocked:
        # A server holds the store: it applies the ingest while it serves (ADR 0037).
        ingested = ingest_via_server(
            settings,
            args.path,
            source=source,
            prune=args.prune,
            token=ingest_token(args.token_file),
            columns=getattr(args, "columns", None),
            on_event=progress_line,
        )
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print(json.dumps({"ingested": ingested}, indent=2))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    settings = _settings(args)
    configure_logging("warning")

    async def main() -> dict[str, Any]:
        async with open_backend(settings) as backend:
            status = await backend.status()
            sources = await backend.sources()
        return {
            "server_running": False,
            "ready": status.ready,
            "backend": status.backend,
            "chunks": status.chunks,
            "sources": {s.name: s.chunks for s in sources},
            **dict(status.extra),
        }

    try:
        report = trio.run(main)
    except StoreLocked:
        report = {"server_running": True, **_ask_running_server(settings)}
    print(json.dumps({"state_dir": str(settings.state_dir), **report}, indent=2, default=str))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    settings = _settings(args)
    configure_logging("warning")
    variants = tuple(v.strip() for v in args.variants.split(",") if v.strip())
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        sys.stderr.write(f"error: unknown variant(s) {unknown}; known: {list(VARIANTS)}\n")
        return 2

    def say(line: str) -> None:
        sys.stderr.write(line + "\n")

    if args.context:
        budgets = tuple(int(b) for b in args.budgets.split(",") if b.strip())
        report, packs = trio.run(
            lambda: evaluate_context(
                args.dataset, settings, budgets, limit=args.queries, progress=say
            )
        )
        print(context_table(packs))
        if args.json:
            args.json.write_text(
                json.dumps(
                    {
                        "dataset": str(args.dataset),
                        "chunks_written": report.chunks_written,
                        "context": [attrs.asdict(r) for r in packs],
                    },
                    indent=2,
                )
            )
        return 0
    report, results = trio.run(
        lambda: evaluate(args.dataset, settings, variants, limit=args.queries, progress=say)
    )
    print(results_table(results))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "dataset": str(args.dataset),
                    "chunks_written": report.chunks_written,
                    "results": [attrs.asdict(r) for r in results],
                },
                indent=2,
            )
        )
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    return run_token_command(args, _settings(args))


def cmd_sessions(args: argparse.Namespace) -> int:
    return run_sessions_command(args, _settings(args))


def cmd_doctor(args: argparse.Namespace) -> int:
    configure_logging("error")
    return run_doctor_command(args, _settings(args))


def cmd_stdio(args: argparse.Namespace) -> int:
    return run_stdio_command(args, _settings(args))


def cmd_config(args: argparse.Namespace) -> int:
    settings = None if args.config_command == "schema" else _settings(args)
    return run_config_command(args, settings)


def _ask_running_server(settings: Settings) -> dict[str, Any]:
    socket_path = settings.socket_path
    try:
        if socket_path is not None and socket_path.exists():
            transport = httpx.HTTPTransport(uds=str(socket_path))
            with httpx.Client(transport=transport, timeout=5) as client:
                response = client.get("http://localhost/readyz")
        else:
            with httpx.Client(timeout=5) as client:
                response = client.get(f"http://127.0.0.1:{settings.server.port}/readyz")
        result: dict[str, Any] = response.json()
        return result
    except (httpx.HTTPError, ValueError) as exc:
        return {"error": f"the store is locked but the server did not answer: {exc}"}


def main(argv: list[str] | None = None) -> int:
    """Run one command. Whatever happens, the user gets one line and an exit code:
    0 done, 2 a project error (``error [code]: message; remedy: …``), 1 an unexpected
    error (its traceback goes to a log file the line names), 130 interrupted."""
    args = build_parser().parse_args(argv)
    handlers = {
        "serve": cmd_serve,
        "ingest": cmd_ingest,
        "status": cmd_status,
        "config": cmd_config,
        "token": cmd_token,
        "eval": cmd_eval,
        "sessions": cmd_sessions,
        "doctor": cmd_doctor,
        "stdio": cmd_stdio,
    }
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        return 130
    except (Exception, BaseExceptionGroup) as exc:
        # Errors raised inside nurseries arrive wrapped in groups: report ours plainly.
        if _only_interrupts(exc):
            return 130
        error = project_error(exc)
        if error is not None:
            sys.stderr.write(error_line(error) + "\n")
            return 2
        sys.stderr.write(_report_crash(args, exc) + "\n")
        return 1


def _one_line(text: str, limit: int = 2000) -> str:
    """Newlines and control characters folded to spaces, runs collapsed, cut at ``limit``."""
    folded = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return folded if len(folded) <= limit else folded[:limit] + "…"


def error_line(error: RetrievalMCPError) -> str:
    """A project error as the one line the CLI prints."""
    return _one_line(f"error [{error.code}]: {error.message}; remedy: {error.remedy}")


def _crash_log(args: argparse.Namespace) -> Path:
    state = getattr(args, "state_dir", None) or (
        Path(os.environ[ENV_STATE_DIR]) if os.environ.get(ENV_STATE_DIR) else default_state_dir()
    )
    name = "server.log" if args.command == "serve" else "cli.log"
    return Path(state).expanduser() / "logs" / name


def _report_crash(args: argparse.Namespace, exc: BaseException) -> str:
    """Log the traceback (redacted like every log line) and say where it went."""
    what = f"{args.command} {getattr(args, f'{args.command}_command', '') or ''}".strip()
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    kind = type(leaf).__name__
    stop_stderr_logging()  # the user gets one line, not a traceback
    path = _crash_log(args)
    try:
        # The state directory, if this creates it, must be 0700 like ``serve`` makes it.
        path.parent.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with log_file(path):
            structlog.get_logger(__name__).error("command_crashed", command=what, exc_info=exc)
    except OSError:
        return _one_line(
            f"error [internal_error]: unexpected {kind} in '{what}' (no log: "
            f"the state directory's logs/ is not writable)"
        )
    return _one_line(f"error [internal_error]: unexpected {kind} in '{what}'; details in {path}")


def _only_interrupts(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_interrupts(inner) for inner in exc.exceptions)
    return isinstance(exc, KeyboardInterrupt)
