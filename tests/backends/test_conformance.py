"""One conformance suite for every adapter.

Real engines: the embedded store (qdrant-edge) and Postgres + pgvector. CONTRACT TESTS:
remote Qdrant, Databricks Vector Search and Azure AI Search, against the local servers
in ``contract_servers/`` that speak the documented subset of each API.

Each case is opened through ``services.open_backend`` from a ``Settings`` object, the
path the server and the CLI take, so config, secrets and the factory are covered too.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import attrs
import psycopg
import pytest
import trio

from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalRequest
from retrieval_mcp.backends.protocol import (
    LEGS,
    Capability,
    IngestTarget,
    LegQuery,
    NeighborsBackend,
    RetrievalBackend,
    SearchFilter,
    SimilarBackend,
    VectorsBackend,
    neighbors_many,
)
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.errors import (
    BackendAuthFailed,
    BackendBadResponse,
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    CapabilityMissing,
    ConfigError,
    RetrievalMCPError,
    StoreLocked,
)
from retrieval_mcp.services import open_backend
from retrieval_mcp.settings import PipelineConfig
from tests.backends.conformance import (
    ALL_LEGS,
    DENSE_QUERY,
    KEYWORD_QUERY,
    QDRANT_FIELDS,
    AdapterCase,
    Failure,
    RecordingBackend,
    chunk_of,
    corpus_chunks,
    counts_by_source,
    load_azure,
    load_databricks,
    load_qdrant,
    make_settings,
)
from tests.backends.contract_servers.azure_contract import AzureSearchContract
from tests.backends.contract_servers.databricks_contract import DatabricksContract
from tests.backends.contract_servers.faults import Faults
from tests.backends.contract_servers.loopback_host import closed_port_url, serve_on_loopback
from tests.backends.contract_servers.qdrant_contract import QdrantContract
from tests.backends.contract_servers.tei_contract import TeiEncoderContract

D, B, F = Capability.DENSE, Capability.BM25, Capability.FILTER
SP, MV = Capability.SPARSE, Capability.MULTIVECTOR
N, S, V, INGEST = Capability.NEIGHBORS, Capability.SIMILAR, Capability.VECTORS, Capability.INGEST

CASES = [
    "qdrant-embedded",
    "postgres",
    "postgres:mapped-table",
    "postgres:mapped-view",
    "qdrant-remote",
    "qdrant-remote:per-source",
    "qdrant-remote:every-leg",
    "databricks",
    "azure-search",
    "azure-search:keyword-only",
]


@pytest.fixture(params=CASES)
def case_kind(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    """The case's name and the session fixtures it needs, set up outside Trio."""
    kind: str = request.param
    needs = {
        "qdrant-embedded": ["embedded_template"],
        "postgres": ["pg_uri", "pg_corpus"],
        "postgres:mapped-table": ["pg_uri", "pg_foreign"],
        "postgres:mapped-view": ["pg_uri", "pg_foreign"],
    }.get(kind, [])
    return kind, {name: request.getfixturevalue(name) for name in needs}


@pytest.fixture
async def case(
    case_kind: tuple[str, dict[str, Any]],
    nursery: trio.Nursery,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    encoder: MiniLMEncoder,
    corpus_vectors: dict[str, list[float]],
) -> AsyncIterator[AdapterCase]:
    kind, session = case_kind
    builders = {
        "qdrant-embedded": _embedded_case,
        "postgres": _postgres_case,
        "postgres:mapped-table": _mapped_postgres_case,
        "postgres:mapped-view": _mapped_postgres_case,
        "qdrant-remote": _qdrant_case,
        "qdrant-remote:per-source": _qdrant_case,
        "qdrant-remote:every-leg": _qdrant_case,
        "databricks": _databricks_case,
        "azure-search": _azure_case,
        "azure-search:keyword-only": _azure_case,
    }
    cleanups: list[Callable[[], None]] = []
    env = _Env(monkeypatch)
    stack = AsyncExitStack()  # every backend a case opens is closed with it
    try:
        yield await builders[kind](
            kind,
            session=session,
            nursery=nursery,
            tmp_path=tmp_path,
            env=env,
            encoder=encoder,
            vectors=corpus_vectors,
            cleanups=cleanups,
            stack=stack,
        )
    finally:
        await stack.aclose()
        for cleanup in cleanups:
            cleanup()


