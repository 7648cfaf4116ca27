// dodgem gui: the page's script. No framework, no build step.
//
// The server owns the game and the engine; the page polls GET /api/state,
// draws what it gets, and POSTs what the person does. Every move is judged
// on the server too: the checks here only explain a refusal sooner.
"use strict";

const POLL_MS = 200;
const FILES = "abcdefghijklmnopqrstuvwxyz";

const $ = (id) => document.getElementById(id);

let state = null;        // the last state from the server
let selected = null;     // the square of the selected car, if any
let flipped = false;
let settingsLoaded = false;
let busy = false;        // a POST is on its way

const capital = (word) => word.charAt(0).toUpperCase() + word.slice(1);
const squareName = (file, rank) => FILES[file] + (rank + 1);
const fileOf = (square) => FILES.indexOf(square[0]);
const rankOf = (square) => parseInt(square.slice(1), 10) - 1;

// --- talking to the server -------------------------------------------------

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  let data = null;
  try {
    data = await response.json();
  } catch (_) {
    throw new Error(`the server answered ${response.status} without JSON`);
  }
  if (!response.ok) {
    throw new Error(data && data.error ? data.error : `error ${response.status}`);
  }
  return data;
}

async function post(path, body) {
  busy = true;
  try {
    show(await api(path, body));
    return true;
  } catch (error) {
    refuse(capital(error.message));
    return false;
  } finally {
    busy = false;
  }
}

async function poll() {
  try {
    const fresh = await api("/api/state");
    $("fault").classList.remove("offline");
    if (!busy) show(fresh);
  } catch (error) {
    showOffline(error);
  }
  setTimeout(poll, POLL_MS);
}

function showOffline(error) {
  $("fault").hidden = false;
  $("fault").classList.add("offline");
  $("fault-text").textContent = `The server is not answering (${error.message}). Is dodgem gui still running?`;
  $("restart").hidden = true;
}

// --- drawing ---------------------------------------------------------------

function show(fresh) {
  const changed = !state || fresh.version !== state.version;
  state = fresh;
  if (!changed) return;
  if (selected && !movesFrom(selected).length) selected = null;
  if (state.turn !== "human") selected = null;
  render();
}

function render() {
  const s = state;
  renderBoard(s);
  renderStatus(s);
  renderAnalysis(s);
  renderMoves(s);
  renderSettings(s);
  const input = $("position");
  if (document.activeElement !== input) input.value = s.position;
  $("undo").disabled = s.moves.length === 0;
  $("engine-name").textContent = s.engine.name ? `engine: ${s.engine.name}` : `engine: ${s.engine.command}`;
}

function movesFrom(square) {
  if (!state) return [];
  return state.legal_moves.filter((mv) => mv.slice(0, 2) === square);
}

