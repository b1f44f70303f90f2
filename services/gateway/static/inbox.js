// The staff inbox: conversations waiting for a person, one conversation's history with the
// bot's summary, a box to answer as staff, and buttons to take it or hand it back to the bot.
// Plain browser JavaScript over the gateway's HTTP API v1 (admin token), no build step. Every
// text from the server is inserted as text (textContent), never as HTML.
"use strict";

const POLL_WAIT_S = 25;
const LIST_EVERY_MS = 3000;
const OWNER_LABELS = { pending_human: "aguardando", human: "com atendente", bot: "com o bot" };

const $ = (id) => document.getElementById(id);

const inbox = {
  token: sessionStorage.getItem("orquestra-inbox-token") || "",
  agent: sessionStorage.getItem("orquestra-inbox-agent") || "",
  owner: "pending_human",
  query: "",
  selected: null,
  latest: null,
  poller: null,
  rows: new Map(),
  shown: new Set(),
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function api(method, path, body, signal) {
  const response = await fetch(path, {
    method,
    headers: { "content-type": "application/json", authorization: "Bearer " + inbox.token },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(data.detail ? String(data.detail) : `${response.status}`);
    error.status = response.status;
    error.reason = data.reason;
    throw error;
  }
  return data;
}

const conversationPath = (id, suffix = "") => `/v1/conversations/${encodeURIComponent(id)}${suffix}`;

function minutesSince(iso) {
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return null;
  return Math.max(0, Math.round((Date.now() - then) / 60000));
}

function timeText(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString("pt-BR", { day: "2-digit", month: "2-digit", hour: "2-digit", minute: "2-digit" });
}

// Login ---------------------------------------------------------------------------------------

async function login(event) {
  event.preventDefault();
  inbox.token = $("token").value.trim();
  inbox.agent = $("agent").value.trim();
  try {
    await api("GET", "/v1/conversations?limit=1");
  } catch (error) {
    $("login-error").textContent = error.status === 401 ? "Token inválido." : `Erro: ${error.message}`;
    $("login-error").hidden = false;
    return;
  }
  sessionStorage.setItem("orquestra-inbox-token", inbox.token);
  sessionStorage.setItem("orquestra-inbox-agent", inbox.agent);
  start();
}

function start() {
  $("login").hidden = true;
  $("app").hidden = false;
  $("me").textContent = inbox.agent;
  refreshList();
  setInterval(refreshList, LIST_EVERY_MS);
}

// The list ------------------------------------------------------------------------------------

async function refreshList() {
  const params = new URLSearchParams({ limit: "100" });
  if (inbox.owner) params.set("owner", inbox.owner);
  if (inbox.query) params.set("q", inbox.query);
  let data;
  try {
    data = await api("GET", `/v1/conversations?${params}`);
  } catch (error) {
    console.warn("list failed", error.message);
    return;
  }
  const list = $("conversations");
  list.replaceChildren();
  inbox.rows = new Map(data.conversations.map((row) => [row.conversation_id, row]));
  for (const row of data.conversations) list.append(listItem(row));
  $("empty").hidden = data.conversations.length > 0;
  if (inbox.selected && inbox.rows.has(inbox.selected)) showHeader(inbox.rows.get(inbox.selected));
  else if (inbox.selected) refreshOwner().catch((error) => console.warn("owner", error.message));
}

function listItem(row) {
  const item = document.createElement("li");
  item.dataset.id = row.conversation_id;
  if (row.conversation_id === inbox.selected) item.classList.add("selected");
  const top = document.createElement("div");
  top.className = "top";
  const name = document.createElement("strong");
  name.textContent = row.contact_name || row.conversation_id;
  const when = document.createElement("small");
  when.textContent = row.last_message_at ? timeText(row.last_message_at) : "";
  top.append(name, when);
  const last = document.createElement("span");
  last.className = "last";
  last.textContent = row.last_text || "";
  item.append(top, last);
  if (row.owner === "pending_human" && row.waiting_since) {
    const waiting = document.createElement("span");
    waiting.className = "waiting";
    waiting.textContent = `aguardando há ${minutesSince(row.waiting_since)} min`;
    item.append(waiting);
  } else if (row.owner === "human" && row.agent) {
    const agent = document.createElement("span");
    agent.className = "last";
    agent.textContent = `com ${row.agent}`;
    item.append(agent);
  }
  item.addEventListener("click", () => open(row.conversation_id));
  return item;
}

// One conversation ----------------------------------------------------------------------------

function showHeader(row) {
  $("contact").textContent = row.contact_name || row.conversation_id;
  $("cid").textContent = `${row.conversation_id} · ${row.channel || ""}`;
  $("owner").textContent = OWNER_LABELS[row.owner] + (row.owner === "human" && row.agent ? ` (${row.agent})` : "");
  $("summary").textContent = row.summary;
  $("take").disabled = row.owner === "human" && row.agent === inbox.agent;
  $("back").disabled = row.owner === "bot";
}

async function open(id) {
  if (inbox.poller) inbox.poller.abort();
  inbox.selected = id;
  inbox.shown = new Set();
  inbox.latest = null;
  $("messages").replaceChildren();
  $("notice").hidden = true;
  for (const item of $("conversations").children) item.classList.toggle("selected", item.dataset.id === id);
  for (const control of [$("text"), $("send")]) control.disabled = false;
  const row = inbox.rows.get(id);
  if (row) showHeader(row);
  const page = await api("GET", conversationPath(id, "/messages?limit=100"));
  page.messages.forEach(addMessage);
  follow(id);
}

function addMessage(message) {
  if (inbox.shown.has(message.id)) return;
  inbox.shown.add(message.id);
  inbox.latest = message.id;
  const item = document.createElement("li");
  item.className = `msg ${message.author}`;
  item.dataset.id = message.id;
  const who = document.createElement("small");
  const label = message.author === "customer" ? "cliente" : message.author === "bot" ? "bot" : message.agent;
  who.textContent = `${label} · ${timeText(message.at)}`;
  item.append(who, document.createTextNode(message.text));
  $("messages").append(item);
  $("messages").scrollTop = $("messages").scrollHeight;
}

// New messages of the open conversation, as they are written (long-poll, no reload).
async function follow(id) {
  const controller = new AbortController();
  inbox.poller = controller;
  while (!controller.signal.aborted && inbox.selected === id) {
    const after = inbox.latest || "0-0";
    try {
      const page = await api(
        "GET", conversationPath(id, `/messages?after=${after}&wait=${POLL_WAIT_S}`), undefined, controller.signal,
      );
      page.messages.forEach(addMessage);
    } catch (error) {
      if (controller.signal.aborted) return;
      await sleep(1000);
    }
  }
}

async function sendMessage(event) {
  event.preventDefault();
  const text = $("text").value.trim();
  if (!text || !inbox.selected) return;
  const id = inbox.selected;
  const body = { agent: inbox.agent, text, client_message_id: crypto.randomUUID() };
  try {
    await api("POST", conversationPath(id, "/agent-messages"), body);
    $("text").value = "";
    $("notice").hidden = true;
    await refreshOwner();
  } catch (error) {
    $("notice").textContent =
      error.reason === "owned_by_other" ? "Outra pessoa está atendendo: clique em Assumir."
      : error.reason === "window_closed" ? "Fora da janela de 24 horas do WhatsApp: só um modelo aprovado pode ser enviado."
      : `Não foi possível enviar: ${error.message}`;
    $("notice").hidden = false;
  }
  refreshList();
}

async function handoff(owner) {
  if (!inbox.selected) return;
  await api("POST", conversationPath(inbox.selected, "/handoff"), { owner, agent: inbox.agent });
  await refreshList();
  await refreshOwner();
}

// Who owns the open conversation, from its own state (it may have left the filtered list).
async function refreshOwner() {
  if (!inbox.selected) return;
  const state = await api("GET", conversationPath(inbox.selected));
  const meta = state.meta || {};
  const owner = meta.handoff || "bot";
  const agent = owner === "human" ? meta.handoff_by : null;
  $("owner").textContent = OWNER_LABELS[owner] + (agent ? ` (${agent})` : "");
  $("take").disabled = owner === "human" && agent === inbox.agent;
  $("back").disabled = owner === "bot";
}

// Wiring --------------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  $("login").addEventListener("submit", login);
  $("composer").addEventListener("submit", sendMessage);
  $("text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) sendMessage(event);
  });
  $("take").addEventListener("click", () => handoff("human"));
  $("back").addEventListener("click", () => handoff("bot"));
  for (const button of document.querySelectorAll(".filters button")) {
    button.addEventListener("click", () => {
      inbox.owner = button.dataset.owner;
      for (const other of document.querySelectorAll(".filters button")) other.classList.toggle("active", other === button);
      refreshList();
    });
  }
  let typing = null;
  $("search").addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      inbox.query = $("search").value.trim();
      refreshList();
    }, 250);
  });
  if (inbox.token && inbox.agent) start();
  else $("login").hidden = false;
});
