"""Writes the fixture files of ragloom-readers-file's tests into this folder.

Run with a Python that has reportlab, python-docx and EbookLib:
    python gen_fixtures.py
Outputs are deterministic (reportlab's invariant mode, fixed ids), so a re-run
gives the same bytes for the PDFs and text files.
"""

import io
import os
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def write_text(name, text):
    with open(path(name), "w", encoding="utf-8", newline="") as f:
        f.write(text)


def pdfs():
    from reportlab.pdfgen import canvas

    # Two pages, no page labels: pypdf labels them "1" and "2".
    c = canvas.Canvas(path("two_pages.pdf"), invariant=1, pageCompression=0)
    c.drawString(72, 720, "Page one of the ragloom fixture.")
    c.drawString(72, 700, "It talks about looms and weaving.")
    c.showPage()
    c.drawString(72, 720, "Page two follows with more text.")
    c.showPage()
    c.save()

    # Four pages with a /PageLabels tree: i, ii, A-1, then AA.
    c = canvas.Canvas(path("labelled.pdf"), invariant=1, pageCompression=0)
    for text in ["Preface page", "Second preface page", "Appendix page", "Lettered page"]:
        c.drawString(72, 720, text)
        c.showPage()
    c.addPageLabel(0, style="ROMAN_LOWER")
    c.addPageLabel(2, style="ARABIC", prefix="A-")
    c.addPageLabel(3, style="LETTERS_UPPER", start=27)
    c.save()

    # Encrypted with a user password: nothing can be read without it.
    c = canvas.Canvas(path("encrypted.pdf"), invariant=1, encrypt="secret")
    c.drawString(72, 720, "Secret text.")
    c.showPage()
    c.save()

    # Encrypted with an owner password only: readers open it with the empty
    # user password.
    from reportlab.lib.pdfencrypt import StandardEncryption

    c = canvas.Canvas(
        path("owner_only.pdf"),
        invariant=1,
        encrypt=StandardEncryption("", ownerPassword="owner", canPrint=1),
    )
    c.drawString(72, 720, "Readable without a password.")
    c.showPage()
    c.save()

    # Truncated: the first 40% of two_pages.pdf.
    with open(path("two_pages.pdf"), "rb") as f:
        data = f.read()
    with open(path("corrupt.pdf"), "wb") as f:
        f.write(data[: len(data) * 2 // 5])

    # Well-formed PDF syntax whose page lacks a /MediaBox: pdf-extract panics
    # on it (`expect("MediaBox")`), pypdf reads it.
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
    ]
    content = b"BT /F1 12 Tf 72 720 Td (No media box) Tj ET"
    objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref))
    with open(path("panics.pdf"), "wb") as f:
        f.write(out.getvalue())


