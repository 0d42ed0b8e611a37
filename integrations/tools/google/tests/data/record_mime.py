"""Writes mime_cases.rs (and mime_cases.json beside it when asked): what
CPython 3.11's email package builds for LlamaIndex's Gmail draft
(set_content, To, Subject), which src/mime.rs is checked against.

Usage: python3 record_mime.py [--fuzz N SEED OUT_PREFIX]
"""
import base64
import json
import random
import sys
from email.message import EmailMessage

import os

HERE = os.path.dirname(os.path.abspath(__file__))
# The folding rules mime.rs reproduces are CPython 3.11's.
assert sys.version_info[:2] == (3, 11), sys.version


def build(to, subject, message):
    m = EmailMessage()
    m.set_content(message)
    m["To"] = to
    m["Subject"] = subject
    return m.as_bytes()


def rs_str(s):
    out = []
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        else:
            out.append("\\u{%x}" % o)
    return '"' + "".join(out) + '"'


def rs_bytes(b):
    out = []
    for x in b:
        if x == 0x22:
            out.append('\\"')
        elif x == 0x5C:
            out.append("\\\\")
        elif x == 0x0A:
            out.append("\\n")
        elif 0x20 <= x < 0x7F:
            out.append(chr(x))
        else:
            out.append("\\x%02x" % x)
    return 'b"' + "".join(out) + '"'


def has_break(s):
    return "\r" in s or "\n" in s


def run(name, to, subject, message, refuse=None, differs=None):
    """One case: Python's bytes, Python's exception, or a refusal where Python injects.

    `refuse` marks a case Rust must refuse although Python writes something; `differs`
    a documented difference where Rust must still produce a message."""
    # The Rust API takes a list; an empty list stands for Python's None (see mime.rs).
    py_to = None if not to else to
    case = {"name": name, "to": to, "subject": subject, "message": message}
    try:
        out = build(py_to, subject, message)
    except Exception as e:  # noqa: BLE001 - any exception is an expected error
        case["error"] = type(e).__name__
        return case
    if refuse or any(has_break(a) for a in to) or (subject is not None and has_break(subject)):
        case["refused"] = refuse or "Python writes the line break into the header"
        case["python_bytes_b64"] = base64.b64encode(out).decode()
        return case
    if differs:
        case["differs"] = differs
        case["python_bytes_b64"] = base64.b64encode(out).decode()
        return case
    case["bytes_b64"] = base64.b64encode(out).decode()
    return case


LOREM = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod "
         "tempor incididunt ut labore et dolore magna aliqua.")


