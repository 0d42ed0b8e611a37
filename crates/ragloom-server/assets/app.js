// ragloom web chat: index picker, status panel, streaming chat with sources, uploads.
// Plain ES2020 served by `ragloom serve` at /assets/app.js; no framework, no build step.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const make = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const index = () => $("index").value;
  const indexQuery = (name) => (name ? "?index=" + encodeURIComponent(name) : "");

  // localStorage can throw (storage disabled, some private modes); the page must work anyway.
  const store = {
    get: (k) => { try { return localStorage.getItem(k) || ""; } catch { return ""; } },
    set: (k, v) => { try { localStorage.setItem(k, v); } catch { /* not persisted */ } },
  };

  let apiKey = store.get("ragloom.apiKey");
  let statusData = null;
  let history = [];      // the conversation sent with every question: {role, content}
  let controller = null; // AbortController of the answer being streamed, if any
  let keyWaiters = [];   // requests that got a 401 and wait for a key to retry
  let passageToken = 0;  // ignores a slow passage fetch once another source was clicked
  let passageOpener = null;

  // ---- HTTP ---------------------------------------------------------------------

  // fetch() plus the Bearer key. On 401 it shows the key form, waits for a key and
  // retries the same request, so callers never see a 401.
  async function api(path, opts = {}) {
    for (;;) {
      const headers = new Headers(opts.headers);
      if (apiKey) headers.set("Authorization", "Bearer " + apiKey);
      const res = await fetch(path, { ...opts, headers });
      if (res.status !== 401) return res;
      await askForKey(await errorText(res), opts.signal);
    }
  }

  async function errorText(res) {
    try {
      const body = await res.json();
      if (body && body.error && body.error.message) return body.error.message;
    } catch { /* not the JSON error envelope */ }
    return `HTTP ${res.status}${res.statusText ? " " + res.statusText : ""}`;
  }

  async function getJSON(path) {
    const res = await api(path);
    if (!res.ok) throw new Error(await errorText(res));
    return res.json();
  }

  function askForKey(message, signal) {
    $("key-msg").textContent = apiKey ? "Key refused: " + message : "This server needs an API key.";
    $("key-form").hidden = false;
    $("api-key").focus();
    return new Promise((resolve, reject) => {
      keyWaiters.push(resolve);
      // Stop must also cancel a question that is still waiting for a key.
      if (signal) signal.addEventListener("abort", () => reject(new DOMException("Aborted", "AbortError")), { once: true });
    });
  }

  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    apiKey = $("api-key").value.trim();
    store.set("ragloom.apiKey", apiKey);
    $("key-form").hidden = true;
    const waiting = keyWaiters;
    keyWaiters = [];
    waiting.forEach((resolve) => resolve());
  });

  // Reads a text/event-stream body and calls onData with each parsed `data:` JSON.
  // Network reads split events anywhere, so text is buffered until a blank line.
  async function readSSE(res, onData) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      buf += decoder.decode(value || new Uint8Array(), { stream: !done });
      if (done) buf += "\n\n"; // flush a last event that lacks its blank line
      let m;
      while ((m = /\r?\n\r?\n/.exec(buf))) {
        const event = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        const data = event.split(/\r?\n/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
          .join("\n");
        if (!data) continue; // comments / keep-alives
        if (data.trim() === "[DONE]") { reader.cancel().catch(() => {}); return; }
        onData(JSON.parse(data));
      }
      if (done) return;
    }
  }

  // ---- Index picker and status panel --------------------------------------------

  async function loadModels() {
    const select = $("index");
    try {
      const { data = [] } = await getJSON("/v1/models");
      const saved = store.get("ragloom.index");
      select.replaceChildren(...data.map((m) => new Option(m.id, m.id)));
      if (data.some((m) => m.id === saved)) select.value = saved;
      if (!data.length) select.replaceChildren(new Option("(no index)", ""));
    } catch (e) {
      select.replaceChildren(new Option("(unavailable)", ""));
      $("status").replaceChildren(make("p", "error", "Could not list indexes: " + e.message));
    }
  }

  $("index").addEventListener("change", () => {
    store.set("ragloom.index", index());
    renderStatus();
  });

  async function refreshStatus() {
    try {
      statusData = await getJSON("/v1/status");
      renderStatus();
    } catch (e) {
      $("status").replaceChildren(make("p", "error", "Status unavailable: " + e.message));
    }
  }

  function renderStatus() {
    const all = (statusData && statusData.indexes) || [];
    const s = index() ? all.find((i) => i.name === index()) : all[0];
    if (!s) { $("status").replaceChildren(make("p", "muted", "No status for this index.")); return; }
    const rows = [
      ["Index", s.name], ["Source", s.source], ["Documents", s.documents], ["Nodes", s.nodes],
      ["Retrieval", s.retrieval], ["LLM", s.llm || "none (answers are passages)"], ["Last update", when(s.updated)],
    ];
    const dl = make("dl");
    for (const [k, v] of rows) dl.append(make("dt", null, k), make("dd", null, show(v)));
    $("status").replaceChildren(dl);
  }

  const show = (v) => (v == null || v === "" ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v));

  function when(v) {
    if (v == null || v === "") return "never";
    // Numbers may be Unix seconds or milliseconds; strings are ISO dates (or shown as they are).
    const d = typeof v === "number" ? new Date(v < 1e12 ? v * 1000 : v) : new Date(v);
    return isNaN(d.getTime()) ? String(v) : d.toLocaleString();
  }

  // ---- Chat ---------------------------------------------------------------------

  function addMessage(role, text) {
    const msg = make("div", "msg " + role);
    msg.append(make("div", "text", text));
    $("messages").append(msg);
    return msg;
  }

  // Keep the newest text in view, unless the reader scrolled up to read something else.
  function following(update) {
    const root = document.documentElement;
    const atBottom = window.innerHeight + window.scrollY >= root.scrollHeight - 80;
    update();
    if (atBottom) window.scrollTo(0, root.scrollHeight);
  }

  function setStreaming(on) {
    $("send").disabled = on;
    if (!on && document.activeElement === $("stop")) $("question").focus();
    $("stop").hidden = !on;
  }

  async function send() {
    const question = $("question").value.trim();
    if (!question || controller) return;
    $("question").value = "";
    const model = index();
    const turns = history; // "New chat" swaps in a new array; this answer keeps its own
    turns.push({ role: "user", content: question });
    let msg, text;
    following(() => {
      addMessage("user", question);
      msg = addMessage("assistant", "");
      text = msg.querySelector(".text");
    });
    msg.setAttribute("aria-busy", "true"); // screen readers wait for the whole answer
    controller = new AbortController();
    setStreaming(true);
    let answer = "";
    try {
      const res = await api("/v1/chat/completions", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        signal: controller.signal,
        body: JSON.stringify({ model, messages: turns, stream: true, stream_options: { include_usage: true } }),
      });
      if (!res.ok) throw new Error(await errorText(res));
      await readSSE(res, (chunk) => {
        if (chunk.error) throw new Error(chunk.error.message || "the answer failed");
        const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
        if (delta && delta.content) {
          answer += delta.content;
          following(() => text.append(delta.content)); // a text node: model text is never HTML
        }
        // The last chunks repeat the sources; each time the list is replaced, not added to.
        if (Array.isArray(chunk.sources)) following(() => renderSources(msg, chunk.sources, model));
      });
      if (!answer) text.textContent = "(no answer)";
    } catch (e) {
      const stopped = e.name === "AbortError";
      if (!stopped) msg.classList.add("error");
      following(() => msg.append(make("p", stopped ? "note" : "note error", stopped ? "Stopped." : "Error: " + e.message)));
    } finally {
      // Keep turns alternating: a question that got no answer at all leaves the history.
      if (answer) turns.push({ role: "assistant", content: answer });
      else turns.pop();
      msg.removeAttribute("aria-busy");
      msg.classList.add("done");
      controller = null;
      setStreaming(false);
    }
  }

  function where(p) {
    let s = p.file || "unknown file";
    if (p.line != null) s += ":" + p.line;
    else if (p.page != null) s += ", page " + p.page;
    return s;
  }

  function renderSources(msg, sources, model) {
    const old = msg.querySelector(".sources");
    if (!sources.length) { if (old) old.remove(); return; }
    const list = make("ul", "sources");
    list.setAttribute("aria-label", "Sources");
    sources.forEach((p, i) => {
      const score = typeof p.score === "number" ? ` (${p.score.toFixed(3)})` : "";
      const button = make("button", "source", `[${i + 1}] ${where(p)}${score}`);
      button.type = "button";
      if (p.excerpt) button.title = p.excerpt;
      button.addEventListener("click", () => openPassage(p, model, button));
      const li = make("li");
      li.append(button);
      list.append(li);
    });
    if (old) old.replaceWith(list);
    else msg.querySelector(".text").after(list);
  }

  // Shows a source's stored text, fetched by node id (the page never asks for file paths).
  async function openPassage(p, model, opener) {
    const token = ++passageToken;
    const body = $("passage-text");
    passageOpener = opener;
    $("passage-title").textContent = where(p);
    body.classList.remove("error");
    body.textContent = "Loading…";
    $("passage").hidden = false;
    $("passage-close").focus();
    try {
      const node = await getJSON(`/v1/nodes/${encodeURIComponent(p.node_id)}${indexQuery(model)}`);
      if (token !== passageToken) return;
      // The title stays the cited place (the button's); the passage may start above it.
      body.textContent = node.text || "(empty passage)";
    } catch (e) {
      if (token !== passageToken) return;
      body.classList.add("error");
      body.textContent = "Could not load the passage: " + e.message;
    }
  }

  function closePassage() {
    if ($("passage").hidden) return;
    $("passage").hidden = true;
    if (passageOpener && passageOpener.isConnected) passageOpener.focus();
  }

  $("passage-close").addEventListener("click", closePassage);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closePassage(); });

  $("chat-form").addEventListener("submit", (e) => { e.preventDefault(); send(); });
  $("question").addEventListener("keydown", (e) => {
    // Enter sends, Shift+Enter is a newline; Enter that confirms an IME composition is left alone.
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $("stop").addEventListener("click", () => { if (controller) controller.abort(); });
  $("new-chat").addEventListener("click", () => {
    if (controller) controller.abort();
    history = [];
    $("messages").replaceChildren();
    closePassage();
    $("question").focus();
  });

  // ---- Upload -------------------------------------------------------------------

  function summarize(summary) {
    if (!summary || typeof summary !== "object") return "";
    const parts = Object.entries(summary)
      .filter(([, v]) => v == null || typeof v !== "object")
      .map(([k, v]) => `${k.replace(/_/g, " ")}: ${v}`);
    return parts.length ? " (" + parts.join(", ") + ")" : "";
  }

  $("upload-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const out = $("upload-status");
    const files = Array.from($("file").files);
    out.className = "";
    if (!files.length) { out.textContent = "Choose one or more files first."; return; }
    const form = new FormData();
    files.forEach((f) => form.append("file", f, f.name));
    $("upload").disabled = true;
    out.textContent = "Uploading…";
    try {
      const res = await api("/v1/documents" + indexQuery(index()), { method: "POST", body: form });
      if (!res.ok) throw new Error(await errorText(res));
      const { job_id: jobId, files: saved = [] } = await res.json();
      out.textContent = "ingesting… " + saved.join(", ");
      let job;
      do {
        await sleep(500);
        job = await getJSON("/v1/jobs/" + encodeURIComponent(jobId));
      } while (job.state !== "succeeded" && job.state !== "failed");
      if (job.state === "failed") throw new Error(job.error || "ingestion failed");
      out.textContent = "Ingested " + (saved.join(", ") || "files") + summarize(job.summary);
      out.className = "ok";
      $("file").value = "";
    } catch (err) {
      out.textContent = "Upload failed: " + err.message;
      out.className = "error";
    } finally {
      $("upload").disabled = false;
      refreshStatus();
    }
  });

  // ---- Start --------------------------------------------------------------------

  loadModels().then(refreshStatus);
  // Skip the periodic refresh while a key is asked for, so retries do not pile up.
  setInterval(() => { if ($("key-form").hidden) refreshStatus(); }, 30000);
})();