class _Env:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._monkeypatch = monkeypatch

    def secret(self, name: str, value: str) -> dict[str, str]:
        self._monkeypatch.setenv(name, value)
        return {"env": name}


async def _open(
    stack: AsyncExitStack, settings_dir: Path, backend: dict[str, Any], encoder: MiniLMEncoder
) -> RetrievalBackend:
    """Open through ``services.open_backend``; closed when ``stack`` closes."""
    return await stack.enter_async_context(
        open_backend(make_settings(settings_dir, backend), encoder)
    )


def _rest_failures(
    faults: Faults,
    open_with: Callable[[dict[str, Any]], Any],
    good: dict[str, Any],
    url_key: str,
    wrong_auth: dict[str, Any],
) -> dict[str, Failure]:
    """The HTTP failures every REST adapter must map, as openers of a broken backend."""

    def fault(mode: Any, error: type[RetrievalMCPError], **changes: Any) -> Failure:
        async def opener() -> RetrievalBackend:
            faults.mode = mode
            return await open_with({**good, **changes})  # type: ignore[no-any-return]

        return Failure(error, opener)

    return {
        "refused": fault(None, BackendUnavailable, **{url_key: closed_port_url()}),
        "timeout": fault("hang", BackendTimeout, timeout_s=0.3),
        "auth": fault(None, BackendAuthFailed, **wrong_auth),
        "forbidden": fault("403", BackendAuthFailed),
        "server_error": fault("500", BackendUnavailable),
        "malformed": fault("malformed", BackendBadResponse),
        "not_json": fault("not_json", BackendBadResponse),
    }


async def _embedded_case(kind: str, **ctx: Any) -> AdapterCase:
    tmp_path: Path = ctx["tmp_path"]
    template: Path = ctx["session"]["embedded_template"]
    store = tmp_path / "store"
    shutil.copytree(template, store)
    settings = {"kind": "qdrant-embedded", "qdrant_embedded": {"path": str(store)}}
    backend = await _open(ctx["stack"], tmp_path / "state", settings, ctx["encoder"])

    async def second_opener() -> RetrievalBackend:
        return await _open(ctx["stack"], tmp_path / "state2", settings, ctx["encoder"])

    return AdapterCase(
        kind=kind,
        backend=backend,
        declares=frozenset({D, B, F, N, S, V, INGEST}),
        failures={"locked": Failure(StoreLocked, second_opener)},
        close=ctx["stack"].aclose,
    )


async def _postgres_case(kind: str, **ctx: Any) -> AdapterCase:
    uri: str = ctx["session"]["pg_uri"]
    table: str = ctx["session"]["pg_corpus"]
    tmp_path: Path = ctx["tmp_path"]
    encoder: MiniLMEncoder = ctx["encoder"]
    good = {"conninfo": uri, "table": table}

    async def open_pg(**changes: Any) -> RetrievalBackend:
        return await _open(
            ctx["stack"],
            tmp_path / "state",
            {"kind": "postgres", "postgres": {**good, **changes}},
            encoder,
        )

    async def refused() -> RetrievalBackend:
        return await open_pg(conninfo="host=/nonexistent-socket-dir dbname=postgres user=postgres")

    async def wrong_role() -> RetrievalBackend:
        return await open_pg(conninfo=uri.replace("postgres:@", "intruder:@"))

    async def locked_table() -> RetrievalBackend:
        # Another session holds the table; our statement waits past statement_timeout.
        blocker = psycopg.connect(uri)
        blocker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        ctx["cleanups"].append(blocker.close)
        return await open_pg(statement_timeout_s=0.3)

    async def wrong_dimension() -> RetrievalBackend:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS wrong_dim (id text, embedding vector(3))")
        return await open_pg(table="wrong_dim")

    return AdapterCase(
        kind=kind,
        backend=await open_pg(),
        declares=frozenset({D, B, F, N, S, V, INGEST}),
        failures={
            "refused": Failure(BackendUnavailable, refused),
            "auth": Failure(BackendAuthFailed, wrong_role),
            "timeout": Failure(BackendTimeout, locked_table),
            "malformed": Failure(ConfigError, wrong_dimension),
        },
        close=ctx["stack"].aclose,
    )