def curated():
    c = []
    add = lambda *args, **kw: c.append(run(*args, **kw))
    one = ["alice@example.com"]
    # Bodies.
    add("ascii_short", one, "Hello", "Hi Alice,\nSee you tomorrow.\nBob")
    add("ascii_no_trailing_newline", one, "Hi", "no newline at end")
    add("ascii_trailing_newline", one, "Hi", "ends with newline\n")
    add("ascii_many_blank_lines", one, "Hi", "a\n\n\n\nb\n\n")
    add("empty_body", one, "Hi", "")
    add("body_only_newline", one, "Hi", "\n")
    add("crlf_body", one, "Hi", "line one\r\nline two\r\n")
    add("lone_cr_body", one, "Hi", "one\rtwo\r\rthree")
    add("mixed_line_endings", one, "Hi", "a\r\nb\rc\nd\n\re")
    add("nul_and_controls", one, "Hi", "nul\x00here\x01\x7f\x0b\x0c\x1c end")
    add("line_78_7bit", one, "Hi", "x" * 78 + "\nshort")
    add("line_79_qp", one, "Hi", "x" * 79 + "\nshort")
    add("line_76", one, "Hi", "y" * 76 + "\n" + "z" * 80)
    add("line_77", one, "Hi", "y" * 77 + "\n" + "z" * 80)
    add("line_77_trailing_space", one, "Hi", "y" * 76 + " \n" + "z" * 80)
    add("line_78_trailing_space", one, "Hi", "y" * 77 + " \n" + "z" * 80)
    add("line_79_trailing_space", one, "Hi", "y" * 78 + " \n" + "z" * 80)
    add("line_80_trailing_tab", one, "Hi", "y" * 79 + "\t\n" + "z" * 80)
    add("qp_long_ascii", one, "Report", (LOREM + " ") * 3)
    add("qp_long_ascii_paragraphs", one, "Report", "\n".join([LOREM * 2, "", LOREM, "end"]))
    add("qp_equals_signs", one, "Math", "a=b, c==d, " * 12 + "\nx = 1 =\n=")
    add("qp_equals_at_break", one, "Math", "w" * 75 + "=3D" + "v" * 30)
    add("qp_equals_at_break2", one, "Math", "w" * 76 + "=" + "v" * 30)
    add("qp_trailing_spaces", one, "Hi", LOREM * 2 + "   \nnext line\t\n   \n\t\nlast ")
    add("base64_equals_line", one, "Hi", "=" * 120)
    add("base64_control_chars", one, "Hi", "\x01\x02\x03" * 40)
    add("accents_short_8bit", one, "Hi", "Bonjour à tous, ça va très bien.\nÀ bientôt!")
    add("cjk_short_8bit", one, "Hi", "你好，世界。\n今日は")
    add("emoji_short_8bit", one, "Hi", "Party time 🎉🎉\nCheers 🍻")
    add("accents_long_qp", one, "Hi", ("Le café est très bon à Paris, n'est-ce pas? " * 4).strip())
    add("cjk_long_base64", one, "Hi", "这是一个很长的中文句子，用来测试编码。" * 5)
    add("emoji_long_base64", one, "Hi", "🎉" * 30)
    add("many_lines_sniff_qp", one, "Hi", "\n".join(["short line %d" % i for i in range(12)] + ["中文" * 40]))
    add("many_lines_sniff_base64", one, "Hi", "\n".join(["中文中文中文中文 %d" % i for i in range(12)] + ["x" * 100]))
    add("many_lines_long_later", one, "Hi", "\n".join(["line %d" % i for i in range(15)] + [LOREM * 2]))
    add("ten_lines_qp", one, "Hi", "\n".join(["line %d" % i for i in range(9)] + [LOREM * 2]))
    add("eleven_lines_qp", one, "Hi", "\n".join(["line %d" % i for i in range(10)] + [LOREM * 2]))
    add("long_crlf_qp", one, "Hi", (LOREM + "\r\n") * 3 + LOREM * 2)
    # Subjects.
    add("subject_none", one, None, "body")
    add("subject_empty", one, "", "body")
    add("subject_spaces_only", one, "   ", "body")
    add("subject_leading_trailing_spaces", one, "  padded subject  ", "body")
    add("subject_tab", one, "tab\there", "body")
    add("subject_long_words", one, " ".join(["word%d" % i for i in range(40)]), "body")
    add("subject_one_long_word", one, "x" * 100, "body")
    add("subject_long_then_words", one, "y" * 90 + " and then some more words", "body")
    add("subject_accents", one, "Réunion à 15h — café", "body")
    add("subject_cjk", one, "会议通知", "body")
    add("subject_emoji", one, "Party 🎉 tonight", "body")
    add("subject_long_accents", one, "Héllo wörld " * 10, "body")
    add("subject_long_mixed", one, "Quarterly report for the Zürich office: numbers look good, " * 3, "body")
    add("subject_long_cjk", one, "这是一个很长的主题" * 8, "body")
    add("subject_specials", one, 'Re: [Fwd] "quoted" (paren) <angle> a@b, c;d', "body")
    add("subject_encoded_word", one, "=?utf-8?q?J=C3=A9r=C3=B4me?= says hi", "body")
    add("subject_encoded_word_b", one, "=?UTF-8?B?w6k=?= =?utf-8?q?x?=", "body")
    add("subject_encoded_word_lookalike", one, "x=?y?z and =?utf-8?q?bad", "body")
    add("subject_encoded_word_newline", one, "=?utf-8?q?Hi=0ABcc:_evil@example.com?=", "body",
        refuse="Python writes the decoded line break into the header")
    add("subject_encoded_word_other_charset", one, "=?iso-8859-2?q?=E9?= and =?x-unknown?q?abc?=", "body",
        differs="only utf-8/us-ascii/latin-1 encoded words are decoded")
    add("subject_nul", one, "Hi\x00there", "body")
    add("subject_crlf_injection", one, "Hi\r\nBcc: evil@example.com", "body")
    add("subject_lf_injection", one, "Hi\nBcc: evil@example.com", "body")
    add("subject_cr_injection", one, "Hi\rBcc: evil@example.com", "body")
    add("subject_trailing_newline", one, "Hi\n", "body")
    add("subject_vertical_tab", one, "Hi\x0bthere", "body")
    add("subject_unicode_line_separator", one, "Hi\u2028there", "body")
    # Recipients.
    add("to_empty_list_as_none", [], "Hi", "body")
    add("to_single_empty_string", [""], "Hi", "body")
    add("to_two_empty_strings", ["", ""], "Hi", "body")
    add("to_several", ["a@example.com", "b@example.org", "c@example.net"], "Hi", "body")
    add("to_display_name", ["John Doe <john@example.com>"], "Hi", "body")
    add("to_quoted_comma", ['"Doe, John" <john@example.com>', "Jane Roe <jane@example.com>"], "Hi", "body")
    add("to_unquoted_comma", ["Doe, John <john@example.com>"], "Hi", "body")
    add("to_quoted_quotes", ['"John \\"JD\\" Doe" <jd@example.com>'], "Hi", "body")
    add("to_dotted_name", ["John Q. Public <jqp@example.com>"], "Hi", "body")
    add("to_accents", ["José Pérez <jose@example.com>"], "Hi", "body")
    add("to_cjk", ["张伟 <zhang@example.com>"], "Hi", "body")
    add("to_quoted_accents", ['"Pérez, José" <jose@example.com>'], "Hi", "body")
    add("to_many_fold", ["person%d@example.com" % i for i in range(12)], "Hi", "body")
    add("to_long_names_fold", ['"A very long display name that is quite long indeed, really" <averylongaddress@averylongdomain.example.com>', "b@c.com"], "Hi", "body")
    add("to_many_accents_fold", ["Ünïcödé Nämé With Many Accents <u@x.com>", "Second Person <s@x.com>", "third@x.com"], "Hi", "body")
    add("to_comment", ["alice@example.com (Work)"], "Hi", "body")
    add("to_group", ["Team: a@example.com, b@example.com;"], "Hi", "body")
    add("to_angle_only", ["<bare@example.com>"], "Hi", "body")
    add("to_no_domain", ["localonly"], "Hi", "body")
    add("to_non_ascii_local_part", ["josé@example.com"], "Hi", "body")
    add("to_domain_literal", ["user@[192.168.0.1]"], "Hi", "body")
    add("to_lone_angle", ["<"], "Hi", "body")
    add("to_at_end", ["a@"], "Hi", "body")
    add("to_leading_space_dot", [" .foo <a@b.com>"], "Hi", "body")
    add("to_unterminated_quote", ['"unterminated'], "Hi", "body")
    add("to_encoded_word_newline", ["=?utf-8?q?Eve=0ABcc:_evil@example.com?= <a@example.com>"], "Hi", "body",
        refuse="Python writes the decoded line break into the header")
    add("to_encoded_word_name", ["=?utf-8?q?Andr=C3=A9?= <andre@example.com>"], "Hi", "body")
    add("to_lf_injection", ["a@example.com\nBcc: evil@example.com"], "Hi", "body")
    add("to_crlf_injection", ["a@example.com", "b@example.com\r\nBcc: evil@example.com"], "Hi", "body")
    add("all_non_ascii", ["Zoë Ångström <zoe@example.com>"], "Ünïcode sübject ✓", "Grüße aus Köln 🎉\n" * 3)
    return c


