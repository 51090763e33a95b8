"""The bundled encoder's graph rewritten so that its MatMuls compute in int8 (ADR 0052).

Why: the shipped graph stores its weights as int8 but turns them back into floats
(``Cast``, then ``Mul`` by a per-column scale). onnxruntime folds that at load, so
every call multiplies by ~90 MB of fp32 weights. On these cores that traffic is a
fixed ~7 ms of a one-query call, whatever its length. Here each such
``MatMul(x, Mul(Cast(w_int8), scale))`` becomes onnxruntime's
``com.microsoft.DynamicQuantizeMatMul(x, w_int8, scale)`` over the very same int8
weights and scales, so a call reads ~22 MB.

It is used for queries only, one query per run. The activations are quantized per
tensor at each call, so a vector would otherwise depend on the other texts of its
batch. Documents keep the shipped graph: stored vectors and the screen's token states
do not change.

The rewrite edits the ONNX protobuf through a six-message subset of its schema, with
the field numbers of onnx.proto, built at run time. Everything else in the file travels
as unknown fields. That spares a dependency on the ``onnx`` package, whose import
alone takes 1–2 s here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

#: TensorProto.DataType INT8.
_INT8 = 3
_MS_DOMAIN = "com.microsoft"

_OPTIONAL, _REPEATED = 1, 3
_INT64, _INT32, _STRING, _MESSAGE, _BYTES = 3, 5, 9, 11, 12
#: (message, [(field, number, type, label, message type)]), numbers as in onnx.proto.
_SCHEMA: tuple[tuple[str, tuple[tuple[str, int, int, int, str], ...]], ...] = (
    (
        "OperatorSetId",
        (("domain", 1, _STRING, _OPTIONAL, ""), ("version", 2, _INT64, _OPTIONAL, "")),
    ),
    (
        "Tensor",
        (
            ("dims", 1, _INT64, _REPEATED, ""),
            ("data_type", 2, _INT32, _OPTIONAL, ""),
            ("name", 8, _STRING, _OPTIONAL, ""),
            ("raw_data", 9, _BYTES, _OPTIONAL, ""),
        ),
    ),
    (
        "Node",
        (
            ("input", 1, _STRING, _REPEATED, ""),
            ("output", 2, _STRING, _REPEATED, ""),
            ("name", 3, _STRING, _OPTIONAL, ""),
            ("op_type", 4, _STRING, _OPTIONAL, ""),
            ("domain", 7, _STRING, _OPTIONAL, ""),
        ),
    ),
    (
        "Graph",
        (
            ("node", 1, _MESSAGE, _REPEATED, "Node"),
            ("initializer", 5, _MESSAGE, _REPEATED, "Tensor"),
        ),
    ),
    (
        "Model",
        (
            ("graph", 7, _MESSAGE, _OPTIONAL, "Graph"),
            ("opset_import", 8, _MESSAGE, _REPEATED, "OperatorSetId"),
        ),
    ),
)


@cache
def _model_class() -> Any:
    package = "retrieval_mcp_onnx_subset"
    file = descriptor_pb2.FileDescriptorProto(
        name=f"{package}.proto", package=package, syntax="proto2"
    )
    for message, fields in _SCHEMA:
        m = file.message_type.add(name=message)
        for name, number, kind, label, type_name in fields:
            field = m.field.add(name=name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = f".{package}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.Model"))


def int8_matmul_graph(graph: bytes) -> tuple[bytes, int]:
    """``graph`` with every int8-weight MatMul rewritten, and how many were. Anything
    that does not match the pattern exactly (a weight read twice, a scale that is not
    one per output column) is left as it was."""
    model = _model_class()()
    model.ParseFromString(graph)
    nodes, inits = model.graph.node, model.graph.initializer
    tensors = {t.name: t for t in inits}
    producer = {out: n for n in nodes for out in n.output}
    uses: dict[str, int] = {}
    for n in nodes:
        for name in n.input:
            uses[name] = uses.get(name, 0) + 1

    dropped_nodes: set[int] = set()
    dropped_scales: set[str] = set()
    rewritten = 0
    for node in nodes:
        if node.op_type != "MatMul" or node.domain or len(node.input) != 2:
            continue
        mul = producer.get(node.input[1])
        if mul is None or mul.op_type != "Mul" or uses.get(node.input[1]) != 1:
            continue
        cast = producer.get(mul.input[0])
        weight = tensors.get(cast.input[0]) if cast is not None and cast.op_type == "Cast" else None
        scale = tensors.get(mul.input[1])
        if (
            cast is None
            or weight is None
            or scale is None
            or weight.data_type != _INT8
            or len(weight.dims) != 2
            or list(scale.dims) != [1, weight.dims[1]]
            or uses.get(mul.input[0]) != 1
        ):
            continue
        flat = inits.add()
        flat.CopyFrom(scale)
        flat.name = f"{scale.name}__per_column"
        del flat.dims[:]
        flat.dims.append(weight.dims[1])
        inputs = [node.input[0], weight.name, flat.name]
        del node.input[:]
        node.input.extend(inputs)
        node.op_type, node.domain = "DynamicQuantizeMatMul", _MS_DOMAIN
        dropped_nodes.update((id(mul), id(cast)))
        if uses.get(scale.name) == 1:
            dropped_scales.add(scale.name)
        rewritten += 1

    if rewritten:
        kept = [n for n in nodes if id(n) not in dropped_nodes]
        del nodes[:]
        nodes.extend(kept)
        live = [t for t in inits if t.name not in dropped_scales]
        del inits[:]
        inits.extend(live)
        if not any(o.domain == _MS_DOMAIN for o in model.opset_import):
            model.opset_import.add(domain=_MS_DOMAIN, version=1)
    return model.SerializeToString(), rewritten
