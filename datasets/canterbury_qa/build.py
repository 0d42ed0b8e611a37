"""The labelled question set over the four Canterbury texts
(shared/corpus/sources: Alice, As You Like It, Paradise Lost, the LOC
workshop on electronic texts), written out as canterbury_qa.jsonl and checked:

- each `answer_span` is an exact substring of its `file` (a hit is a
  retrieved node containing it, so the set stays valid when chunking changes);
- a question marked paraphrased shares no content word (crudely stemmed,
  stopwords dropped) with the sentence around its span, so it tests semantic
  retrieval rather than keyword overlap; `paraphrased` in the output is the
  check's verdict for every question.

    python3 datasets/canterbury_qa/build.py   # exits 1 on any problem
"""

import json, re, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parents[2] / "shared" / "corpus" / "sources") + "/"
# (question, file, answer_span, reference_answer, paraphrased)
Q = [
# Alice
("What animal did the infant the girl was nursing become?", "alice29.txt", "neither more nor less than a pig", "A pig.", True),
("Which animal did the Duchess say was grinning in her kitchen?", "alice29.txt", "It's a Cheshire cat,' said the Duchess", "A Cheshire cat.", False),
("What seasoning had the cook overused in the broth?", "alice29.txt", "too much pepper in that soup", "It had too much pepper in it.", True),
("What riddle did the Hatter ask Alice at the tea-party?", "alice29.txt", "Why is a raven like a writing-desk", "Why is a raven like a writing-desk?", False),
("What song did the Hatter sing at the Queen's concert?", "alice29.txt", "Twinkle, twinkle, little bat", "'Twinkle, twinkle, little bat'.", False),
("What did the Cheshire Cat leave behind when it vanished slowly?", "alice29.txt", "grin without a cat", "Its grin, which remained after the rest of it had gone.", False),
("Who was the cat Alice kept at home?", "alice29.txt", "Dinah'll miss me very much to-night", "Dinah, Alice's cat.", False),
("What were the Queen's soldiers and courtiers really made of, as Alice says at the trial?", "alice29.txt", "a pack of cards", "A pack of cards.", False),
("Where did the three little sisters in the Dormouse's story live?", "alice29.txt", "It was a treacle-well.", "At the bottom of a treacle-well.", False),
("What did the Queen of Hearts keep shouting about anyone who displeased her?", "alice29.txt", "Off with her head", "'Off with her head!'", False),
("Which insect puffed on a pipe while interrogating the girl?", "alice29.txt", "quietly smoking a long hookah", "A Caterpillar smoking a hookah.", True),
("What pink wading creature did players swing as a club in the Queen's sport?", "alice29.txt", "flamingoes, and the soldiers had to double themselves up", "Flamingoes were used as mallets in the croquet game.", True),
("What contest did the drenched animals hold to stop being wet?", "alice29.txt", "Caucus-race", "By running a Caucus-race.", True),
("What label was tied round the neck of the little bottle?", "alice29.txt", "DRINK ME", "'DRINK ME'.", False),
("What was the name of the small reptile forced to climb into the flue?", "alice29.txt", "So Bill's got to come down the chimney", "Bill the Lizard, sent down the chimney to get Alice out.", True),
("Which dance did the Gryphon and the sad reptile perform by the sea?", "alice29.txt", "Lobster Quadrille", "The Lobster Quadrille.", True),
# As You Like It
("How much money did Orlando's father leave him in his will?", "asyoulik.txt", "bequeathed me by will but poor a thousand crowns", "A poor thousand crowns.", False),
("What name does Rosalind take when she disguises herself as a young man?", "asyoulik.txt", "look you call me Ganymede", "Ganymede.", False),
("What name does Celia use while disguised?", "asyoulik.txt", "No longer Celia, but Aliena", "Aliena.", False),
("Which speech begins by comparing the whole world to a stage?", "asyoulik.txt", "All the world's a stage", "Jaques's 'All the world's a stage' speech.", False),
("According to Jaques, how many ages does a man's life have?", "asyoulik.txt", "His acts being seven ages", "Seven ages.", False),
("What does the melancholy lord say a person finally lacks in the last stage of life?", "asyoulik.txt", "Sans teeth, sans eyes, sans taste, sans everything", "Teeth, eyes, taste, everything.", True),
("What did the exiled ruler say hardship brings that is pleasant?", "asyoulik.txt", "Sweet are the uses of adversity", "That the uses of adversity are sweet.", True),
("Who is the professional fighter employed by the usurping ruler?", "asyoulik.txt", "CHARLES	wrestler to Frederick", "Charles, Frederick's wrestler.", True),
("Which beast with udders drawn dry attacked near the sleeping Oliver?", "asyoulik.txt", "A lioness, with udders all drawn dry", "A lioness.", False),
("What did Rosalind give Orlando from her neck after the wrestling?", "asyoulik.txt", "Giving him a chain from her neck", "A chain.", False),
("Where is most of the play set?", "asyoulik.txt", "SCENE I	The Forest of Arden.", "The Forest of Arden.", True),
("Whom did the jester meet in the woods, according to the gloomy courtier?", "asyoulik.txt", "A fool, a fool! I met a fool i' the forest", "A fool (Touchstone).", True),
("Who is the old servant of Oliver that follows Orlando into exile?", "asyoulik.txt", "ADAM	|", "Adam, a servant to Oliver.", False),
("Who is the usurper of his brother's dominions?", "asyoulik.txt", "DUKE FREDERICK	his brother, an usurper of his dominions.", "Duke Frederick.", False),
("Which shepherdess falls for the disguised heroine?", "asyoulik.txt", "PHEBE	And I for Ganymede.", "Phebe, who loves Ganymede.", True),
("Who is the courtier who waits upon the usurping duke?", "asyoulik.txt", "LE BEAU	a courtier attending upon Frederick.", "Le Beau.", False),
# Paradise Lost
("What is the poem said to sing of in its opening line?", "plrabn12.txt", "Of Man's first disobedience, and the fruit", "Man's first disobedience and the fruit of the forbidden tree.", False),
("Which line says ruling below is preferable to serving above?", "plrabn12.txt", "Better to reign in Hell than serve in Heaven", "'Better to reign in Hell than serve in Heaven.'", True),
("What is the name of the capital the fallen angels build?", "plrabn12.txt", "At Pandemonium, the high capital", "Pandemonium.", False),
("By what name was the architect angel known in ancient Greece and Ausonia?", "plrabn12.txt", "Men called him Mulciber", "Mulciber.", False),
("For how long was the builder-angel plunging down after the king of the gods hurled him?", "plrabn12.txt", "To noon he fell, from noon to dewy eve", "From morn to dewy eve, a summer's day.", True),
("Which sea bird did the fiend resemble, perched high above the garden?", "plrabn12.txt", "Sat like a cormorant", "A cormorant.", True),
("In what shape did the angels find Satan whispering to Eve as she slept?", "plrabn12.txt", "Squat like a toad, close at the ear of Eve", "Squatting like a toad at Eve's ear.", False),
("Which angel's weapon revealed the crouching intruder's true shape?", "plrabn12.txt", "Ithuriel with his spear", "Ithuriel.", True),
("Who was the first fallen spirit in the list, smeared with blood from human sacrifice?", "plrabn12.txt", "First, Moloch, horrid king, besmeared with blood", "Moloch.", False),
("Which demon, eyes fixed on the precious paving underfoot, headed the miners?", "plrabn12.txt", "Mammon, the least erected Spirit that fell", "Mammon.", True),
("Which angel remained true alone amid the rebels?", "plrabn12.txt", "So spake the Seraph Abdiel, faithful found", "Abdiel.", True),
("Which friendly angel came to caution the first man?", "plrabn12.txt", "Raphael, the sociable Spirit, that deigned", "Raphael.", True),
("Which archangel governing the daytime star was fooled by the disguised enemy?", "plrabn12.txt", "Uriel, though regent of the sun, and held", "Uriel.", True),
("How do the last lines describe what lay ahead of the exiled couple?", "plrabn12.txt", "The world was all before them, where to choose", "The world was all before them, where to choose their place of rest.", True),
("Who kept watch at Paradise's sunrise-facing entrance between stone columns?", "plrabn12.txt", "Betwixt these rocky pillars Gabriel sat", "Gabriel.", True),
("Which devil came last, the most lewd spirit of all?", "plrabn12.txt", "Belial came last; than whom a Spirit more lewd", "Belial.", False),
# LOC workshop
("What did NAL reckon its digitization costs to be per page?", "lcet10.txt", "$7 per page.  By way of contrast, Ricky ERWAY explained that American", "About $7 per page.", False),
("How much did American Memory's conversion cost per page according to Erway?", "lcet10.txt", "reckoned American Memory's costs at $4 per page", "$4 per page.", False),
("Which kinds of material resist automatic reading of printed characters?", "lcet10.txt", "historical documents or books often do not lend themselves to OCR", "Historical documents and books often do not lend themselves to OCR.", True),
("Who funded the workshop on electronic texts?", "lcet10.txt", "Supported by a Grant from the David and Lucile Packard Foundation", "The David and Lucile Packard Foundation.", False),
("When was the workshop on electronic texts held?", "lcet10.txt", "9-10 June 1992", "9-10 June 1992, at the Library of Congress.", False),
("Who edited the workshop proceedings?", "lcet10.txt", "Edited by James Daly", "James Daly.", False),
("What is the Perseus project about?", "lcet10.txt", "hypertextual database for teaching and research on classical Greek", "A multimedia, hypertextual database for teaching and research on classical Greek civilization.", False),
("Which publisher in New Haven handles the classics hypermedia collection?", "lcet10.txt", "distributed by Yale University Press", "Yale University Press.", True),
("What did a yearly subscription to the clinical trials journal cost in 1992?", "lcet10.txt", "journals:  for 1992, $95 for a year, plus telecommunications charges", "$95 a year plus telecommunications charges.", False),
("Why did the school choose packet radio rather than laying cable in the old stone halls?", "lcet10.txt", "would cost $2,000-$5,000 per terminal", "Wiring the libraries would cost $2,000-$5,000 per terminal, so it used packet radio.", True),
("Which two organizations together launched an online medical periodical?", "lcet10.txt", "Overview of the history of the joint project between AAAS and", "AAAS and OCLC.", True),
("Which markup standard's ideas were echoed at the meeting?", "lcet10.txt", "the Standard Generalized Markup Language (SGML)", "SGML, the Standard Generalized Markup Language.", False),
("What did quality inspection of contractors' output turn out to be for the team that outsourced conversion?", "lcet10.txt", "the most time-consuming aspect of contracting out conversion", "The most time-consuming aspect of contracting out conversion.", False),
("Who did the agricultural library employ to do its digitizing?", "lcet10.txt", "used its own staff to convert", "Its own staff, with purchased OCR hardware and software.", True),
("Which classics collection first came out in early ninety-two?", "lcet10.txt", "civilization, which was released in February 1992 in version 1.0 and", "Perseus, released in February 1992 as version 1.0.", True),
("Who was in charge of editing the classics hypermedia collection?", "lcet10.txt", "Elli MYLONAS, managing editor, Perseus Project, Harvard University, first", "Elli Mylonas.", True),
]