def fuzz(n, seed):
    rnd = random.Random(seed)
    pieces = ["a", "b", "John", "Doe", "é", "中", "🎉", " ", "  ", "\t", ",", "<", ">", "@", ".",
              '"', "\\", "(", ")", ":", ";", "[", "]", "=?utf-8?q?", "?=", "=C3=A9", "x" * 30,
              "example.com", "user", "=", "_", "\x00", "\x0b", "\u3000", "long" * 10, "=?utf-8?b?w6k=?="]
    def text(k):
        return "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, k)))
    def body():
        lines = []
        for _ in range(rnd.randint(0, 14)):
            lines.append("".join(rnd.choice(["word ", "é", "中", "=", " ", "\t", "x" * 20, "🎉", "\x01"])
                                 for _ in range(rnd.randint(0, 30))))
        return rnd.choice(["\n", "\r\n", "\r"]).join(lines) + rnd.choice(["", "\n"])
    words = ["John", "Doe", "Zoë", "Ångström", "李", "Smith,", "Jr.", "O'Brien", "(x)", "🎉", "a",
             "verylongwordthatgoesonandon", "é", "Müller-Lüdenscheidt", "=", "x=y", " ", "  ", "\t", "\\"]
    def name():
        return " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 6)))
    def addr():
        mail = rnd.choice(["a@b.com", "first.last@example.co.uk", "x@y", "long.address.%d@subdomain.example.org" % rnd.randint(0, 99)])
        form = rnd.randint(0, 4)
        if form == 0:
            return mail
        if form == 1:
            return "%s <%s>" % (name(), mail)
        if form == 2:
            return '"%s" <%s>' % (name().replace('"', ''), mail)
        if form == 3:
            return "%s (%s)" % (mail, name())
        return text(8)
    def real_body():
        lines = []
        for _ in range(rnd.randint(0, 16)):
            n = rnd.choice([0, 5, 40, 75, 76, 77, 78, 79, 80, 150, 300])
            extra = ["a", "b", " ", "=", "\t", "x", "y"] + (["é", "中", "🎉"] if rnd.random() < 0.3 else [])
            line = "".join(rnd.choice(extra) if rnd.random() < 0.3 else "w"
                           for _ in range(n))
            lines.append(line + rnd.choice(["", " ", "\t", "  ", "="]))
        return "\n".join(lines) + rnd.choice(["", "\n"])
    out = []
    for i in range(n):
        if i % 3 == 2:
            grammar = ["Team:", ";", "@[1.2.3.4]", "[", "]", "<@a.b,@c:", "@", "a", "b.c", "(c)", "((n))", '"q r"',
                       "\\", ".", "..", ",", " ", "<", ">", "x@y", ":", "é", "=?utf-8?q?a=2Cb?=", "\t", "(", ")"]
            to = ["".join(rnd.choice(grammar) for _ in range(rnd.randint(0, 10))) for _ in range(rnd.randint(1, 3))]
            subject = text(6)
            message = "x"
        elif i % 2:
            to = [text(12) for _ in range(rnd.randint(0, 4))]
            subject = None if rnd.random() < 0.1 else text(25)
            message = body()
        else:
            to = [addr() for _ in range(rnd.randint(0, 6))]
            subject = None if rnd.random() < 0.05 else name() * rnd.randint(1, 4)
            message = real_body()
        out.append(run("fuzz%d" % i, to, subject, message))
    return out


