"""Makes tests/data/tiny_bert (a random 2-layer BERT sentence-transformers folder,
small enough to commit) and records sentence-transformers' vectors for it.

Usage (from this folder): python gen_tiny_bert.py
Needs sentence-transformers, transformers, tokenizers and torch. Writes tiny_bert/
and tiny_reference.json. The weights are random (seed 0): the point is that the
Rust port computes exactly what sentence-transformers computes for every pooling
mode, instruction handling, truncation and normalisation, without a real model.
"""

import json
import os
import shutil
import string
import tempfile

import torch
from sentence_transformers import SentenceTransformer, models
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordPiece
from transformers import BertConfig, BertModel, BertTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiny_bert")

words = (
    "the a cat dog sits on mat rug man plays guitar what is query passage "
    "which animal resting stock markets fell today kitten sleeping small"
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
    intermediate_size=32, max_position_embeddings=64, initializer_range=0.5,
)
bert = BertModel(config, add_pooling_layer=False)
with torch.no_grad():
    for p in bert.parameters():  # random biases and norms too, so every weight matters
        p.normal_(0.0, 0.5)
        
work = tempfile.mkdtemp()
bert.save_pretrained(work, safe_serialization=True)
fast = BertTokenizerFast(tokenizer_object=tok, model_max_length=64)
fast.save_pretrained(work)

transformer = models.Transformer(work, max_seq_length=16)
pooling = models.Pooling(16, pooling_mode="mean")
st = SentenceTransformer(modules=[transformer, pooling], device="cpu")
shutil.rmtree(OUT, ignore_errors=True)
st.save(OUT)
for extra in ("README.md", "vocab.txt"):  # not read by the loader
    if os.path.exists(os.path.join(OUT, extra)):
        os.remove(os.path.join(OUT, extra))

sentences = [
    "The cat sits on the mat.",
    "What is the query?",
    "the dog plays guitar on a small rug while the kitten is sleeping today, stock markets fell",
    "Zebra 42 xylophone!",
    "",
]
POOLINGS = {
    "cls_max_mean": {"pooling_mode_cls_token": True, "pooling_mode_max_tokens": True,
                     "pooling_mode_mean_tokens": True},
    "mean_sqrt_len": {"pooling_mode_mean_sqrt_len_tokens": True},
    "weightedmean_lasttoken": {"pooling_mode_weightedmean_tokens": True,
                               "pooling_mode_lasttoken": True},
    "mean_without_prompt": {"pooling_mode_mean_tokens": True, "include_prompt": False},
}
cases = []
for name, flags in POOLINGS.items():
    folder = tempfile.mkdtemp()
    shutil.copytree(OUT, folder, dirs_exist_ok=True)
    cfg = {"word_embedding_dimension": 16}
    cfg.update(flags)
    with open(os.path.join(folder, "1_Pooling", "config.json"), "w") as f:
        json.dump(cfg, f)
    model = SentenceTransformer(folder, device="cpu")
    for prompt in ("", "query: "):
        for normalize in (False, True):
            v = model.encode(sentences, batch_size=2, prompt=prompt or None,
                             normalize_embeddings=normalize)
            cases.append({"pooling": name, "pooling_config": cfg, "prompt": prompt,
                          "normalize": normalize,
                          "vectors": [[float(x) for x in row] for row in v]})

with open(os.path.join(HERE, "tiny_reference.json"), "w") as f:
    json.dump({"generator": "gen_tiny_bert.py", "max_seq_length": 16,
               "sentences": sentences, "cases": cases}, f)
    f.write("\n")
print("ok", len(cases), "cases; files:", sorted(os.listdir(OUT)))
