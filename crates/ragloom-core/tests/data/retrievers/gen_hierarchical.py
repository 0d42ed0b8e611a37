"""Records HierarchicalNodeParser's chunks of the Paul Graham essay, ids-free.

Run: /tmp/li/bin/python gen_hierarchical.py  (writes hierarchical.json here).
The essay is read from /work/shared/corpus and never copied: only hashes,
offsets and parent links are recorded.
"""

import hashlib
import json
import os

from llama_index.core import Document
from llama_index.core.node_parser import (
    HierarchicalNodeParser,
    get_leaf_nodes,
    get_root_nodes,
)

HERE = os.path.dirname(os.path.abspath(__file__))


def essay_path():
    """shared/corpus beside the repository or beside the worktree folder."""
    d = HERE
    while d != os.path.dirname(d):
        p = os.path.join(d, "shared", "corpus", "paul_graham_essay.txt")
        if os.path.exists(p):
            return p
        d = os.path.dirname(d)
    raise SystemExit("shared/corpus/paul_graham_essay.txt not found above " + HERE)


def main():
    with open(essay_path(), encoding="utf-8") as f:
        text = f.read()
    doc = Document(text=text, id_="essay", metadata={"file_name": "paul_graham_essay.txt"})
    nodes = HierarchicalNodeParser.from_defaults().get_nodes_from_documents([doc])
    pos = {n.node_id: i for i, n in enumerate(nodes)}
    out = []
    for n in nodes:
        parent = n.parent_node
        out.append(
            {
                "sha256": hashlib.sha256(n.text.encode("utf-8")).hexdigest(),
                "chars": len(n.text),
                "start_char_idx": n.start_char_idx,
                "end_char_idx": n.end_char_idx,
                "hash": n.hash,
                "parent": pos[parent.node_id] if parent else None,
                "children": [pos[c.node_id] for c in (n.child_nodes or [])],
                "source": n.source_node.node_id if n.source_node else None,
                "prev": pos.get(n.prev_node.node_id) if n.prev_node else None,
                "next": pos.get(n.next_node.node_id) if n.next_node else None,
                "metadata": n.metadata,
            }
        )
    data = {
        "num_nodes": len(nodes),
        "num_leaves": len(get_leaf_nodes(nodes)),
        "num_roots": len(get_root_nodes(nodes)),
        "nodes": out,
    }
    with open(os.path.join(HERE, "hierarchical.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