// The board is an (n + 2) x (n + 2) grid: rank labels and file labels on
// one side, the exits (the squares just past the edge, named as moves name
// them) on the other. Flipping turns it through 180 degrees.
function renderBoard(s) {
  const n = s.size;
  const board = $("board");
  const label = "0.45fr";
  const exit = "0.7fr";
  const tracks = flipped ? [exit, `repeat(${n}, 1fr)`, label] : [label, `repeat(${n}, 1fr)`, exit];
  board.style.gridTemplateColumns = tracks.join(" ");
  board.style.gridTemplateRows = (flipped ? [label, `repeat(${n}, 1fr)`, exit] : [exit, `repeat(${n}, 1fr)`, label]).join(" ");
  board.dataset.turn = s.turn;
  board.dataset.side = s.side_to_move;
  board.dataset.legal = s.legal_moves.join(" ");
  board.dataset.version = String(s.version);
  board.dataset.selected = selected || "";

  const cars = new Map();
  s.black.forEach((sq) => cars.set(sq, "black"));
  s.white.forEach((sq) => cars.set(sq, "white"));
  const targets = new Set(selected ? movesFrom(selected).map((mv) => mv.slice(2)) : []);
  const movable = new Set(s.turn === "human" ? s.legal_moves.map((mv) => mv.slice(0, 2)) : []);
  const last = s.moves.length ? s.moves[s.moves.length - 1] : null;
  const lastSquares = last ? [last.slice(0, 2), last.slice(2)] : [];

  const cells = [];
  const place = (el, file, rank) => {
    // file and rank run from -1 (labels) to n (exits).
    el.style.gridColumn = String(flipped ? n - file + 1 : file + 2);
    el.style.gridRow = String(flipped ? rank + 2 : n - rank + 1);
    cells.push(el);
  };
  for (let rank = 0; rank < n; rank++) {
    for (let file = 0; file < n; file++) {
      const name = squareName(file, rank);
      const el = document.createElement("button");
      el.type = "button";
      el.className = "sq " + ((file + rank) % 2 === 0 ? "dark" : "light");
      el.dataset.square = name;
      const car = cars.get(name);
      el.setAttribute("aria-label", car ? `${name}, ${car} car` : name);
      if (car) {
        const span = document.createElement("span");
        span.className = "car " + car;
        span.textContent = carArrow(car);
        el.appendChild(span);
      }
      if (movable.has(name)) el.classList.add("movable");
      if (name === selected) el.classList.add("selected");
      if (targets.has(name)) el.classList.add("target");
      place(el, file, rank);
    }
    const rankLabel = document.createElement("div");
    rankLabel.className = "label";
    rankLabel.textContent = String(rank + 1);
    place(rankLabel, -1, rank);
    // Black leaves the board east of the last file.
    place(exitCell(squareName(n, rank), "black", targets), n, rank);
  }
  for (let file = 0; file < n; file++) {
    const fileLabel = document.createElement("div");
    fileLabel.className = "label";
    fileLabel.textContent = FILES[file];
    place(fileLabel, file, -1);
    // White leaves the board north of the last rank.
    place(exitCell(squareName(file, n), "white", targets), file, n);
  }
  for (const el of cells) {
    if (lastSquares.includes(el.dataset.square)) el.classList.add("last");
  }
  board.replaceChildren(...cells);
}

function carArrow(color) {
  if (color === "black") return flipped ? "◀" : "▶";
  return flipped ? "▼" : "▲";
}

function exitCell(name, color, targets) {
  const el = document.createElement("button");
  el.type = "button";
  el.className = "exit for-" + color;
  el.dataset.square = name;
  el.setAttribute("aria-label", `exit ${name} (off the board for ${capital(color)})`);
  el.textContent = color === "black" ? (flipped ? "←" : "→") : (flipped ? "↓" : "↑");
  if (targets.has(name)) el.classList.add("target");
  return el;
}

function sideName(color) {
  return capital(color);
}

function enginePlays(color) {
  const side = state.engine_side;
  return side === "both" || side === color;
}

function renderStatus(s) {
  const mover = sideName(s.side_to_move);
  const engine = s.engine;
  let text;
  if (s.turn === "over") {
    text = "Game over.";
  } else if (s.turn === "engine") {
    if (engine.status === "dead") text = `${mover} to move: the engine's turn, but it is not running.`;
    else if (engine.status === "starting") text = `${mover} to move: starting the engine…`;
    else text = `${mover} (engine) is thinking…`;
  } else {
    text = `${mover} to move: your turn. Click a car, then where it goes.`;
  }
  $("status").textContent = text;

  const banner = $("banner");
  if (s.result) {
    const winner = s.result.winner;
    let tone = "";
    let who = "";
    if (winner && (s.engine_side === "black" || s.engine_side === "white")) {
      const engineWon = winner === s.engine_side;
      who = engineWon ? "the engine" : "you!";
      tone = engineWon ? "loss" : "win";
    }
    banner.className = "banner " + tone;
    $("banner-title").textContent = winner ? `${sideName(winner)} wins` : "Draw";
    $("banner-who").textContent = who;
    $("banner-who").hidden = !who;
    $("banner-text").textContent = resultReason(s.result);
    banner.dataset.reason = s.result.reason;
    banner.hidden = false;
  } else {
    banner.hidden = true;
  }

  const fault = $("fault");
  if (!fault.classList.contains("offline")) {
    fault.hidden = engine.status !== "dead";
    $("restart").hidden = false;
    if (engine.status === "dead") {
      $("fault-text").textContent = `The engine stopped: ${engine.message}.`;
    }
  }
  $("thinking").hidden = engine.status !== "thinking";
  // The engine's latest `info string` (a table loaded, an option refused).
  const says = $("engine-says");
  says.hidden = !engine.last_info_string;
  says.textContent = engine.last_info_string ? `Engine says: ${engine.last_info_string}` : "";
}