#: The maps of conftest's foreign table and of the view over it.
PG_TABLE_MAP = {
    "relation": "foreign_chunks",
    "id": "chunk_key",
    "text": "body",
    "title": "heading",
    "doc_id": "document",
    "ordinal": "position",
    "tenant": "tenant",
    "metadata_columns": ["team", "year"],
    "embedding": "embedding",  # keyword leg: to_tsvector(body) computed per query
}
PG_VIEW_MAP = {
    "relation": "documents",
    "id": "id",
    "text": "content",
    "title": "title",
    "doc_id": "doc",
    "ordinal": "chunk_index",
    "tenant": "collection",
    "metadata": "metadata",
    "embedding": "embedding",
    "tsvector": "tsv",  # keyword leg: the stored tsvector the view exposes
}


async def _mapped_postgres_case(kind: str, **ctx: Any) -> AdapterCase:
    uri: str = ctx["session"]["pg_uri"]
    table, _ = ctx["session"]["pg_foreign"]
    tmp_path: Path = ctx["tmp_path"]
    encoder: MiniLMEncoder = ctx["encoder"]
    mapping = PG_VIEW_MAP if kind.endswith("view") else PG_TABLE_MAP

    async def open_pg(conninfo: str = uri, **changes: Any) -> RetrievalBackend:
        postgres = {"conninfo": conninfo, "map": {**mapping, **changes}}
        return await _open(
            ctx["stack"], tmp_path / "state", {"kind": "postgres", "postgres": postgres}, encoder
        )

    async def refused() -> RetrievalBackend:
        return await open_pg("host=/nonexistent-socket-dir dbname=postgres user=postgres")

    async def wrong_role() -> RetrievalBackend:
        return await open_pg(uri.replace("postgres:@", "intruder:@"))

    async def locked_relation() -> RetrievalBackend:
        blocker = psycopg.connect(uri)
        blocker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        ctx["cleanups"].append(blocker.close)
        postgres = {"conninfo": uri, "map": mapping, "statement_timeout_s": 0.3}
        return await _open(
            ctx["stack"], tmp_path / "state", {"kind": "postgres", "postgres": postgres}, encoder
        )

    async def wrong_dimension() -> RetrievalBackend:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS wrong_dim_mapped (id text, body text, v vector(3))"
            )
        return await open_pg(
            relation="wrong_dim_mapped",
            id="id",
            text="body",
            embedding="v",
            title="",
            doc_id="",
            ordinal="",
            tenant="",
            metadata="",
            metadata_columns=[],
            tsvector="",
        )

    async def missing_column() -> RetrievalBackend:
        return await open_pg(text="no_such_column")

    return AdapterCase(
        kind=kind,
        backend=await open_pg(),
        declares=frozenset({D, B, F, N, S, V}),
        failures={
            "refused": Failure(BackendUnavailable, refused),
            "auth": Failure(BackendAuthFailed, wrong_role),
            "malformed": Failure(ConfigError, wrong_dimension),
            "missing_column": Failure(ConfigError, missing_column),
            "timeout": Failure(BackendTimeout, locked_relation),  # last: the lock stays
        },
        close=ctx["stack"].aclose,
        full_provenance=False,
    )


