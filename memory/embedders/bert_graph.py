"""The BERT encoder of a sentence-transformers model as an ONNX graph, built without torch.

`bert_graph_write` reads the model's `config.json` and `model.safetensors` (numpy, no torch)
and writes the same graph the TorchScript export traces: input_ids, attention_mask and
token_type_ids (batch and sequence axes dynamic) -> last_hidden_state. Word, position and
token-type embeddings, then per layer: self-attention with the padding mask added to the
scores as transformers adds it (the float32 minimum where the mask is 0), the output dense
layer with its residual and LayerNorm, the erf GELU feed-forward with its residual and LayerNorm.
Pooling and normalisation stay in memory.embedders.onnx_runtime, as for the traced export.

It lets an installation without torch make its export; tests/memory/test_bert_graph.py holds
it to the torch model's vectors. Does not live here: the export's folder, manifest and int8
weights (memory.embedders.export).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17
WEIGHTS_FILE = "model.safetensors"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class _Graph:
    """Nodes and weights being added, each value named once."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        from onnx import helper, numpy_helper

        self._helper, self._numpy = helper, numpy_helper
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(self._numpy.from_array(value, name=name))
        return name

    def weight(self, key: str, *, transpose: bool = False) -> str:
        value = self.weights[key].astype(np.float32)
        return self.const(key, np.ascontiguousarray(value.T if transpose else value))

    def op(self, kind: str, *inputs: str, **attributes: Any) -> str:
        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        self.nodes.append(self._helper.make_node(kind, list(inputs), [out], **attributes))
        return out

    def dense(self, x: str, prefix: str) -> str:
        product = self.op("MatMul", x, self.weight(f"{prefix}.weight", transpose=True))
        return self.op("Add", product, self.weight(f"{prefix}.bias"))

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def _embeddings(g: _Graph, eps: float) -> str:
    words = g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids")
    types = g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")
    length = g.op("Gather", g.op("Shape", "input_ids"), g.const("one", np.array(1, np.int64)))
    zero, step = g.const("zero", np.array(0, np.int64)), "one"
    positions = g.op("Range", zero, length, step)
    position = g.op("Gather", g.weight("embeddings.position_embeddings.weight"), positions)
    summed = g.op("Add", g.op("Add", words, types), position)
    return g.layer_norm(summed, "embeddings.LayerNorm", eps)


def _mask_bias(g: _Graph) -> str:
    """(1 - mask) * float32 min, shaped [batch, 1, 1, sequence] to add to attention scores."""
    mask = g.op("Cast", "attention_mask", to=1)  # FLOAT
    mask = g.op("Unsqueeze", mask, g.const("mask_axes", np.array([1, 2], np.int64)))
    inverted = g.op("Sub", g.const("mask_one", np.array(1.0, np.float32)), mask)
    lowest = g.const("mask_lowest", np.array(np.finfo(np.float32).min, np.float32))
    return g.op("Mul", inverted, lowest)


def _heads(g: _Graph, x: str, heads: int, size: int) -> str:
    """[batch, sequence, hidden] -> [batch, heads, sequence, size]."""
    shape = g.const(f"heads_shape_{g._count}", np.array([0, 0, heads, size], np.int64))
    return g.op("Transpose", g.op("Reshape", x, shape), perm=[0, 2, 1, 3])


def _attention(g: _Graph, x: str, prefix: str, bias: str, heads: int, hidden: int) -> str:
    size = hidden // heads
    query = _heads(g, g.dense(x, f"{prefix}.self.query"), heads, size)
    key = _heads(g, g.dense(x, f"{prefix}.self.key"), heads, size)
    value = _heads(g, g.dense(x, f"{prefix}.self.value"), heads, size)
    scores = g.op("MatMul", query, g.op("Transpose", key, perm=[0, 1, 3, 2]))
    scale = g.const(f"scale_{g._count}", np.array(np.sqrt(size), np.float32))
    scores = g.op("Add", g.op("Div", scores, scale), bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
    merged_shape = g.const(f"merged_shape_{g._count}", np.array([0, 0, hidden], np.int64))
    merged = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merged_shape)
    return g.dense(merged, f"{prefix}.output.dense")


def _gelu(g: _Graph, x: str) -> str:
    """0.5 * x * (1 + erf(x / sqrt(2))): BERT's exact GELU."""
    root2 = g.const(f"root2_{g._count}", np.array(np.sqrt(2.0), np.float32))
    one = g.const(f"gelu_one_{g._count}", np.array(1.0, np.float32))
    half = g.const(f"gelu_half_{g._count}", np.array(0.5, np.float32))
    erf = g.op("Erf", g.op("Div", x, root2))
    return g.op("Mul", g.op("Mul", x, g.op("Add", erf, one)), half)


def _layer(g: _Graph, x: str, index: int, bias: str, config: dict[str, Any]) -> str:
    prefix, eps = f"encoder.layer.{index}", float(config["layer_norm_eps"])
    heads, hidden = int(config["num_attention_heads"]), int(config["hidden_size"])
    attended = _attention(g, x, f"{prefix}.attention", bias, heads, hidden)
    x = g.layer_norm(g.op("Add", attended, x), f"{prefix}.attention.output.LayerNorm", eps)
    inner = _gelu(g, g.dense(x, f"{prefix}.intermediate.dense"))
    out = g.dense(inner, f"{prefix}.output.dense")
    return g.layer_norm(g.op("Add", out, x), f"{prefix}.output.LayerNorm", eps)


def _check(config: dict[str, Any]) -> None:
    supported = {
        "model_type": "bert",
        "hidden_act": "gelu",
        "position_embedding_type": "absolute",
    }
    for key, wanted in supported.items():
        if config.get(key, wanted) != wanted:
            raise ValueError(f"{key} is {config.get(key)!r}; the graph builder handles {wanted!r}")


def bert_graph(source: Path) -> Any:
    """The encoder of the model in `source` as an onnx.ModelProto (checked)."""
    import onnx
    from onnx import TensorProto, helper
    from safetensors.numpy import load_file

    config = json.loads((source / "config.json").read_text())
    _check(config)
    weights = {
        key.removeprefix("bert."): value
        for key, value in load_file(str(source / WEIGHTS_FILE)).items()
    }
    g = _Graph(weights)
    x = _embeddings(g, float(config["layer_norm_eps"]))
    bias = _mask_bias(g)
    for index in range(int(config["num_hidden_layers"])):
        x = _layer(g, x, index, bias, config)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    axes = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, axes) for name in INPUTS]
    hidden = int(config["hidden_size"])
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*axes, hidden])
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def bert_graph_write(source: Path, target: Path) -> None:
    import onnx

    onnx.save(bert_graph(Path(source)), str(target))