def write(cases, prefix, with_json=False):
    if with_json:
        with open(prefix + ".json", "w") as f:
            json.dump(cases, f, indent=1, ensure_ascii=False)
    rows = []
    for c in cases:
        to = "&[" + ", ".join(rs_str(a) for a in c["to"]) + "]"
        subject = "None" if c["subject"] is None else "Some(%s)" % rs_str(c["subject"])
        if "error" in c:
            expect = "Expect::PythonRaises(%s)" % rs_str(c["error"])
        elif "refused" in c:
            expect = "Expect::Refused(%s)" % rs_str(c["refused"])
        elif "differs" in c:
            expect = "Expect::Differs(%s)" % rs_str(c["differs"])
        else:
            expect = "Expect::Bytes(%s)" % rs_bytes(base64.b64decode(c["bytes_b64"]))
        rows.append("    Case {\n        name: %s,\n        to: %s,\n        subject: %s,\n        message: %s,\n        expect: %s,\n    },"
                    % (rs_str(c["name"]), to, subject, rs_str(c["message"]), expect))
    with open(prefix + ".rs", "w") as f:
        f.write("// Generated by record_mime.py from CPython %s; do not edit.\n[\n%s\n]\n" % (sys.version.split()[0], "\n".join(rows)))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--fuzz":
        write(fuzz(int(sys.argv[2]), int(sys.argv[3])), sys.argv[4], with_json=True)
    else:
        cases = curated()
        write(cases, HERE + "/mime_cases")
        print(len(cases), "cases")