async def _qdrant_case(kind: str, **ctx: Any) -> AdapterCase:
    env: _Env = ctx["env"]
    server = QdrantContract(api_key="qdrant-key-1")
    per_source = kind.endswith("per-source")
    every_leg = kind.endswith("every-leg")
    load_qdrant(server, ctx["vectors"], per_source=per_source, every_leg=every_leg)
    url = await ctx["nursery"].start(serve_on_loopback, server.app)
    ctx["cleanups"].append(server.faults.release.set)
    good: dict[str, Any] = {
        "url": url,
        "api_key": env.secret("LRM_TEST_QDRANT_KEY", "qdrant-key-1"),
        "dense_vector": "text-dense",
        "hnsw_ef": 64,
        "fields": QDRANT_FIELDS,
    }
    if per_source:
        # One collection per source; BM25 encoded by the server's own inference.
        good["collections"] = {"kb": "kb_chunks", "other": "other_chunks"}
        good |= {"sparse_vector": "text-sparse", "sparse_model": "qdrant/bm25"}
        declares = frozenset({D, B, F, N, S, V})
    elif every_leg:
        # Dense (one of two named vectors), BM25 by Qdrant's own inference, a learned
        # sparse and a multivector leg with queries from a TEI-shaped encoder endpoint.
        encoders = TeiEncoderContract(api_key="tei-key-1")
        tei_url = await ctx["nursery"].start(serve_on_loopback, encoders.app)
        tei_key = env.secret("LRM_TEST_TEI_KEY", "tei-key-1")
        good |= {
            "collection": "company_docs",
            "sparse_vector": "text-sparse",
            "sparse_model": "qdrant/bm25",
            "sparse_leg": {"vector": "splade", "endpoint": tei_url, "api_key": tei_key},
            "multivector_leg": {"vector": "colbert", "endpoint": tei_url, "api_key": tei_key},
        }
        declares = frozenset({D, B, SP, MV, F, N, S, V})
    else:
        good |= {"collection": "company_docs", "sparse_vector": "text-sparse"}
        declares = frozenset({D, B, F, N, S, V})

    async def open_with(config: dict[str, Any]) -> RetrievalBackend:
        return await _open(
            ctx["stack"],
            ctx["tmp_path"] / "state",
            {"kind": "qdrant-remote", "qdrant_remote": config},
            ctx["encoder"],
        )

    wrong = {"api_key": env.secret("LRM_TEST_QDRANT_WRONG", "not-the-key")}
    return AdapterCase(
        kind=kind,
        backend=await open_with(good),
        declares=declares,
        failures=_rest_failures(server.faults, open_with, good, "url", wrong),
        full_provenance=False,
        close=ctx["stack"].aclose,
    )


async def _databricks_case(kind: str, **ctx: Any) -> AdapterCase:
    env: _Env = ctx["env"]
    encoder: MiniLMEncoder = ctx["encoder"]
    server = DatabricksContract(
        tokens={"dapi-good"}, embed=lambda t: encoder.embed([t])[0].tolist()
    )
    indexes = load_databricks(server, ctx["vectors"])
    url = await ctx["nursery"].start(serve_on_loopback, server.app)
    ctx["cleanups"].append(server.faults.release.set)
    good: dict[str, Any] = {
        "workspace_url": url,
        "token": env.secret("LRM_TEST_DATABRICKS_TOKEN", "dapi-good"),
        "indexes": indexes,
        "query": "text",
        "keyword_leg": True,
        "fields": {"source": "", "uri": "", "metadata_fields": ["team", "year"]},
    }

    async def open_with(config: dict[str, Any]) -> RetrievalBackend:
        return await _open(
            ctx["stack"],
            ctx["tmp_path"] / "state",
            {"kind": "databricks", "databricks": config},
            encoder,
        )

    wrong = {"token": env.secret("LRM_TEST_DATABRICKS_WRONG", "dapi-expired")}
    return AdapterCase(
        kind=kind,
        backend=await open_with(good),
        declares=frozenset({D, B, F, N}),
        failures=_rest_failures(server.faults, open_with, good, "workspace_url", wrong),
        full_provenance=False,
        close=ctx["stack"].aclose,
    )


