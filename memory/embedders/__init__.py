"""The embedders: the model served through ONNX Runtime and its export, torch, hashing.

`base`: the Embedder protocol, the vector size, unit-vector helpers, the hashing embedder.
`torch_model`: the sentence-transformers (torch) embedder, the fallback. `export_files`: where
an export lives, its manifest, whether it is fresh (no torch, no onnxruntime). `export`: the
export itself, the only module here that imports torch. `onnx_runtime`: the ONNX Runtime
embedder. `serving`: which embedder serves a process (the export when it is fresh, exporting
it on first start, torch when it cannot be had). The process-wide embedder and `encode` are
`memory.embeddings`', which stands on this package.
"""

from __future__ import annotations

from memory.embedders.offline import stay_offline

stay_offline()
