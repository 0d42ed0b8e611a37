"""Makes tiny_cross_encoder/ (a random 2-layer BERT sequence classifier with
one label, small enough to commit) and records what sentence-transformers'
CrossEncoder and llama-index-core 0.14.25's SentenceTransformerRerank make of it.

Usage (from this folder): python gen_tiny_cross_encoder.py
Needs sentence-transformers 6.2 (with torch and transformers) and
llama-index-core 0.14.25. Writes tiny_cross_encoder/ and tiny_reference.json.
The weights are random (seed 0): the point is that the Rust port computes what
sentence-transformers computes, pair tokenization and truncation included.
"""

import json
import os
import shutil
import string

import sentence_transformers
import torch
from llama_index.core.postprocessor import SentenceTransformerRerank
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from sentence_transformers import CrossEncoder
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordPiece
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiny_cross_encoder")

words = (
    "the a cat dog sits on mat rug man plays guitar what is query passage "
    "which animal resting stock markets fell today kitten sleeping small "
    "rabbit watch pocket alice queen"
).split()
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
vocab += list(string.ascii_lowercase) + ["##" + c for c in string.ascii_lowercase]
vocab += list(string.digits + string.punctuation)
vocab += [w for w in words if w not in vocab]
tok = Tokenizer(WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
tok.normalizer = normalizers.BertNormalizer(lowercase=True)
tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
tok.post_processor = processors.TemplateProcessing(
    single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
    special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
)

torch.manual_seed(0)
config = BertConfig(
    vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=32, max_position_embeddings=512, initializer_range=0.5, num_labels=1,
)
model = BertForSequenceClassification(config)
with torch.no_grad():
    for p in model.parameters():  # random biases and norms too, so every weight matters
        p.normal_(0.0, 0.5)

shutil.rmtree(OUT, ignore_errors=True)
model.save_pretrained(OUT, safe_serialization=True)
BertTokenizerFast(tokenizer_object=tok, model_max_length=512).save_pretrained(OUT)
for extra in ("README.md", "vocab.txt"):  # not read by the loader
    if os.path.exists(os.path.join(OUT, extra)):
        os.remove(os.path.join(OUT, extra))

LONG = " ".join(["the small kitten is sleeping on the rug today"] * 80)  # > 512 tokens
query = "Which animal is resting?"
texts = [
    "The cat sits on the mat.",
    "Stock markets fell today.",
    "A man plays guitar.",
    LONG,
    "",
    "Zebra 42 xylophone!",
]
torch.set_num_threads(1)
ce = CrossEncoder(OUT, max_length=512, device="cpu")
scores = ce.predict([(query, t) for t in texts], batch_size=4)
logits = CrossEncoder(OUT, max_length=512, device="cpu",
                      activation_fn=torch.nn.Identity()).predict([(query, t) for t in texts])
short = CrossEncoder(OUT, max_length=24, device="cpu").predict([(query, t) for t in texts])

nodes = [NodeWithScore(node=TextNode(id_=f"n{i}", text=t, metadata={"k": i}), score=1.0 - i / 10)
         for i, t in enumerate(texts)]
rerank = SentenceTransformerRerank(model=OUT, top_n=3, keep_retrieval_score=True, device="cpu")
kept = rerank.postprocess_nodes(nodes, QueryBundle(query))

with open(os.path.join(HERE, "tiny_reference.json"), "w") as f:
    json.dump({
        "generator": "gen_tiny_cross_encoder.py",
        "sentence_transformers": sentence_transformers.__version__,
        "activation_fn": repr(ce.activation_fn),
        "query": query, "texts": texts,
        "scores": [float(x) for x in scores],
        "logits": [float(x) for x in logits],
        "scores_max_length_24": [float(x) for x in short],
        "rerank_top_3": [{"id": n.node.node_id, "score": float(n.score),
                          "retrieval_score": n.node.metadata.get("retrieval_score")} for n in kept],
    }, f, indent=1)
    f.write("\n")
print("ok; files:", sorted(os.listdir(OUT)))