async def _azure_case(kind: str, **ctx: Any) -> AdapterCase:
    env: _Env = ctx["env"]
    encoder: MiniLMEncoder = ctx["encoder"]
    server = AzureSearchContract(
        api_key="azure-key-1", embed=lambda t: encoder.embed([t])[0].tolist()
    )
    load_azure(server, ctx["vectors"])
    url = await ctx["nursery"].start(serve_on_loopback, server.app)
    ctx["cleanups"].append(server.faults.release.set)
    keyword_only = kind.endswith("keyword-only")
    good: dict[str, Any] = {
        "endpoint": url,
        "index": "rag-chunks",
        "api_key": env.secret("LRM_TEST_AZURE_KEY", "azure-key-1"),
        "vector_field": "" if keyword_only else "text_vector",
        "semantic_configuration": "default",
        "fields": {"metadata_fields": ["team", "year"]},
    }

    async def open_with(config: dict[str, Any]) -> RetrievalBackend:
        return await _open(
            ctx["stack"],
            ctx["tmp_path"] / "state",
            {"kind": "azure-search", "azure_search": config},
            encoder,
        )

    wrong = {"api_key": env.secret("LRM_TEST_AZURE_WRONG", "azure-key-2")}
    return AdapterCase(
        kind=kind,
        backend=await open_with(good),
        declares=frozenset({B, F, N} if keyword_only else {D, B, F, N}),
        failures=_rest_failures(server.faults, open_with, good, "endpoint", wrong),
        full_provenance=False,
        close=ctx["stack"].aclose,
    )


def _doc_ids(candidates: Any) -> list[str]:
    return [c.chunk.provenance.doc_id for c in candidates]


# -- the suite -------------------------------------------------------------------------------


async def test_capabilities_are_declared_honestly(case: AdapterCase) -> None:
    backend = case.backend
    caps = backend.capabilities()
    assert caps == case.declares
    # Each declared feature has its method; ingest only where declared.
    assert (N in caps) <= isinstance(backend, NeighborsBackend)
    assert (S in caps) <= isinstance(backend, SimilarBackend)
    assert (V in caps) <= isinstance(backend, VectorsBackend)
    assert (INGEST in caps) == (isinstance(backend, IngestTarget) and hasattr(backend, "commit"))
    # An undeclared leg is refused with our error, never attempted.
    for leg in ALL_LEGS:
        if leg not in caps:
            with pytest.raises(CapabilityMissing):
                await backend.search(LegQuery(leg, "anything", 3))


async def test_each_declared_leg_finds_its_document(case: AdapterCase) -> None:
    caps = case.backend.capabilities()
    expectations = {D: DENSE_QUERY, B: KEYWORD_QUERY, SP: KEYWORD_QUERY, MV: KEYWORD_QUERY}
    for leg in LEGS:
        if leg not in caps:
            continue
        text, doc_id = expectations[leg]
        found = await case.backend.search(LegQuery(leg, text, 4))
        assert found, (case.kind, leg)
        assert found[0].chunk.provenance.doc_id == doc_id, (case.kind, leg, _doc_ids(found))
        assert [c.rank for c in found] == list(range(1, len(found) + 1))
        scores = [c.score for c in found]
        assert scores == sorted(scores, reverse=True)
        assert len(found) <= 4