STOP = set("""a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with
what which who whom whose how when where why did does do does say says said according its his her he she him them we you your our i me my
were has have had been being from up out about than after before over under again all any each few more most other some own same so too very
can just should now one two first last""".split())

def words(s):
    return [w for w in re.findall(r"[a-z0-9']+", s.lower())]

def stem(w):
    w = w.strip("'")
    for suf in ("'s", "ing", "ed", "es", "s", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w

def content(s):
    return {stem(w) for w in words(s) if w.strip("'") not in STOP and len(w.strip("'")) > 1}

out, bad = [], 0
texts = {f: open(SRC + f, encoding="latin-1").read() for f in {q[1] for q in Q}}
for q, f, span, ref, para in Q:
    t = texts[f]
    n = t.count(span)
    if n == 0:
        print("MISSING", f, repr(span)); bad += 1; continue
    if n > 1:
        print("SPAN OCCURS", n, "TIMES", repr(span))
    i = t.index(span)
    # the answering sentence: from the previous sentence end to the next, around the span
    start = max(t.rfind(p, 0, i) for p in (". ", "? ", "! ", "\n\n", ".\n", "?\n", "!\n", ":\n")) + 1
    ends = [t.find(p, i + len(span)) for p in (". ", "? ", "! ", "\n\n", ".\n", "?\n", "!\n")]
    end = min([e for e in ends if e >= 0] or [len(t)])
    sentence = t[start:end]
    shared = content(q) & content(sentence)
    if para and shared:
        print("NOT PARAPHRASED", repr(q), shared); bad += 1
    out.append({"question": q, "file": f, "answer_span": span, "reference_answer": ref, "paraphrased": not shared})
print(len(out), "questions,", sum(o["paraphrased"] for o in out), "paraphrased,", bad, "problems")
with open(HERE / "canterbury_qa.jsonl", "w") as fh:
    for o in out:
        fh.write(json.dumps(o, ensure_ascii=False) + "\n")
sys.exit(1 if bad else 0)