function resultReason(result) {
  // The server's sentence, after "<Side> wins: ".
  const text = result.text;
  const colon = text.indexOf(": ");
  const reason = colon >= 0 ? text.slice(colon + 2) : text;
  return capital(reason) + ".";
}

function formatScore(analysis) {
  const score = analysis.score;
  if (!score) return "–";
  const side = sideName(analysis.side);
  if (score.kind === "mate") {
    const moves = Math.abs(score.value);
    const plural = moves === 1 ? "move" : "moves";
    return score.value > 0
      ? `${side} wins in ${moves} ${plural} of its own`
      : `${side} loses in ${moves} ${plural} of its own`;
  }
  const value = score.value > 0 ? `+${score.value}` : String(score.value);
  return `${value} for ${side} (a car's move ≈ 30)`;
}

function renderAnalysis(s) {
  const a = s.analysis;
  const number = (x) => (x === null || x === undefined ? "–" : x.toLocaleString("en"));
  if (!a) {
    for (const id of ["a-depth", "a-score", "a-nodes", "a-nps", "a-pv"]) $(id).textContent = "–";
    return;
  }
  $("a-depth").textContent = a.depth === null ? "–" : `${a.depth}${a.seldepth ? ` / ${a.seldepth}` : ""}`;
  $("a-score").textContent = formatScore(a);
  $("a-nodes").textContent = number(a.nodes);
  const nps = a.nps === null ? "–" : `${number(a.nps)} nodes/s`;
  $("a-nps").textContent = a.time === null ? nps : `${nps}, ${number(a.time)} ms`;
  $("a-pv").textContent = a.pv.length ? a.pv.join(" ") : "–";
}

function renderMoves(s) {
  const list = $("moves");
  const items = [];
  const blackFirst = s.start.endsWith("b");
  const moves = blackFirst ? s.moves.slice() : ["…"].concat(s.moves);
  for (let i = 0; i < moves.length; i += 2) {
    const li = document.createElement("li");
    for (const mv of moves.slice(i, i + 2)) {
      const span = document.createElement("span");
      span.textContent = mv;
      li.appendChild(span);
    }
    items.push(li);
  }
  if (items.length) items[items.length - 1].classList.add("current");
  list.replaceChildren(...items);
  list.scrollTop = list.scrollHeight;
}

function ensureOption(select, value, text) {
  if (![...select.options].some((o) => o.value === value)) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = text;
    select.appendChild(option);
  }
}

function renderSettings(s) {
  const movetime = String(s.movetime);
  ensureOption($("movetime"), movetime, `${s.movetime / 1000} s`);
  $("movetime").value = movetime;
  $("engine-side").value = s.engine_side;
  if (!settingsLoaded) {
    $("size").value = String(s.size);
    $("rules").value = s.rules;
    settingsLoaded = true;
  }
}

// --- what the person does --------------------------------------------------

let noticeTimer = null;

function notice(text, refused) {
  const el = $("notice");
  el.textContent = text;
  el.classList.toggle("refused", !!refused);
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => {
    el.textContent = "";
    el.classList.remove("refused");
  }, 4000);
}

function refuse(text, square) {
  notice(text, true);
  const board = $("board");
  board.classList.remove("shake");
  void board.offsetWidth; // restart the animation
  board.classList.add("shake");
  if (square) {
    const cell = board.querySelector(`[data-square="${square}"]`);
    if (cell) cell.classList.add("refused");
  }
}

