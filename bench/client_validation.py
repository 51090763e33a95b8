"""What a validating client pays per `search` result: the outputSchema walk, two ways.

The MCP Python SDK's client checks every successful ``tools/call`` result against the
tool's ``outputSchema`` with ``jsonschema`` (a compiled validator, cached per tool).
This starts ``serve`` on the bundled demo corpus in a temp state dir, takes real
``search`` results through the SDK client, and times that validator on them with the
schema as published and with pydantic's own (``$ref``s into ``$defs``, ``anyOf`` for
nullable fields; ADR 0030 as first written), alternating rounds in one process.
Then, in situ, the client process's CPU per ``search`` call with the SDK's check as
shipped and with it skipped (``ClientSession.validate_tool_result`` replaced by a
no-op for those rounds), alternating: what the check costs a client next to the rest
of a call (HTTP, JSON, pydantic), which on a loopback server shares the same cores.

    .venv/bin/python bench/client_validation.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import mcp_overhead  # noqa: E402

QUERIES = ("how does the server screen retrieved text", "rate limits per token", "ingest a folder")
IN_SITU_CALLS = 150
IN_SITU_ROUNDS = 5


async def client_cpu(client: Any) -> dict[str, list[float]]:
    """Client CPU ms per call, the SDK's outputSchema check on and skipped, alternating."""
    from mcp.client.session import ClientSession

    check = ClientSession.validate_tool_result

    async def skipped(self: ClientSession, name: str, result: Any) -> None:
        return None

    cpu: dict[str, list[float]] = {"checked": [], "skipped": []}
    try:
        for _ in range(IN_SITU_ROUNDS):
            for label, method in (("checked", check), ("skipped", skipped)):
                ClientSession.validate_tool_result = method  # type: ignore[method-assign]
                t0 = time.process_time()
                for i in range(IN_SITU_CALLS):
                    await client.call_tool("search", {"query": QUERIES[i % 3], "top_k": 8})
                cpu[label].append((time.process_time() - t0) * 1000 / IN_SITU_CALLS)
    finally:
        ClientSession.validate_tool_result = check  # type: ignore[method-assign]
    return cpu


async def capture(
    state_dir: Path,
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, list[float]]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    command = [sys.executable, "-m", "retrieval_mcp", "serve", "--state-dir", str(state_dir)]
    command += ["--port", "0", "--socket", "none"]
    started = await mcp_overhead.start_serve(command, state_dir / "serve.log", timeout_s=600)
    try:
        headers = {"Authorization": f"Bearer {started.token}"}
        http = httpx2.AsyncClient(headers=headers, trust_env=False, timeout=60)
        async with (
            http,
            Client(streamable_http_client(started.url, http_client=http), mode="legacy") as client,
        ):
            tools = {t.name: t for t in (await client.list_tools()).tools}
            results = []
            for query in QUERIES:
                result = await client.call_tool("search", {"query": query, "top_k": 8})
                results.append(result.structured_content)
            schema = tools["search"].output_schema
            assert schema is not None
            return results, schema, await client_cpu(client)
    finally:
        mcp_overhead.stop(started.proc)


def pydantic_schema() -> dict[str, Any]:
    from pydantic import TypeAdapter

    from retrieval_mcp.envelope import Failure, Success
    from retrieval_mcp.tools.result_types import SearchData

    envelope: Any = Success[SearchData] | Failure
    generated = TypeAdapter(envelope).json_schema(ref_template="#/$defs/{model}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **generated}


def main() -> None:
    from jsonschema import exceptions
    from jsonschema.validators import validator_for
    from referencing import Registry

    with tempfile.TemporaryDirectory(prefix="lrm-validate-") as tmp:
        results, published, in_situ = trio.run(capture, Path(tmp))
    schemas = {"published": published, "pydantic ($ref, anyOf)": pydantic_schema()}
    validators = {name: validator_for(s)(s, registry=Registry()) for name, s in schemas.items()}

    def walk(validator: Any, rounds: int = 100) -> float:
        t0 = time.perf_counter()
        for _ in range(rounds):
            for result in results:
                assert exceptions.best_match(validator.iter_errors(result)) is None
        return (time.perf_counter() - t0) * 1000 / (rounds * len(results))

    times: dict[str, list[float]] = {name: [] for name in validators}
    for _ in range(7):
        for name, validator in validators.items():
            times[name].append(walk(validator))
    hits = [len(r["data"]["hits"]) for r in results]
    sizes = [len(json.dumps(r)) for r in results]
    print(f"search results: hits {hits}, structuredContent bytes {sizes}")
    base = statistics.median(times["pydantic ($ref, anyOf)"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:24s} {median:.3f} ms per result (x{median / base:.2f})")
    checked, skipped = (statistics.median(in_situ[k]) for k in ("checked", "skipped"))
    print(
        f"client CPU per search call, in situ ({IN_SITU_ROUNDS} x {IN_SITU_CALLS} calls each, "
        f"c=1): check as shipped {checked:.2f} ms, check skipped {skipped:.2f} ms "
        f"(the check: {checked - skipped:.2f} ms, {100 * (checked - skipped) / checked:.0f} %)"
    )


if __name__ == "__main__":
    main()
