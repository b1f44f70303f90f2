// The web chat: a phone-like conversation over the gateway's HTTP API v1, with the
// conversation's state slices and the journal of the selected reply's turn beside it.
// Plain browser JavaScript, no build step. Every text from the server is inserted as text
// (textContent), never as HTML.
"use strict";

const SLICES = ["meta", "triage", "trial", "context", "mode"];
const OPEN_BY_DEFAULT = new Set(["triage", "trial", "mode"]);
const ENVELOPE = new Set(["at", "service", "turn_id", "event"]);
const POLL_WAIT_S = 25;
const ADMIN_KEY = "orquestra-admin-token";
const TENANT = new URLSearchParams(location.search).get("tenant") || "";
const SESSION_KEY = "orquestra-webchat-session" + (TENANT ? ":" + TENANT : "");

const $ = (id) => document.getElementById(id);

const chat = {
  conversation: "",
  cursor: "0-0",
  poller: null,
  selectedTurn: null,
  journal: [],
  shownMessages: new Set(),
  openSlices: new Set(OPEN_BY_DEFAULT),
  clock: { base: null, setAt: 0 },
  token: localStorage.getItem(ADMIN_KEY) || "",
  // A web chat session ({conversation_id, token}) when there is no admin token: its token
  // reaches only its own conversation's messages and replies, not the state or the journal.
  session: null,
};

const scoped = () => !chat.token && chat.session !== null;