function whyIllegal(from, to, color) {
  const df = fileOf(to) - fileOf(from);
  const dr = rankOf(to) - rankOf(from);
  const allowed = color === "black" ? "east, north or south" : "north, west or east";
  if (Math.abs(df) + Math.abs(dr) !== 1) {
    return `${from} → ${to} is not allowed: a car moves one square ${allowed}.`;
  }
  const backwards = color === "black" ? df < 0 : dr < 0;
  if (backwards) return `${from} → ${to} is not allowed: ${capital(color)} never moves backwards.`;
  const n = state.size;
  if (fileOf(to) >= n || rankOf(to) >= n) {
    return `${from} → ${to} is not allowed: only ${color === "black" ? "Black leaves east" : "White leaves north"}, from the last ${color === "black" ? "file" : "rank"}.`;
  }
  return `${from} → ${to} is not allowed: ${to} is taken.`;
}

function onBoardClick(event) {
  const cell = event.target.closest("[data-square]");
  if (!cell || !state || busy) return;
  const square = cell.dataset.square;
  const s = state;
  const mover = s.side_to_move;
  if (s.turn === "over") {
    refuse("The game is over. Start a new game, or undo.", square);
    return;
  }
  if (s.turn === "engine") {
    const why = s.engine.status === "dead"
      ? "It is the engine's turn, but the engine is not running: restart it, or set it to play neither side."
      : `Please wait: the engine is playing ${sideName(mover)}.`;
    refuse(why, square);
    return;
  }
  const own = s[mover].includes(square);
  if (own) {
    if (selected === square) {
      selected = null;
    } else if (movesFrom(square).length === 0) {
      refuse(`The car on ${square} has no legal move.`, square);
      return;
    } else {
      selected = square;
      notice("");
    }
    render();
    return;
  }
  if (!selected) {
    const other = mover === "black" ? "white" : "black";
    refuse(s[other].includes(square)
      ? `It is ${sideName(mover)}'s turn: pick one of ${sideName(mover)}'s cars.`
      : `Pick one of ${sideName(mover)}'s cars first.`, square);
    return;
  }
  const mv = selected + square;
  if (!s.legal_moves.includes(mv)) {
    refuse(whyIllegal(selected, square, mover), square);
    return;
  }
  selected = null;
  post("/api/move", { move: mv });
}

function newGame(event) {
  event.preventDefault();
  selected = null;
  settingsLoaded = false;
  post("/api/new", {
    size: parseInt($("size").value, 10),
    rules: $("rules").value,
    engine: $("engine-side").value,
    movetime: parseInt($("movetime").value, 10),
  }).then((ok) => { if (ok) notice("New game."); });
}

async function copyPosition() {
  const text = state ? state.position : $("position").value;
  try {
    await navigator.clipboard.writeText(text);
    notice(`Copied ${text}`);
  } catch (_) {
    const input = $("position");
    input.value = text;
    input.select();
    notice("Selected: press Ctrl+C (or ⌘C) to copy.");
  }
}

function setPosition(event) {
  event.preventDefault();
  selected = null;
  const text = $("position").value.trim();
  post("/api/position", { position: text }).then((ok) => {
    if (ok) {
      $("position").blur();
      notice(`Playing on from ${text}.`);
    }
  });
}

function init() {
  $("board").addEventListener("click", onBoardClick);
  $("undo").addEventListener("click", () => { selected = null; post("/api/undo", {}); });
  $("flip").addEventListener("click", () => { flipped = !flipped; if (state) render(); });
  $("new-game").addEventListener("submit", newGame);
  $("new-same").addEventListener("click", () => $("new").click());
  $("engine-side").addEventListener("change", () => post("/api/config", { engine: $("engine-side").value }));
  $("movetime").addEventListener("change", () => post("/api/config", { movetime: parseInt($("movetime").value, 10) }));
  $("restart").addEventListener("click", () => post("/api/restart", {}).then((ok) => { if (ok) notice("Engine restarted."); }));
  $("copy").addEventListener("click", copyPosition);
  $("position-form").addEventListener("submit", setPosition);
  poll();
}

init();
