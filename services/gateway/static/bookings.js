// The week's trial classes for staff: every class with its seats and who booked, and buttons
// to mark whether each person came. Plain browser JavaScript over the gateway's HTTP API v1
// (admin token, shared with the inbox page), no build step. Every text from the server is
// inserted as text (textContent), never as HTML. A mark is a command the trial service applies
// shortly after the 202: the page reloads the week until the booking shows it.
"use strict";

const TOKEN_KEY = "orquestra-inbox-token";
const STATUS_LABELS = { booked: "marcada", cancelled: "cancelada", attended: "veio", no_show: "faltou" };
const WEEKDAYS = ["domingo", "segunda", "terça", "quarta", "quinta", "sexta", "sábado"];
const APPLIED_TRIES = 20;

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const page = { token: sessionStorage.getItem(TOKEN_KEY) || "", monday: null, classes: [] };

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { "content-type": "application/json", authorization: "Bearer " + page.token },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = Array.isArray(data.detail) ? data.detail.map((d) => d.msg).join("; ") : data.detail;
    const error = new Error(detail ? String(detail) : `${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

// Dates are calendar days (YYYY-MM-DD), computed in UTC so no time zone shifts them.
function parseDay(iso) {
  const [y, m, d] = iso.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d));
}
const isoDay = (date) => date.toISOString().slice(0, 10);
const addDays = (date, days) => new Date(date.getTime() + days * 86400000);
const mondayOf = (date) => addDays(date, -((date.getUTCDay() + 6) % 7));
const shortDay = (date) => `${String(date.getUTCDate()).padStart(2, "0")}/${String(date.getUTCMonth() + 1).padStart(2, "0")}`;

function thisMonday() {
  const now = new Date();
  return mondayOf(new Date(Date.UTC(now.getFullYear(), now.getMonth(), now.getDate())));
}

function startMonday() {
  const asked = new URLSearchParams(location.search).get("week");
  return asked && /^\d{4}-\d{2}-\d{2}$/.test(asked) ? mondayOf(parseDay(asked)) : thisMonday();
}

// Login ---------------------------------------------------------------------------------------

async function login(event) {
  event.preventDefault();
  page.token = $("token").value.trim();
  try {
    await load();
  } catch (error) {
    $("login-error").textContent = error.status === 401 ? "Token inválido." : error.message;
    $("login-error").hidden = false;
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, page.token);
  show();
}

function show() {
  $("login").hidden = true;
  $("app").hidden = false;
}

// The week ------------------------------------------------------------------------------------

async function load() {
  const from = isoDay(page.monday);
  const to = isoDay(addDays(page.monday, 6));
  const data = await api("GET", `/v1/bookings?from=${from}&to=${to}`);
  page.classes = data.classes;
  render();
}

function render() {
  const sunday = addDays(page.monday, 6);
  $("week").textContent = `Semana de ${shortDay(page.monday)} a ${shortDay(sunday)}`;
  const classes = $("classes");
  classes.replaceChildren(...page.classes.map(renderClass));
  $("empty").hidden = page.classes.length > 0;
  const people = page.classes.flatMap((c) => c.bookings).filter((b) => b.status !== "cancelled");
  $("totals").textContent = `${people.length} ${people.length === 1 ? "pessoa" : "pessoas"} na semana`;
}

function renderClass(klass) {
  const card = document.createElement("article");
  card.className = "class";
  card.dataset.date = klass.date;
  card.dataset.time = klass.time;
  const header = document.createElement("header");
  const title = document.createElement("strong");
  const day = parseDay(klass.date);
  title.textContent = `${WEEKDAYS[day.getUTCDay()]} ${shortDay(day)} · ${klass.time}`;
  const seats = document.createElement("span");
  seats.className = "seats" + (klass.seats_left === 0 ? " full" : "");
  seats.textContent = klass.seats_left === 0
    ? `lotada (${klass.capacity} vagas)`
    : `${klass.seats_left} de ${klass.capacity} vagas livres`;
  header.append(title, seats);
  card.append(header);
  if (!klass.bookings.length) {
    const none = document.createElement("p");
    none.className = "none";
    none.textContent = "Ninguém marcado.";
    card.append(none);
    return card;
  }
  const list = document.createElement("ol");
  list.append(...klass.bookings.map(renderBooking));
  card.append(list);
  return card;
}

function renderBooking(booking) {
  const item = document.createElement("li");
  item.dataset.id = booking.booking_id;
  item.className = booking.status;
  const who = document.createElement("div");
  who.className = "who";
  const name = document.createElement("strong");
  name.textContent = booking.student_name || "(dados apagados)";
  const details = document.createElement("small");
  details.textContent = [
    booking.age != null ? `${booking.age} anos` : "",
    booking.level || "",
    booking.contact_name || "",
    booking.booking_id,
  ].filter(Boolean).join(" · ");
  who.append(name, details);
  const status = document.createElement("span");
  status.className = `status ${booking.status}`;
  status.textContent = STATUS_LABELS[booking.status] || booking.status;
  item.append(who, status);
  if (booking.status !== "cancelled") {
    item.append(
      markButton(booking, "attended", "Veio", "attended"),
      markButton(booking, "no_show", "Faltou", "no-show"),
    );
  }
  return item;
}

function markButton(booking, status, label, css) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = css;
  button.textContent = label;
  button.disabled = booking.status === status;
  button.addEventListener("click", () => mark(booking.booking_id, status));
  return button;
}

function findBooking(id) {
  for (const klass of page.classes) {
    const found = klass.bookings.find((b) => b.booking_id === id);
    if (found) return found;
  }
  return null;
}

async function mark(id, status) {
  note("");
  document.querySelectorAll(`li[data-id="${CSS.escape(id)}"] button`).forEach((b) => { b.disabled = true; });
  try {
    await api("POST", `/v1/bookings/${encodeURIComponent(id)}/attendance`, { status });
    for (let i = 0; i < APPLIED_TRIES; i += 1) {
      await load();
      if (findBooking(id)?.status === status) return;
      await sleep(250);
    }
    note("A marcação foi enviada, mas ainda não apareceu. Atualize em instantes.");
  } catch (error) {
    note(`Não foi possível marcar: ${error.message}`);
    await load().catch(() => {});
  }
}

function note(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

async function go(monday) {
  page.monday = monday;
  const url = new URL(location.href);
  url.searchParams.set("week", isoDay(monday));
  history.replaceState(null, "", url);
  try {
    await load();
  } catch (error) {
    note(`Não foi possível carregar a semana: ${error.message}`);
  }
}

async function start() {
  page.monday = startMonday();
  $("login").addEventListener("submit", login);
  $("prev").addEventListener("click", () => go(addDays(page.monday, -7)));
  $("next").addEventListener("click", () => go(addDays(page.monday, 7)));
  $("today").addEventListener("click", () => go(thisMonday()));
  try {
    await load();
    show();
  } catch (error) {
    if (error.status !== 401) note(error.message);
    $("login").hidden = false;
  }
}

start();
