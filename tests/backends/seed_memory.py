"""The acceptance fixture of the mapped-Postgres tests: a memory table shaped like the
sibling memory server's (seed 002): ``namespace`` (the tenant), ``key``, ``value``,
created/updated timestamps and a nullable ``vector(384)`` under an HNSW cosine index,
with rows nobody embedded; and a role granted ``SELECT`` on it alone."""

from __future__ import annotations

import psycopg

from retrieval_mcp.encoders.minilm import MiniLMEncoder

READER = "memory_reader"

#: (namespace, key, value, embedded?) — two rows were saved without an embedding.
MEMORY_ROWS = [
    (
        "acme-billing",
        "knowledge/invoices",
        "Invoices are issued on the first business day of each month and are payable "
        "within 30 days.",
        True,
    ),
    (
        "acme-billing",
        "knowledge/refunds",
        "A chargeback opened by the card issuer freezes the disputed invoice until the bank "
        "rules on it.",
        False,
    ),
    (
        "acme-billing",
        "coord/plan",
        "Coordination: the billing migration moves invoice rendering to the new PDF service "
        "next sprint.",
        True,
    ),
    (
        "acme-billing",
        "knowledge/tax",
        "VAT is charged at the customer's local rate; reverse charge applies to EU businesses.",
        True,
    ),
    (
        "other-project",
        "knowledge/invoices",
        "Invoices for the other project are sent quarterly by the finance team.",
        True,
    ),
    (
        "other-project",
        "knowledge/secret",
        "The vault combination for the other project is kept in the safe deposit box.",
        False,
    ),
]
EMBEDDED = sum(1 for *_, embedded in MEMORY_ROWS if embedded)

MEMORY_MAP = {
    "relation": "memory",
    "id": "key",
    "id_scope": "tenant",  # (namespace, key) is the key: ids are "<namespace>:<key>"
    "text": "value",
    "title": "key",
    "embedding": "embedding",
    "tenant": "namespace",
    "metadata_columns": ["created_at", "updated_at"],
}


def create_memory_table(uri: str, encoder: MiniLMEncoder) -> str:
    """Create and fill the table and the reader role; return the reader's conninfo."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(
            """CREATE TABLE memory (
    namespace text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    embedding vector(384),
    PRIMARY KEY (namespace, key)
)"""
        )
        conn.execute(
            "CREATE INDEX memory_embedding_hnsw ON memory USING hnsw (embedding vector_cosine_ops)"
        )
        vectors = encoder.embed([value for _, _, value, _ in MEMORY_ROWS])
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO memory (namespace, key, value, embedding) "
                "VALUES (%s, %s, %s, %s::vector)",
                [
                    (ns, key, value, _literal(vectors[i].tolist()) if embedded else None)
                    for i, (ns, key, value, embedded) in enumerate(MEMORY_ROWS)
                ],
            )
        conn.execute(f"DROP ROLE IF EXISTS {READER}")
        conn.execute(f"CREATE ROLE {READER} LOGIN")  # trust auth on the socket: no password
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {READER}")
        conn.execute(f"GRANT SELECT ON memory TO {READER}")
    return uri.replace("postgres:@", f"{READER}:@")


def _literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.8g}" for x in vector) + "]"
