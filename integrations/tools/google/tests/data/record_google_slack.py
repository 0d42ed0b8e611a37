"""Records the Google and Slack replay cases: runs LlamaIndex's Gmail, Google Calendar and Slack tool specs against a
local server that answers a script of replies in order, and records every
request they send with the tools' outputs (for ragloom's replay tests)."""
import base64, json, sys, threading, time, urllib.parse, os
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

os.environ["TZ"] = "UTC"
time.tzset()

class Script:
    def __init__(self):
        self.replies = []
        self.requests = []
    def load(self, replies):
        self.replies = list(replies)
        self.requests = []

SCRIPT = Script()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def _serve(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        url = urllib.parse.urlsplit(self.path)
        ctype = self.headers.get("Content-Type", "")
        rec = {"method": self.command, "path": url.path,
               "query": urllib.parse.parse_qsl(url.query, keep_blank_values=True),
               "content_type": ctype.split(";")[0],
               "authorization": self.headers.get("Authorization")}
        if body:
            if ctype.startswith("application/json"):
                rec["json"] = json.loads(body)
            elif ctype.startswith("application/x-www-form-urlencoded"):
                rec["form"] = urllib.parse.parse_qsl(body.decode(), keep_blank_values=True)
            else:
                rec["body"] = body.decode()
        SCRIPT.requests.append(rec)
        status, headers, reply = SCRIPT.replies.pop(0) if SCRIPT.replies else (599, {}, {"error": "script exhausted"})
        data = json.dumps(reply).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
PORT = server.server_address[1]
BASE = f"http://127.0.0.1:{PORT}/"
threading.Thread(target=server.serve_forever, daemon=True).start()

def b64(s):
    return base64.urlsafe_b64encode(s.encode()).decode()

from google.oauth2.credentials import Credentials
from googleapiclient.discovery import build
from llama_index.tools.google import GmailToolSpec, GoogleCalendarToolSpec
from llama_index.core.tools import ToolOutput

def creds():
    return Credentials(token="ya29.expired-access", refresh_token="1//refresh-token",
        token_uri=BASE + "token", client_id="client-123.apps.googleusercontent.com",
        client_secret="client-secret-xyz", scopes=["https://www.googleapis.com/auth/gmail.compose"])

TOKEN_REPLY = (200, {}, {"access_token": "ya29.fresh-access", "expires_in": 3599,
    "scope": "https://www.googleapis.com/auth/gmail.compose https://www.googleapis.com/auth/gmail.readonly",
    "token_type": "Bearer"})
UNAUTH = (401, {}, {"error": {"code": 401, "message": "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", "errors": [{"message": "Invalid Credentials", "domain": "global", "reason": "authError", "location": "Authorization", "locationType": "header"}], "status": "UNAUTHENTICATED"}})

def call(tools, name, **kw):
    tool = next(t for t in tools if t.metadata.name == name)
    out = tool.call(**kw)
    return {"tool": name, "input": kw, "content": out.content, "is_error": bool(getattr(out, "is_error", False))}

cases = {}

def run(name, replies, steps):
    SCRIPT.load(replies)
    outputs = []
    for step in steps:
        try:
            outputs.append(step())
        except Exception as e:
            outputs.append({"exception": type(e).__name__, "text": str(e)})
    assert not SCRIPT.replies, (name, SCRIPT.replies)
    cases[name] = {"replies": [{"status": s, "headers": h, "body": b} for s, h, b in replies],
                   "requests": SCRIPT.requests, "outputs": outputs}

# ---- Gmail: the walkthrough (create, update, get, send), a 401 refreshed first.
raw1 = "From: Alice <alice@example.com>\r\nTo: me@example.com\r\nSubject: Lunch\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\n\r\nShall we have lunch on Friday?\r\n"
raw2 = "From: Bob <bob@example.com>\r\nTo: me@example.com\r\nSubject: Re: Report\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\n\r\nThe report is attached.\r\n--b1\r\nContent-Type: text/html; charset=\"UTF-8\"\r\n\r\n<p>The report is attached.</p>\r\n--b1--\r\n"
draft_payload = lambda to, subject, text: {"partId": "", "mimeType": "text/plain", "filename": "",
    "headers": [{"name": "Content-Type", "value": "text/plain; charset=\"utf-8\""},
                {"name": "Content-Transfer-Encoding", "value": "7bit"},
                {"name": "MIME-Version", "value": "1.0"},
                {"name": "To", "value": to}, {"name": "Subject", "value": subject}],
    "body": {"size": len(text), "data": b64(text)}}
draft = {"id": "r-5571190284436371421", "message": {"id": "19a0f1c2d3e4f5a6", "threadId": "19a0f1c2d3e4f5a6", "labelIds": ["DRAFT"]}}
draft_full = {"id": "r-5571190284436371421", "message": {"id": "19a0f1c2d3e4f5a7", "threadId": "19a0f1c2d3e4f5a6",
    "labelIds": ["DRAFT"], "snippet": "Hi Adam, the meeting moved to 3pm.", "payload": draft_payload("adam@example.com", "Meeting", "Hi Adam, the meeting moved to 3pm.\n"),
    "sizeEstimate": 412, "historyId": "812345", "internalDate": "1765100000000"}}
sent = {"id": "19a0f1c2d3e4f5a8", "threadId": "19a0f1c2d3e4f5a6", "labelIds": ["UNREAD", "SENT", "INBOX"]}

def gmail():
    spec = GmailToolSpec(creds=creds())
    spec.service = build("gmail", "v1", credentials=creds(), client_options={"api_endpoint": BASE}, static_discovery=True)
    return spec

g = gmail(); tools = g.to_tool_list()
run("gmail_walkthrough",
    [UNAUTH, TOKEN_REPLY, (200, {}, draft),
     (200, {}, draft_full), (200, {}, draft),
     (200, {}, draft_full),
     (200, {}, sent)],
    [lambda: call(tools, "create_draft", to=["adam@example.com"], subject="Meeting", message="Hi Adam, the meeting is at 2pm."),
     lambda: call(tools, "update_draft", draft_id="r-5571190284436371421", message="Hi Adam, the meeting moved to 3pm."),
     lambda: call(tools, "get_draft", draft_id="r-5571190284436371421"),
     lambda: call(tools, "send_draft", draft_id="r-5571190284436371421")])

g = gmail(); tools = g.to_tool_list()
run("gmail_search",
    [(200, {}, {"messages": [{"id": "18f1", "threadId": "18f1"}, {"id": "18f2", "threadId": "18e0"}], "nextPageToken": "09876", "resultSizeEstimate": 2}),
     (200, {}, {"id": "18f1", "threadId": "18f1", "labelIds": ["INBOX"], "snippet": "Shall we have lunch on Friday?", "sizeEstimate": 210, "raw": b64(raw1), "historyId": "1", "internalDate": "1765000000000"}),
     (200, {}, {"id": "18f2", "threadId": "18e0", "labelIds": ["INBOX"], "snippet": "The report is attached.", "sizeEstimate": 380, "raw": b64(raw2), "historyId": "2", "internalDate": "1765000001000"})],
    [lambda: [{"text": d.text, "metadata": d.metadata} for d in g.search_messages(query="from:alice OR from:bob", max_results=2)]])

g = gmail(); tools = g.to_tool_list()
run("gmail_load_data_empty",
    [(200, {}, {"resultSizeEstimate": 0})],
    [lambda: [{"text": d.text, "metadata": d.metadata} for d in g.load_data()]])

g = gmail(); tools = g.to_tool_list()
run("gmail_update_keeps_headers_given",
    [(200, {}, draft_full), (200, {}, draft)],
    [lambda: call(tools, "update_draft", draft_id="r-5571190284436371421", to=["eve@example.com", "Frank Smith <frank@example.com>"], subject="Moved", message="Now at 4pm.")])

g = gmail(); tools = g.to_tool_list()
run("gmail_update_without_id",
    [],
    [lambda: call(tools, "update_draft", message="x")])

# ---- Calendar
def calendar():
    spec = GoogleCalendarToolSpec(creds=creds())
    spec.service = build("calendar", "v3", credentials=creds(), client_options={"api_endpoint": BASE}, static_discovery=True)
    return spec

events = {"kind": "calendar#events", "summary": "me@example.com", "timeZone": "UTC", "items": [
  {"kind": "calendar#event", "id": "ev1", "status": "confirmed", "summary": "Standup", "start": {"dateTime": "2026-12-08T09:00:00Z"}, "end": {"dateTime": "2026-12-08T09:15:00Z"}, "organizer": {"email": "me@example.com", "self": True}},
  {"kind": "calendar#event", "id": "ev2", "status": "confirmed", "summary": "Offsite", "start": {"date": "2026-12-10"}, "end": {"date": "2026-12-11"}, "organizer": {"email": "team@example.com", "displayName": "Team"}},
  {"kind": "calendar#event", "id": "ev3", "status": "tentative", "summary": "Review", "start": {"dateTime": "2026-12-11T15:00:00+01:00"}, "end": {"dateTime": "2026-12-11T16:00:00+01:00"}}]}
c = calendar(); tools = c.to_tool_list()
run("calendar_load_data",
    [UNAUTH, TOKEN_REPLY, (200, {}, events)],
    [lambda: call(tools, "load_data", number_of_results=3, start_date="2026-12-07")])
c = calendar(); tools = c.to_tool_list()
run("calendar_create_event",
    [(200, {}, {"kind": "calendar#event", "id": "newev", "status": "confirmed", "htmlLink": "https://www.google.com/calendar/event?eid=bmV3ZXY", "summary": "Planning"})],
    [lambda: call(tools, "create_event", title="Planning", description="Q1 planning", location="Room 4",
                  start_datetime="2026-12-09T10:00:00-05:00", end_datetime="2026-12-09T11:30:00-05:00", attendees=["adam@example.com", "eve@example.com"])])
c = calendar(); tools = c.to_tool_list()
run("calendar_create_event_no_offset",
    [],
    [lambda: call(tools, "create_event", title="Planning", start_datetime="2026-12-09T10:00:00", end_datetime="2026-12-09T11:00:00")])

# ---- Slack
import slack_sdk
class LocalWebClient(slack_sdk.WebClient):
    def __init__(self, *a, **kw):
        kw["base_url"] = BASE + "api/"
        super().__init__(*a, **kw)
slack_sdk.WebClient = LocalWebClient
from llama_index.tools.slack import SlackToolSpec
from datetime import datetime, timezone

API_TEST = (200, {}, {"ok": True, "args": {"token": "xoxb-..."}})
def slack(**kw):
    return SlackToolSpec(slack_token="xoxb-1111-2222-test", **kw)

chans = {"ok": True, "channels": [
  {"id": "C012AB3CD", "name": "general", "is_channel": True, "is_group": False, "is_im": False, "created": 1449252889, "creator": "U012A3CDE", "is_archived": False, "is_general": True, "unlinked": 0, "name_normalized": "general", "is_shared": False, "is_ext_shared": False, "is_org_shared": False, "pending_shared": [], "is_pending_ext_shared": False, "is_member": True, "is_private": False, "is_mpim": False, "updated": 1678229664302, "topic": {"value": "Company-wide announcements", "creator": "", "last_set": 0}, "purpose": {"value": "This channel is for team-wide communication.", "creator": "", "last_set": 0}, "previous_names": [], "num_members": 4},
  {"id": "C061EG9T2", "name": "random", "is_channel": True, "is_group": False, "is_im": False, "created": 1449252889, "creator": "U061F7AUR", "is_archived": False, "is_general": False, "unlinked": 0, "name_normalized": "random", "is_shared": False, "is_ext_shared": False, "is_org_shared": False, "pending_shared": [], "is_pending_ext_shared": False, "is_member": True, "is_private": False, "is_mpim": False, "updated": 1678229664302, "topic": {"value": "Non-work banter", "creator": "", "last_set": 0}, "purpose": {"value": "A place for non-work banter.", "creator": "", "last_set": 0}, "previous_names": [], "num_members": 4}],
  "response_metadata": {"next_cursor": ""}}
SCRIPT.load([API_TEST]); s = slack(); tools = s.to_tool_list()
SCRIPT.load([(200, {}, chans)])
out = call(tools, "fetch_channels")
cases["slack_fetch_channels"] = {"replies": [{"status": 200, "headers": {}, "body": chans}], "requests": SCRIPT.requests, "outputs": [out]}

SCRIPT.load([API_TEST]); s = slack(earliest_date=datetime(2026, 12, 1, tzinfo=timezone.utc), latest_date=datetime(2026, 12, 7, 12, tzinfo=timezone.utc)); tools = s.to_tool_list()
cases["slack_construct"] = {"replies": [{"status": 200, "headers": {}, "body": API_TEST[2]}], "requests": SCRIPT.requests, "outputs": []}
post = {"ok": True, "channel": "C012AB3CD", "ts": "1765100000.000200", "message": {"type": "message", "subtype": "bot_message", "text": "Deploy finished :rocket:", "ts": "1765100000.000200", "username": "ragbot", "bot_id": "B123ABC456"}}
run("slack_send_message", [(200, {}, post)], [lambda: call(tools, "send_message", channel_id="C012AB3CD", message="Deploy finished :rocket:")])

msg = lambda ts, text: {"type": "message", "user": "U012A3CDE", "text": text, "ts": ts}
hist1 = {"ok": True, "messages": [msg("1765000300.000100", "Second message"), msg("1765000200.000100", "First message")], "has_more": True, "pin_count": 0, "response_metadata": {"next_cursor": "bmV4dF90czoxNzY1MDAwMTAw"}}
hist2 = {"ok": True, "messages": [msg("1765000100.000100", "Welcome!")], "has_more": False, "pin_count": 0}
rep = lambda ts, texts, more=False, cursor=None: {"ok": True, "messages": [msg(ts, t) for t in texts], "has_more": more, **({"response_metadata": {"next_cursor": cursor}} if cursor else {})}
ratelimited = (429, {"Retry-After": "1"}, {"ok": False, "error": "ratelimited"})
run("slack_load_data",
    [(200, {}, hist1),
     (200, {}, rep("1765000300.000100", ["Second message", "a reply"], True, "cmVwbHkx")),
     (200, {}, rep("1765000300.000100", ["another reply"])),
     ratelimited,
     (200, {}, rep("1765000200.000100", ["First message"])),
     (200, {}, hist2),
     (200, {}, rep("1765000100.000100", ["Welcome!"])),
     (200, {}, {"ok": False, "error": "not_in_channel"})],
    [lambda: call(tools, "load_data", channel_ids=["C012AB3CD", "C0PRIVATE"], reverse_chronological=False)])

def metadata(cls):
    spec = cls.__new__(cls)
    return {t.metadata.name: {"description": t.metadata.description,
                              "fn_schema": t.metadata.get_parameters_dict()}
            for t in spec.to_tool_list()}

from llama_index.tools.slack import SlackToolSpec as _Slack
google = {"recorded_with": "llama-index-core 0.14.25, llama-index-tools-google 0.8.0, google-api-python-client 2.202.0",
          "tools": {"gmail": metadata(GmailToolSpec), "calendar": metadata(GoogleCalendarToolSpec)},
          "cases": {k: v for k, v in cases.items() if not k.startswith("slack")}}
slack = {"recorded_with": "llama-index-core 0.14.25, llama-index-tools-slack 0.6.0, llama-index-readers-slack 0.4.1, slack-sdk 3.48.0",
         "tools": metadata(_Slack),
         "cases": {k: v for k, v in cases.items() if k.startswith("slack")}}
out = sys.argv[1] if len(sys.argv) > 1 else "."
with open(os.path.join(out, "google/tests/data/llama_index_google.json"), "w") as f:
    json.dump(google, f, indent=1, ensure_ascii=False)
    f.write("\n")
with open(os.path.join(out, "slack/tests/data/llama_index_slack.json"), "w") as f:
    json.dump(slack, f, indent=1, ensure_ascii=False)
    f.write("\n")