async def test_the_pipeline_calls_only_what_is_declared(case: AdapterCase) -> None:
    recorder = RecordingBackend(case.backend)
    config = PipelineConfig.model_validate(
        {"legs": {leg.value: {"mode": "on", "timeout_s": 5.0} for leg in ALL_LEGS}}
    )
    pipeline = Pipeline(recorder, config, lambda text: len(text.split()))
    caps = case.declares
    async with trio.open_nursery() as nursery:
        await nursery.start(pipeline.run)
        outcome = await pipeline.retrieve(
            RetrievalRequest(text="pump station water valve", top_k=3, expand=True, rerank=True)
        )
        nursery.cancel_scope.cancel()
    declared = [leg for leg in LEGS if leg in caps]
    assert outcome.legs_used == [leg.value for leg in declared]
    assert outcome.legs_dropped == [(leg.value, "unsupported") for leg in LEGS if leg not in caps]
    assert set(recorder.legs) == set(declared)
    assert ("neighbors" in recorder.calls) == (N in caps)
    assert ("vectors" in recorder.calls) == (V in caps)
    assert ("expand", "unsupported") in outcome.steps_skipped or N in caps
    assert outcome.hits


async def test_fetch_keeps_order_and_skips_unknown_ids(case: AdapterCase) -> None:
    pump, boiler = chunk_of("pumps.md", 2), chunk_of("boiler.md", 0)
    absent = "00000000-0000-5000-8000-000000000000"
    fetched = await case.backend.fetch([pump.id, "no-such-id", absent, boiler.id])
    assert [c.id for c in fetched] == [pump.id, boiler.id]
    got = fetched[0]
    assert got.text == pump.text
    assert (got.provenance.source, got.provenance.doc_id, got.provenance.ordinal) == (
        "kb",
        "pumps.md",
        2,
    )
    assert got.provenance.title == pump.provenance.title
    assert got.metadata == {"team": "facilities", "year": 2022}
    if case.full_provenance:
        assert got == pump
    assert await case.backend.fetch([]) == []


async def test_neighbours_where_declared(case: AdapterCase) -> None:
    if N not in case.declares:
        pytest.skip(f"{case.kind} does not declare neighbours")
    assert isinstance(case.backend, NeighborsBackend)
    anchor = chunk_of("pumps.md", 2)
    around = await case.backend.neighbors(anchor, before=1, after=2)
    assert [c.provenance.ordinal for c in around] == [1, 3, 4]
    assert {c.provenance.doc_id for c in around} == {"pumps.md"}
    first = chunk_of("pumps.md", 0)
    assert [
        c.provenance.ordinal for c in await case.backend.neighbors(first, before=2, after=0)
    ] == []


async def test_neighbours_of_many_chunks_match_one_call_each(case: AdapterCase) -> None:
    # The batched read (one engine call where the adapter has one) answers exactly what
    # one ``neighbors`` call per chunk would, in the order asked, for overlapping
    # windows, windows at a document's edge, and two documents at once.
    if N not in case.declares:
        pytest.skip(f"{case.kind} does not declare neighbours")
    assert isinstance(case.backend, NeighborsBackend)
    chunks = [
        chunk_of("pumps.md", 2),
        chunk_of("pumps.md", 3),
        chunk_of("pumps.md", 0),
        chunk_of("boiler.md", 0),
        chunk_of("pumps.md", 2),
    ]
    # Where a store follows the ingest's prev/next links, chunks without them (a store
    # written before them) and links pointing elsewhere (another document) change
    # nothing: the window decides.
    unlinked = [
        attrs.evolve(c, provenance=attrs.evolve(c.provenance, prev_id=None, next_id=None))
        for c in chunks
    ]
    stray = chunk_of("boiler.md", 0).id
    misled = [
        attrs.evolve(c, provenance=attrs.evolve(c.provenance, prev_id=stray, next_id=stray))
        for c in chunks
    ]
    for before, after in [(1, 2), (0, 1), (1, 1), (2, 0), (0, 0)]:
        one_each = [
            [c.id for c in await case.backend.neighbors(chunk, before=before, after=after)]
            for chunk in chunks
        ]
        for asked in (chunks, unlinked, misled):
            batched = await neighbors_many(case.backend, asked, before=before, after=after)
            assert [[c.id for c in around] for around in batched] == one_each, (before, after)
    assert await neighbors_many(case.backend, [], before=1, after=1) == []


