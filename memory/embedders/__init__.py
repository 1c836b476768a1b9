"""The embedding model served through ONNX Runtime, and its export.

`export_files`: where an export lives, its manifest, whether it is fresh (no torch, no
onnxruntime). `export`: the export itself, the only module here that imports torch.
`onnx_runtime`: the ONNX Runtime embedder. `serving`: which embedder serves a process (the
export when it is fresh, exporting it on first start, torch when it cannot be had).
The hash embedder, the torch one and the process-wide `encode` stay in `memory.embeddings`.
"""

from __future__ import annotations

from memory.embedders.offline import stay_offline

stay_offline()
