// ironsight console: progressive enhancement only. Every page works without this file
// except "select this page", "compare selected" and live refresh.
"use strict";

function selectAll() {
  const all = document.getElementById("select-all");
  if (!all) return;
  all.addEventListener("change", () => {
    for (const box of document.querySelectorAll("input.pick")) box.checked = all.checked;
  });
}

function columnChoice() {
  const hidden = document.getElementById("f-columns");
  if (!hidden) return;
  for (const box of document.querySelectorAll("input.column-choice")) {
    box.addEventListener("change", () => {
      const chosen = [...document.querySelectorAll("input.column-choice:checked")]
        .map((b) => b.value);
      hidden.value = chosen.join(",");
    });
  }
}

function compareButton() {
  const button = document.getElementById("compare");
  if (!button) return;
  button.addEventListener("click", () => {
    const picked = [...document.querySelectorAll("input.pick:checked")].map((b) => b.value);
    const query = picked.map((u) => "node=" + encodeURIComponent(u)).join("&");
    window.location.href = button.dataset.href + "?" + query;
  });
}

const LIVE_EVERY_MS = 2000;

async function poll(url) {
  const answer = await fetch(url, {credentials: "same-origin", cache: "no-store"});
  if (!answer.ok) throw new Error("HTTP " + answer.status);
  return answer;
}

function liveNode() {
  const head = document.getElementById("live");
  if (!head || !head.dataset.live) return;
  const show = (id, text) => {
    const el = document.getElementById(id);
    if (el) el.textContent = text;
  };
  const tick = async () => {
    try {
      const now = await (await poll(head.dataset.live)).json();
      show("live-state", now.provision_state);
      show("live-power", now.power_state || "power unknown");
      const running = now.result === "running";
      show("live-step", running ? "inspection #" + now.attempt + ": " + now.step + " (running)"
        : now.attempt ? "inspection #" + now.attempt + ": " + now.result +
          (now.failure_code ? " (" + now.failure_code + ")" : "") : "");
      const error = document.getElementById("live-error");
      if (error) {
        error.textContent = now.last_error;
        error.hidden = !now.last_error;
      }
    } catch (e) {
      show("live-step", "(no update: " + e.message + ")");
    }
  };
  tick();
  setInterval(tick, LIVE_EVERY_MS);
}

function liveBoard() {
  const board = document.getElementById("board");
  if (!board || !board.dataset.refresh) return;
  setInterval(async () => {
    try {
      board.innerHTML = await (await poll(board.dataset.refresh)).text();
    } catch (e) {
      // the next tick tries again; the page keeps what it showed
    }
  }, LIVE_EVERY_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  selectAll();
  columnChoice();
  compareButton();
  liveNode();
  liveBoard();
});