function randomId(prefix) {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 12);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function api(method, path, body, signal) {
  const headers = { "content-type": "application/json" };
  // A deployment of several businesses: the page's address names its own (?tenant=<id>).
  if (TENANT) headers["x-orq-tenant"] = TENANT;
  const bearer = chat.token || (chat.session ? chat.session.token : "");
  if (bearer) headers.authorization = "Bearer " + bearer;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (response.status === 401) $("token-box").hidden = false;
  if (!response.ok) {
    const error = new Error(`${response.status} ${await response.text()}`);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

const conversationPath = (suffix) =>
  `/v1/conversations/${encodeURIComponent(chat.conversation)}${suffix}`;

// Text with WhatsApp's *bold*, built as DOM nodes (no HTML parsing).
function formatted(text) {
  const fragment = document.createDocumentFragment();
  text.split(/(\*[^*\n]+\*)/).forEach((piece) => {
    if (/^\*[^*\n]+\*$/.test(piece)) {
      const strong = document.createElement("strong");
      strong.textContent = piece.slice(1, -1);
      fragment.append(strong);
    } else if (piece) {
      fragment.append(document.createTextNode(piece));
    }
  });
  return fragment;
}

function clockText(iso) {
  const date = iso ? new Date(iso) : new Date();
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleTimeString("pt-BR", { hour: "2-digit", minute: "2-digit" });
}

function addBubble(kind, text, { turnId = null, time = "" } = {}) {
  const item = document.createElement("li");
  item.className = `bubble ${kind}`;
  item.append(formatted(text));
  if (time) {
    const stamp = document.createElement("span");
    stamp.className = "time";
    stamp.textContent = time;
    item.append(stamp);
  }
  if (turnId) {
    item.dataset.turn = turnId;
    item.addEventListener("click", () => select(turnId));
  }
  $("messages").append(item);
  item.scrollIntoView({ block: "end" });
  return item;
}

const note = (text) => addBubble("system", text);

// The business clock: after "Usar", sent_at = chosen time + real time elapsed since.
function sentAt() {
  if (chat.clock.base === null) return undefined;
  const moment = new Date(chat.clock.base.getTime() + (Date.now() - chat.clock.setAt));
  const pad = (n) => String(n).padStart(2, "0");
  // No offset: the gateway reads it in the business timezone.
  return `${moment.getFullYear()}-${pad(moment.getMonth() + 1)}-${pad(moment.getDate())}T` +
    `${pad(moment.getHours())}:${pad(moment.getMinutes())}:${pad(moment.getSeconds())}`;
}

function showClock() {
  $("clock-now").textContent = chat.clock.base === null ? "hora real" : `sent_at: ${sentAt()}`;
}

async function send(text) {
  const messageId = randomId("web-msg-");
  chat.shownMessages.add(messageId);
  const at = sentAt();
  const bubble = addBubble("out", text, { time: at ? at.slice(11, 16) : clockText() });
  const body = { conversation_id: chat.conversation, text, message_id: messageId };
  if (at) body.sent_at = at;
  try {
    await api("POST", "/v1/messages", body);
    bubble.classList.add("sent");
  } catch (error) {
    note(`não enviada: ${error.message}`);
  }
}

// Messages of a turn that this page did not send (history, another client) come from the
// journal's turn.started entry and are shown before the reply.
function showTurnMessages(turnId) {
  const started = chat.journal.find((e) => e.event === "turn.started" && e.turn_id === turnId);
  if (!started) return;
  (started.message_ids || []).forEach((id, index) => {
    if (chat.shownMessages.has(id)) return;
    chat.shownMessages.add(id);
    addBubble("out", String((started.messages || [])[index] ?? ""), { time: clockText(started.now) });
  });
}

async function poll(controller) {
  const conversation = chat.conversation;
  while (!controller.signal.aborted) {
    try {
      const path = conversationPath(`/replies?after=${chat.cursor}&wait=${POLL_WAIT_S}`);
      const data = await api("GET", path, undefined, controller.signal);
      if (conversation !== chat.conversation) return;
      chat.cursor = data.cursor;
      if (!data.replies.length) continue;
      await refresh();
      for (const reply of data.replies) {
        showTurnMessages(reply.turn_id);
        const bubbles = reply.bubbles && reply.bubbles.length ? reply.bubbles : [reply.text];
        bubbles.forEach((text) =>
          addBubble("in", text, { turnId: reply.turn_id, time: clockText(reply.created_at) }));
      }
      select(data.replies[data.replies.length - 1].turn_id);
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error.status === 401) {
        // Waits for the token: entering it starts the conversation again.
        note("Este gateway pede o token de admin (ORQ_ADMIN_TOKEN): informe-o ao lado.");
        return;
      }
      if (error.status === 403 && scoped()) {
        // The session no longer holds (e.g. the secret changed): a new one.
        localStorage.removeItem(SESSION_KEY);
        note("A sessão expirou: uma nova conversa foi aberta.");
        begin("");
        return;
      }
      note(`erro ao ler respostas: ${error.message}`);
      await sleep(2000);
    }
  }
}

async function refresh() {
  if (scoped()) {
    const text = "O estado e a explicação pedem o token de admin (ORQ_ADMIN_TOKEN): informe-o ao lado.";
    $("state").replaceChildren(hint(text));
    return;
  }
  const [state, journal] = await Promise.all([
    api("GET", conversationPath("")),
    api("GET", conversationPath("/journal")),
  ]);
  chat.journal = journal.entries;
  renderState(state);
}

function renderState(state) {
  const box = $("state");
  box.replaceChildren();
  SLICES.forEach((name) => {
    const details = document.createElement("details");
    details.dataset.slice = name;
    details.open = chat.openSlices.has(name);
    details.addEventListener("toggle", () => {
      if (details.open) chat.openSlices.add(name);
      else chat.openSlices.delete(name);
    });
    const summary = document.createElement("summary");
    const value = state[name];
    const headline = { trial: "stage", mode: "mode", triage: "last_intents" }[name];
    summary.textContent = value && headline ? `${name} · ${JSON.stringify(value[headline])}` : name;
    const pre = document.createElement("pre");
    pre.textContent = value ? JSON.stringify(value, null, 2) : "—";
    details.append(summary, pre);
    box.append(details);
  });
}

function hint(text) {
  const paragraph = document.createElement("p");
  paragraph.className = "hint";
  paragraph.textContent = text;
  return paragraph;
}

function select(turnId) {
  chat.selectedTurn = turnId;
  document.querySelectorAll(".bubble.in").forEach((b) => {
    b.classList.toggle("selected", b.dataset.turn === turnId);
  });
  renderExplain(turnId);
}

function short(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > 220 ? text.slice(0, 219) + "…" : text;
}

function renderExplain(turnId) {
  const list = $("explain");
  list.replaceChildren();
  const entries = chat.journal
    .filter((e) => e.turn_id === turnId)
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const started = entries.find((e) => e.event === "turn.started");
  $("explain-turn").textContent = started ? `turno ${started.seq} · ${turnId}` : turnId;
  const origin = Date.parse((started || entries[0] || {}).at);
  entries.forEach((entry) => {
    const item = document.createElement("li");
    const when = document.createElement("span");
    when.className = "when";
    const ms = Date.parse(entry.at) - origin;
    when.textContent = Number.isNaN(ms) ? "?" : `+${ms} ms`;
    const head = document.createElement("span");
    head.className = "event";
    head.textContent = `${entry.service} · ${entry.event}`;
    const fields = document.createElement("div");
    fields.className = "fields";
    Object.entries(entry)
      .filter(([key, value]) => !ENVELOPE.has(key) && value !== null && value !== "")
      .forEach(([key, value]) => {
        const line = document.createElement("div");
        line.textContent = `${key}: ${short(value)}`;
        fields.append(line);
      });
    item.append(when, head, fields);
    list.append(item);
  });
}

function start(conversation) {
  if (chat.poller) chat.poller.abort();
  chat.conversation = conversation;
  chat.cursor = "0-0";
  chat.selectedTurn = null;
  chat.journal = [];
  chat.shownMessages = new Set();
  $("messages").replaceChildren();
  $("explain").replaceChildren();
  $("explain-turn").textContent = "";
  $("cid").textContent = conversation;
  history.replaceState(null, "", `#${encodeURIComponent(conversation)}`);
  chat.poller = new AbortController();
  poll(chat.poller);
}

// Without the admin token, the conversation is a web chat session's when the gateway offers
// them (ORQ_WEBCHAT_SECRET): a saved one for the same conversation, else a new one. Without
// sessions it is any id, as in local development.
async function begin(requested) {
  chat.session = null;
  if (!chat.token) {
    try {
      const offer = await api("GET", "/v1/webchat");
      if (offer.sessions) chat.session = await openSession(requested);
    } catch (error) {
      note(`sessão de chat indisponível: ${error.message}`);
    }
  }
  $("token-box").hidden = !scoped() && $("token-box").hidden;
  start(chat.session ? chat.session.conversation_id : requested || randomId("web-"));
}

async function openSession(requested) {
  const saved = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
  if (saved && (!requested || requested === saved.conversation_id)) return saved;
  const session = await api("POST", "/v1/webchat/sessions");
  localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return session;
}

function wire() {
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("message").value.trim();
    if (!text) return;
    $("message").value = "";
    send(text);
  });
  $("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("new").addEventListener("click", () => {
    localStorage.removeItem(SESSION_KEY);
    begin(chat.token ? randomId("web-") : "");
  });
  $("clock-set").addEventListener("click", () => {
    const value = $("clock").value;
    if (!value) return;
    chat.clock = { base: new Date(value), setAt: Date.now() };
    showClock();
  });
  $("clock-real").addEventListener("click", () => {
    chat.clock = { base: null, setAt: 0 };
    showClock();
  });
  $("token").value = chat.token;
  $("token").addEventListener("change", () => {
    chat.token = $("token").value.trim();
    localStorage.setItem(ADMIN_KEY, chat.token);
    begin(chat.conversation);
  });
  setInterval(showClock, 1000);
}

wire();
begin(decodeURIComponent(location.hash.slice(1)));