def docx():
    import docx as pydocx
    from docx.enum.text import WD_BREAK

    d = pydocx.Document()
    d.sections[0].header.paragraphs[0].text = "Header text"
    d.sections[0].footer.paragraphs[0].text = "Footer text"
    d.add_heading("Weaving notes", level=1)
    p = d.add_paragraph("A loom ")
    p.add_run("holds").bold = True
    p.add_run(" warp threads.\tTabbed & <escaped>")
    p = d.add_paragraph("Line one")
    p.add_run().add_break(WD_BREAK.LINE)
    p.add_run("line two — ünïcode")
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text = "warp"
    t.cell(0, 1).text = "weft"
    t.cell(1, 0).text = "1"
    t.cell(1, 1).text = "2"
    d.add_paragraph("  Trailing paragraph.  ")
    buf = io.BytesIO()
    d.save(buf)
    # Re-pack with a fixed timestamp so the bytes do not change between runs.
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    with zipfile.ZipFile(path("notes.docx"), "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2024, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(fixed, src.read(info.filename))
    with open(path("corrupt.docx"), "wb") as f:
        f.write(b"PK\x03\x04 this is not really a zip file")


def epub():
    from ebooklib import epub as e

    book = e.EpubBook()
    book.set_identifier("ragloom-fixture")
    book.set_title("Loom Book")
    book.set_language("en")
    c1 = e.EpubHtml(title="One", file_name="ch1.xhtml", lang="en")
    c1.content = "<html><body><h1>Chapter One</h1><p>Warp and <b>weft</b> threads.</p></body></html>"
    c2 = e.EpubHtml(title="Two", file_name="ch2.xhtml", lang="en")
    c2.content = (
        "<html><head><style>p{color:red}</style></head><body><h2>Chapter Two</h2>"
        "<p>Shuttles fly.</p><ul><li>first</li><li>second</li></ul></body></html>"
    )
    book.add_item(c1)
    book.add_item(c2)
    book.toc = (c1, c2)
    book.add_item(e.EpubNcx())
    book.add_item(e.EpubNav())
    book.spine = ["nav", c1, c2]
    buf = io.BytesIO()
    e.write_epub(buf, book)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    with zipfile.ZipFile(path("book.epub"), "w") as z:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2024, 1, 1, 0, 0, 0))
            fixed.compress_type = info.compress_type
            data = src.read(info.filename)
            if info.filename.endswith(".opf"):
                # ebooklib stamps the time of writing; fix it for stable bytes.
                data = re.sub(rb"(dcterms:modified\">)[^<]*", rb"\g<1>2024-01-01T00:00:00Z", data)
            z.writestr(fixed, data)


def texts():
    write_text(
        "people.csv",
        'name,age,score,city\nAlice,30,1.5,"Paris, France"\nBob,25,,Berlin\n\n'
        'Carol,41,2,"He said ""hi"""\nDörte,7,1e3,"two\nlines"\n',
    )
    write_text("numbers.csv", "a,b\n1,2.5\n3,4\n-0.5,1e-7\n")
    write_text("ints.csv", "x,y\n1,2\n-3,+4\n")
    write_text("flags.csv", "flag,name\nTrue,a\nfalse,b\nTRUE,c\n")
    write_text("crlf.csv", 'k,v\r\na,"x\r\ny"\r\nb, spaced \r\n')
    write_text(
        "data.json",
        '{"name": "ragloom", "version": 1, "ratio": 0.25, "big": 1e20, "ok": true,\n'
        ' "none": null, "tags": ["rust", "llm"], "nested": {"deep": {"k": "v", "n": [1, 2, {"x": "é"}]}},\n'
        ' "empty": {}, "list": [], "people": [{"name": "Ann", "age": 3}, {"name": "Bo"}]}\n',
    )
    write_text("rows.jsonl", '{"a": 1, "b": [1, 2]}\n{"a": "two", "c": {"d": null}}\n')
    write_text(
        "guide.md",
        "Intro line before headers.\nSee [the docs](https://example.invalid/docs) and ![a logo](logo.png).\n\n"
        "# Title\n\nFirst <b>bold</b> paragraph.\nReally!? Yes.\n\n"
        "## Install\n\nRun it.\n\n```bash\n# not a header\n  indented\n```\n\n"
        "## Usage\n\nUse it.\n\n### Deep\n\nDeep text.\n\n# Second\n\nLast words.\n",
    )
    write_text("headers_only.md", "# A\n## B\n# C\n")
    write_text(
        "page.html",
        "<!DOCTYPE html><html><head><title>Loom &amp; Co</title>"
        "<style>body{color:red}</style><script>var x = 1;</script></head>"
        "<body><h1>Looms</h1><p>A loom  weaves\n <b>cloth</b>.</p>"
        "<section id=\"s1\">Section one text<p>inner para</p><!-- note --><section id=\"s2\">nested</section></section>"
        "<section>no id <script>var y;</script></section>"
        "<ul><li>warp</li><li>weft</li></ul><pre>  keep\n    this</pre>"
        "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "<noscript>enable js</noscript></body></html>",
    )


if __name__ == "__main__":
    pdfs()
    docx()
    epub()
    texts()