async def test_filters_where_declared(case: AdapterCase) -> None:
    caps = case.declares
    leg = D if D in caps else B
    text = "drag" if leg == D else "bread OR wing OR pump OR boiler"
    flt = SearchFilter(equals={"team": ("aero", "kitchen")})
    found = await case.backend.search(LegQuery(leg, text, 10, filter=flt))
    assert set(_doc_ids(found)) <= {"wing.md", "bread.md"} and found
    found = await case.backend.search(
        LegQuery(leg, text, 10, filter=SearchFilter(equals={"year": (2024,), "team": ("kitchen",)}))
    )
    assert set(_doc_ids(found)) == {"bread.md"}
    found = await case.backend.search(
        LegQuery(leg, text, 10, filter=SearchFilter(equals={"year": (1999,)}))
    )
    assert found == []


async def test_sources_scope_every_read_and_status_counts(case: AdapterCase) -> None:
    counts = counts_by_source()
    assert [(s.name, s.chunks) for s in await case.backend.sources()] == sorted(counts.items())
    leg = D if D in case.declares else B
    text = "tomato plants in the sun" if leg == D else "tomato"
    only_other = await case.backend.search(LegQuery(leg, text, 10, sources=("other",)))
    assert _doc_ids(only_other) == ["tomatoes.txt"]
    only_kb = await case.backend.search(LegQuery(leg, text, 10, sources=("kb",)))
    assert "tomatoes.txt" not in _doc_ids(only_kb)
    assert await case.backend.search(LegQuery(leg, text, 10, sources=("nope",))) == []
    status = await case.backend.status()
    assert status.ready and status.chunks == len(corpus_chunks())
    assert status.backend == case.backend.name


async def test_similar_and_vectors_where_declared(case: AdapterCase) -> None:
    backend = case.backend
    anchor = chunk_of("pumps.md", 2)
    if V in case.declares:
        assert isinstance(backend, VectorsBackend)
        vectors = await backend.vectors([anchor.id, "no-such-id", chunk_of("wing.md").id])
        assert set(vectors) == {anchor.id, chunk_of("wing.md").id}
        for vector in vectors.values():
            assert len(vector) == 384
            assert abs(sum(x * x for x in vector) - 1.0) < 1e-3
    if S in case.declares:
        assert isinstance(backend, SimilarBackend)
        similar = await backend.similar(anchor.id, limit=3)
        assert anchor.id not in [c.chunk.id for c in similar] and len(similar) == 3
        assert similar[0].chunk.provenance.doc_id == "pumps.md"
        other = await backend.similar(anchor.id, limit=3, sources=("other",))
        assert _doc_ids(other) == ["tomatoes.txt"]
        assert await backend.similar("00000000-0000-5000-8000-000000000000", limit=3) == []


async def test_failures_become_our_errors_with_remedies(case: AdapterCase) -> None:
    leg = D if D in case.declares else B
    for name, failure in case.failures.items():
        with pytest.raises(failure.error) as caught:
            backend = await failure.open()  # closed with the case
            await backend.search(LegQuery(leg, "boiler pressure", 3))
        error = caught.value
        assert isinstance(error, RetrievalMCPError), (case.kind, name)
        assert error.code and error.remedy and error.message, (case.kind, name)


async def test_close_is_clean_and_idempotent(case: AdapterCase) -> None:
    backend = case.backend
    await case.close()  # leaving open_backend's block releases everything
    await case.close()
    assert (await backend.status()).ready is False
    with pytest.raises(BackendError):
        await backend.search(LegQuery(D if D in case.declares else B, "x", 3))
