// dodgem gui: the page's script. No framework, no build step.
//
// The server owns the game and the engine; the page polls GET /api/state,
// draws what it gets, and POSTs what the person does. Every move is judged
// on the server too: the checks here only explain a refusal sooner. The
// board shows `state.view`: the live position, or the one under review.
"use strict";

const POLL_MS = 200;
const FILES = "abcdefghijklmnopqrstuvwxyz";
const SVG = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);

let state = null;        // the last state from the server
let selected = null;     // the square of the selected car, if any
let flipped = false;
// The board size and rules selectors follow the game's, unless the person
// has chosen other values for the next game.
let sizeChosen = false;
let rulesChosen = false;
let busy = false;        // a POST is on its way

const capital = (word) => word.charAt(0).toUpperCase() + word.slice(1);
const squareName = (file, rank) => FILES[file] + (rank + 1);
const fileOf = (square) => FILES.indexOf(square[0]);
const rankOf = (square) => parseInt(square.slice(1), 10) - 1;
const other = (color) => (color === "black" ? "white" : "black");

function svg(name, attributes, text) {
  const el = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes || {})) el.setAttribute(key, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}

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

async function post(path, body, onError) {
  busy = true;
  try {
    show(await api(path, body));
    return true;
  } catch (error) {
    if (onError) onError(capital(error.message));
    else refuse(capital(error.message));
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
  // An answer older than the state on show (a poll sent before a POST and
  // answered after it) must not undo what the POST did.
  if (state && fresh.server === state.server && fresh.version < state.version) return;
  const changed = !state || fresh.version !== state.version || fresh.server !== state.server;
  state = fresh;
  if (!changed) return;
  if (selected && !movesFrom(selected).length) selected = null;
  if (!canPlay()) selected = null;
  render();
}

/// Whether the person may move on the board now (the live game, their turn).
function canPlay() {
  return state && state.review === null && state.turn === "human";
}

function render() {
  const s = state;
  renderBoard(s);
  renderTally(s);
  renderStatus(s);
  renderReview(s);
  renderAnalysis(s);
  renderHints(s);
  renderMoves(s);
  renderGraph(s);
  renderSettings(s);
  renderTree();
  const input = $("position");
  if (document.activeElement !== input) input.value = s.view.position;
  $("undo").disabled = s.moves.length === 0;
  $("best").disabled = !!s.view.result || s.engine.status === "dead";
  $("engine-name").textContent = s.engine.name ? `engine: ${s.engine.name}` : `engine: ${s.engine.command}`;
}

function movesFrom(square) {
  if (!state) return [];
  return state.view.legal_moves.filter((mv) => mv.slice(0, 2) === square);
}

/// The hint for move `mv` of the position on show, if hints are on.
function hintFor(mv) {
  const hints = state && state.view.hints;
  if (!hints) return null;
  return hints.moves.find((h) => h.move === mv) || null;
}

/// A colour class for a hint: exact values (val-*), or the engine's
/// estimate relative to its best move (est-*).
function hintClass(hint) {
  if (!hint) return "";
  if (hint.value) return `val-${hint.value}`;
  if (!hint.score || !hint.rank) return "";
  if (hint.rank === 1) return "est-best";
  const best = state.view.hints.moves.find((h) => h.rank === 1);
  if (!best || !best.score || best.score.kind !== "cp" || hint.score.kind !== "cp") return "est-dubious";
  const behind = best.score.value - hint.score.value;
  if (behind <= 15) return "est-good";
  if (behind <= 60) return "est-dubious";
  return "est-bad";
}

/// A short label for a hint on the board: W19 / D / L18, or a score.
function hintLabel(hint) {
  if (!hint) return "";
  if (hint.value && hint.plies !== null) return `${hint.value[0].toUpperCase()}${hint.plies}`;
  if (hint.value) return hint.value[0].toUpperCase();
  if (hint.score && hint.score.kind === "cp") return (hint.score.value > 0 ? "+" : "") + hint.score.value;
  return "";
}

// The board is an (n + 2) x (n + 2) grid: rank labels and file labels on
// one side, the exits (the squares just past the edge, named as moves name
// them) on the other. Flipping turns it through 180 degrees.
function renderBoard(s) {
  const v = s.view;
  const n = s.size;
  const board = $("board");
  const label = "0.45fr";
  const exit = "0.7fr";
  const tracks = flipped ? [exit, `repeat(${n}, 1fr)`, label] : [label, `repeat(${n}, 1fr)`, exit];
  board.style.gridTemplateColumns = tracks.join(" ");
  board.style.gridTemplateRows = (flipped ? [label, `repeat(${n}, 1fr)`, exit] : [exit, `repeat(${n}, 1fr)`, label]).join(" ");
  board.dataset.turn = s.turn;
  board.dataset.side = v.side_to_move;
  board.dataset.legal = v.legal_moves.join(" ");
  board.dataset.version = String(s.version);
  board.dataset.selected = selected || "";
  board.dataset.ply = String(v.ply);

  const cars = new Map();
  v.black.forEach((sq) => cars.set(sq, "black"));
  v.white.forEach((sq) => cars.set(sq, "white"));
  const targets = new Map((selected ? movesFrom(selected) : []).map((mv) => [mv.slice(2), mv]));
  const movable = new Set(canPlay() ? v.legal_moves.map((mv) => mv.slice(0, 2)) : []);
  const last = v.last_move;

  const cells = [];
  const place = (el, file, rank) => {
    // file and rank run from -1 (labels) to n (exits).
    el.style.gridColumn = String(flipped ? n - file + 1 : file + 2);
    el.style.gridRow = String(flipped ? rank + 2 : n - rank + 1);
    cells.push(el);
  };
  const markTarget = (el, name) => {
    const mv = targets.get(name);
    if (!mv) return;
    el.classList.add("target");
    const hint = hintFor(mv);
    const cls = hintClass(hint);
    if (cls) el.classList.add(cls);
    const text = hintLabel(hint);
    if (text) {
      const span = document.createElement("span");
      span.className = "hint-label";
      span.textContent = text;
      el.appendChild(span);
    }
    if (hint) el.title = hint.text;
  };
  for (let rank = 0; rank < n; rank++) {
    for (let file = 0; file < n; file++) {
      const name = squareName(file, rank);
      const el = document.createElement("button");
      el.type = "button";
      el.className = "sq";
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
      markTarget(el, name);
      place(el, file, rank);
    }
    const rankLabel = document.createElement("div");
    rankLabel.className = "label";
    rankLabel.textContent = String(rank + 1);
    place(rankLabel, -1, rank);
    // Black leaves the board east of the last file.
    const exitEast = exitCell(squareName(n, rank), "black");
    markTarget(exitEast, exitEast.dataset.square);
    place(exitEast, n, rank);
  }
  for (let file = 0; file < n; file++) {
    const fileLabel = document.createElement("div");
    fileLabel.className = "label";
    fileLabel.textContent = FILES[file];
    place(fileLabel, file, -1);
    // White leaves the board north of the last rank.
    const exitNorth = exitCell(squareName(file, n), "white");
    markTarget(exitNorth, exitNorth.dataset.square);
    place(exitNorth, file, n);
  }
  if (last) {
    for (const el of cells) {
      if (el.dataset.square === last.slice(0, 2)) el.classList.add("last-from");
      if (el.dataset.square === last.slice(2)) el.classList.add("last-to");
    }
  }
  board.replaceChildren(...cells);
  // Arrows need the cells laid out.
  requestAnimationFrame(renderArrows);
}

function carArrow(color) {
  if (color === "black") return flipped ? "◀" : "▶";
  return flipped ? "▼" : "▲";
}

function exitCell(name, color) {
  const el = document.createElement("button");
  el.type = "button";
  el.className = "exit for-" + color;
  el.dataset.square = name;
  el.setAttribute("aria-label", `exit ${name} (off the board for ${capital(color)})`);
  el.textContent = color === "black" ? (flipped ? "←" : "→") : (flipped ? "↓" : "↑");
  return el;
}

/// Arrows over the board: every move coloured by its value (hints, "every
/// move"), and the engine's best move when asked for.
function renderArrows() {
  const layer = $("arrows");
  layer.replaceChildren();
  if (!state) return;
  const board = $("board");
  const box = board.getBoundingClientRect();
  layer.setAttribute("viewBox", `0 0 ${box.width} ${box.height}`);
  const centre = (square) => {
    const cell = board.querySelector(`[data-square="${square}"]`);
    if (!cell) return null;
    const r = cell.getBoundingClientRect();
    return [r.left - box.left + r.width / 2, r.top - box.top + r.height / 2, r.width];
  };
  const defs = svg("defs");
  const colours = { "val-win": "#1f8a44", "val-draw": "#d99a00", "val-loss": "#c23b2a",
    "est-best": "#1f8a44", "est-good": "#7cc48f", "est-dubious": "#d99a00", "est-bad": "#c23b2a", best: "#17408b", plain: "#777" };
  for (const [name, colour] of Object.entries(colours)) {
    const marker = svg("marker", { id: `head-${name}`, viewBox: "0 0 10 10", refX: 7, refY: 5, markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse" });
    marker.appendChild(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: colour }));
    defs.appendChild(marker);
  }
  layer.appendChild(defs);
  const arrow = (mv, kind, label) => {
    const from = centre(mv.slice(0, 2));
    const to = centre(mv.slice(2));
    if (!from || !to) return;
    const [x1, y1, w] = from;
    const [x2, y2] = to;
    const shorten = w * 0.3;
    const len = Math.hypot(x2 - x1, y2 - y1) || 1;
    const [dx, dy] = [(x2 - x1) / len, (y2 - y1) / len];
    const line = svg("line", {
      x1: x1 + dx * shorten * 0.6, y1: y1 + dy * shorten * 0.6, x2: x2 - dx * shorten, y2: y2 - dy * shorten,
      stroke: colours[kind] || colours.plain, "stroke-width": Math.max(3, w * 0.09), "stroke-linecap": "round",
      "marker-end": `url(#head-${kind in colours ? kind : "plain"})`, opacity: 0.85,
      class: `arrow ${kind}`, "data-move": mv,
    });
    layer.appendChild(line);
    if (label) {
      // In the target square, a little towards the car (two moves into
      // one square keep their labels apart).
      layer.appendChild(svg("text", {
        x: x2 - dx * w * 0.22, y: y2 - dy * w * 0.22, "text-anchor": "middle", "dominant-baseline": "central",
        "font-size": Math.max(9, w * 0.18), "font-weight": 700, fill: "#fff", stroke: colours[kind] || colours.plain,
        "stroke-width": 3, "paint-order": "stroke", class: "arrow-label",
      }, label));
    }
  };
  const hints = state.view.hints;
  if (hints && $("hints-all").checked) {
    for (const hint of hints.moves) {
      const kind = hintClass(hint);
      // The selected car's targets carry their labels already.
      const label = hint.move.slice(0, 2) === selected ? "" : hintLabel(hint);
      arrow(hint.move, kind || "plain", label);
    }
  }
  const best = state.view.best;
  if (best && best.move) arrow(best.move, "best", "");
}

function renderTally(s) {
  const v = s.view;
  const cars = s.size - 1;
  for (const color of ["black", "white"]) {
    const el = $(`tally-${color}`);
    const off = v[`${color}_off`];
    el.dataset.off = String(off);
    el.classList.toggle("to-move", !v.result && v.side_to_move === color);
    el.querySelector(".tally-text").textContent = `${capital(color)}: ${off} of ${cars} off`;
    const dots = el.querySelector(".tally-dots");
    dots.replaceChildren(...Array.from({ length: cars }, (_, i) => {
      const dot = document.createElement("span");
      dot.textContent = i < off ? "●" : "○";
      if (i < off) dot.className = "off";
      return dot;
    }));
  }
}

function sideName(color) {
  return capital(color);
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
    else text = `${mover} (engine) to move.`;
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
  // Settings the engine refused stay in view while it runs: it plays on
  // without them (a table directory it could not load, say).
  const refused = engine.refused || [];
  $("refused").hidden = refused.length === 0 || engine.status === "dead";
  $("refused-text").textContent = refused.length === 0 ? ""
    : `The engine runs without ${refused.length === 1 ? "a setting" : "settings"} it refused: ${refused.join("; ")}.`;
  $("thinking").hidden = engine.status !== "thinking";
  $("analysing").hidden = engine.status !== "analysing";
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

/// "after 5. a3b3" for the position after `ply` moves.
function plyName(s, ply) {
  if (ply === 0) return "the start";
  const whiteFirst = s.start.endsWith("w");
  const index = ply - 1 + (whiteFirst ? 1 : 0);
  const number = Math.floor(index / 2) + 1;
  const black = index % 2 === 0;
  return `after ${number}${black ? "." : "..."} ${s.moves[ply - 1]} (${black ? "Black" : "White"})`;
}

function renderReview(s) {
  const bar = $("review-bar");
  bar.hidden = s.review === null;
  if (s.review !== null) {
    $("review-text").textContent = `Looking back: the position ${plyName(s, s.review)}, move ${s.review} of ${s.moves.length}.`;
  }
}

function formatScore(analysis) {
  const score = analysis.score;
  if (!score) return "–";
  const side = sideName(analysis.side);
  let text;
  if (score.kind === "mate") {
    const moves = Math.abs(score.value);
    const plural = moves === 1 ? "move" : "moves";
    text = score.value > 0
      ? `${side} wins in ${moves} ${plural} of its own`
      : `${side} loses in ${moves} ${plural} of its own`;
  } else {
    const value = score.value > 0 ? `+${score.value}` : String(score.value);
    text = `${value} for ${side} (a car's move ≈ 30)`;
  }
  if (analysis.wdl) {
    const [w, d, l] = analysis.wdl.map((x) => Math.round(x / 10));
    // The chances are the searched side's, as the score is: say whose.
    text += `; ${side}: win ${w}%, draw ${d}%, loss ${l}%`;
  }
  return text;
}

function renderAnalysis(s) {
  // Looking back: the engine's view of that position. Live: its thinking
  // about its move while it thinks, else its view of the position on show,
  // else its last move's search.
  let a = s.view.analysis;
  if (s.review === null && (s.engine.status === "thinking" || !a)) a = s.analysis;
  const number = (x) => (x === null || x === undefined ? "–" : x.toLocaleString("en"));
  const about = $("a-about");
  if (!a) {
    for (const id of ["a-depth", "a-score", "a-nodes", "a-nps", "a-pv"]) $(id).textContent = "–";
    about.textContent = s.view.solved ? `Tables: ${s.view.solved}.` : "";
  } else {
    $("a-depth").textContent = a.depth === null ? "–" : `${a.depth}${a.seldepth ? ` / ${a.seldepth}` : ""}`;
    $("a-score").textContent = formatScore(a);
    $("a-nodes").textContent = number(a.nodes);
    const nps = a.nps === null ? "–" : `${number(a.nps)} nodes/s`;
    $("a-nps").textContent = a.time === null ? nps : `${nps}, ${number(a.time)} ms`;
    $("a-pv").textContent = a.pv.length ? a.pv.join(" ") : "–";
    const where = a.ply === s.moves.length ? "the game as it stands" : `the position ${plyName(s, a.ply)}`;
    const tables = s.view.solved && a.ply === s.view.ply ? ` Tables: ${s.view.solved}.` : "";
    about.textContent = `About ${where}${a.done ? "" : " (still thinking)"}.${tables}`;
  }
  const best = $("best-text");
  best.hidden = !s.view.best;
  if (s.view.best) best.textContent = s.view.best.done ? `Best move: ${s.view.best.text}` : "Best move: the engine is thinking…";
}

function renderHints(s) {
  const hints = s.view.hints;
  $("hints-panel").hidden = !s.hints;
  $("hints-all-label").hidden = !s.hints;
  if (document.activeElement !== $("hints")) $("hints").checked = s.hints;
  const list = $("hints-list");
  const source = $("hints-source");
  if (!s.hints) return;
  if (!hints) {
    source.textContent = s.view.result ? "The game is over here." : "Hints show on your turn (or when you look back at a position).";
    list.replaceChildren();
    return;
  }
  const sources = {
    table: "Exact values from the solved tables (plies to the end with best play).",
    engine: "No table covers this position: the engine's estimate of each move.",
    waiting: "Asking the engine…",
    unavailable: `No values: ${hints.message || "the engine is not running"}.`,
  };
  source.textContent = sources[hints.source] + (hints.done || hints.source === "unavailable" ? "" : " (in progress)");
  list.dataset.source = hints.source;
  list.dataset.done = String(hints.done);
  list.replaceChildren(...hints.moves.map((hint) => {
    const li = document.createElement("li");
    li.dataset.move = hint.move;
    const chip = document.createElement("span");
    chip.className = `chip-value ${hintClass(hint)}`;
    const text = document.createElement("span");
    text.textContent = hint.text;
    li.append(chip, text);
    return li;
  }));
}

function renderMoves(s) {
  const body = $("moves-body");
  const rows = [];
  const whiteFirst = s.start.endsWith("w");
  const cells = whiteFirst ? [null].concat(s.moves) : s.moves.slice();
  const view = s.view.ply;
  for (let i = 0; i < cells.length; i += 2) {
    const tr = document.createElement("tr");
    const number = document.createElement("td");
    number.textContent = `${i / 2 + 1}.`;
    tr.appendChild(number);
    for (let j = i; j < i + 2; j++) {
      const td = document.createElement("td");
      if (j < cells.length && cells[j] !== null) {
        const ply = j + 1 - (whiteFirst ? 1 : 0);
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = cells[j];
        button.dataset.ply = String(ply);
        button.setAttribute("aria-label", `position ${plyName(s, ply)}`);
        if (ply === view) button.classList.add("current");
        td.appendChild(button);
      } else if (j < cells.length) {
        td.textContent = "…";
      }
      tr.appendChild(td);
    }
    rows.push(tr);
  }
  body.replaceChildren(...rows);
  const current = body.querySelector(".current");
  if (current && s.review !== null) current.scrollIntoView({ block: "nearest" });
  else if (s.review === null) body.parentElement.parentElement.scrollTop = body.parentElement.parentElement.scrollHeight;
  $("nav-first").disabled = view === 0;
  $("nav-prev").disabled = view === 0;
  $("nav-next").disabled = s.review === null;
  $("nav-last").disabled = s.review === null;
}

/// The evaluation graph: Black's expected result per ply (top: Black wins,
/// bottom: White wins), exact where a table or the end says so.
function renderGraph(s) {
  const graph = $("graph");
  const [W, H, left, right, top, bottom] = [300, 120, 34, 6, 8, 14];
  const plies = Math.max(1, s.graph.length - 1);
  const x = (ply) => left + (ply / plies) * (W - left - right);
  const y = (black) => top + (1 - black) * (H - top - bottom);
  const parts = [
    svg("line", { class: "mid", x1: left, x2: W - right, y1: y(0.5), y2: y(0.5) }),
    svg("text", { x: 2, y: y(1) + 4 }, "Black"),
    svg("text", { x: 2, y: y(0) }, "White"),
    svg("text", { x: 2, y: y(0.5) + 3 }, "even"),
    svg("line", { class: "now", x1: x(s.view.ply), x2: x(s.view.ply), y1: top, y2: H - bottom }),
  ];
  let path = "";
  let previous = false;
  s.graph.forEach((point, ply) => {
    if (!point) { previous = false; return; }
    path += `${previous ? "L" : "M"}${x(ply).toFixed(1)} ${y(point.black).toFixed(1)} `;
    previous = true;
  });
  if (path) parts.push(svg("path", { class: "line", d: path }));
  s.graph.forEach((point, ply) => {
    if (!point) return;
    const dot = svg("circle", { class: `pt pt-${point.source}`, cx: x(ply), cy: y(point.black), r: point.source === "engine" ? 2.2 : 2.8, "data-ply": ply });
    dot.appendChild(svg("title", {}, `${plyName(s, ply)}: ${point.text}`));
    parts.push(dot);
  });
  parts.push(svg("text", { x: left, y: H - 2 }, "0"));
  parts.push(svg("text", { x: W - right - 14, y: H - 2 }, String(s.graph.length - 1)));
  graph.replaceChildren(...parts);
  graph.dataset.points = String(s.graph.filter((p) => p).length);
  const known = s.graph[s.view.ply];
  $("graph-text").textContent = known
    ? `${capital(plyName(s, s.view.ply))}: ${known.text}${known.source === "table" ? " (tables)" : known.source === "engine" ? " (engine)" : ""}.`
    : "Click a move, a point or use ← → to look back.";
}

function ensureOption(select, value, text) {
  if (![...select.options].some((o) => o.value === value)) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = text;
    select.appendChild(option);
  }
}

/// The level selector: the engine's levels (Skill Level, or UCI_Elo
/// steps), or full strength alone when it has none.
function renderLevels(s) {
  const select = $("level");
  const strength = s.strength;
  const key = strength ? `${strength.kind}:${strength.min}:${strength.max}` : "none";
  if (select.dataset.key !== key) {
    select.dataset.key = key;
    const options = [["full", "full strength"]];
    if (strength && strength.kind === "skill") {
      for (let level = strength.min; level < strength.max; level++) options.push([String(level), `level ${level}`]);
    } else if (strength) {
      const steps = 8;
      const seen = new Set();
      for (let i = 0; i < steps; i++) {
        const elo = Math.round((strength.min + ((strength.max - strength.min) * i) / steps) / 50) * 50;
        const value = Math.min(Math.max(elo, strength.min), strength.max);
        if (!seen.has(value)) { seen.add(value); options.push([String(value), `Elo ${value}`]); }
      }
    }
    select.replaceChildren(...options.map(([value, text]) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = text;
      return option;
    }));
  }
  select.disabled = !strength;
  $("level-hint").textContent = strength
    ? (strength.kind === "skill" ? "Lower levels play weaker moves." : "A lower Elo plays weaker moves.")
    : "This engine offers no weaker levels.";
  const value = s.level === null ? "full" : String(s.level);
  if (s.level !== null) ensureOption(select, value, strength && strength.kind === "elo" ? `Elo ${value}` : `level ${value}`);
  select.value = value;
}

function renderSettings(s) {
  const movetime = String(s.movetime);
  ensureOption($("movetime"), movetime, `${s.movetime / 1000} s`);
  $("movetime").value = movetime;
  $("engine-side").value = s.engine_side;
  renderLevels(s);
  if (!sizeChosen) $("size").value = String(s.size);
  if (!rulesChosen) $("rules").value = s.rules;
}

// --- how the engine thinks -------------------------------------------------

let treeKey = null;      // what the tree on show was asked for
let treeData = null;     // the tree on show
let treeAsked = null;    // the request in flight

function treeRequest() {
  const depth = parseInt($("tree-depth").value, 10);
  return { depth, ply: state.view.ply, key: `${state.rules}|${state.view.position}|${depth}` };
}

/// Fetches the tree for the position on show when it changed (only while
/// the panel is open).
async function renderTree() {
  if (!state || !$("learn").open) return;
  const request = treeRequest();
  if (request.key === treeKey) return;
  if (treeAsked === request.key) return;
  treeAsked = request.key;
  const error = $("tree-error");
  try {
    const data = await api(`/api/tree?depth=${request.depth}&ply=${request.ply}`);
    if (treeAsked !== request.key) return;
    treeKey = request.key;
    treeData = data;
    error.hidden = true;
  } catch (e) {
    if (treeAsked !== request.key) return;
    treeKey = request.key;
    treeData = null;
    error.hidden = false;
    error.textContent = capital(e.message);
  } finally {
    if (treeAsked === request.key) treeAsked = null;
  }
  drawTree();
}

function valueText(data, value) {
  if (value >= data.infinity) return "+∞";
  if (value <= -data.infinity) return "−∞";
  if (value >= data.win) return "W";
  if (value <= -data.win) return "B";
  return value > 0 ? `+${value}` : value < 0 ? `−${-value}` : "0";
}

// The game tree's leaves: at least MIN_SLOT apart (in its own units), at
// most MAX_SLOT when spread out to fill the panel; its labels are scaled
// up at most TREE_ZOOM times.
const MIN_SLOT = 46;
const MAX_SLOT = 140;
const TREE_ZOOM = 1.6;

function drawTree() {
  const holder = $("tree");
  const data = treeData;
  const rows = { minimax: $("count-minimax"), alphabeta: $("count-alphabeta"), best: $("count-best") };
  const option4 = $("tree-depth").querySelector('option[value="4"]');
  if (!data) {
    holder.replaceChildren();
    for (const row of Object.values(rows)) row.querySelectorAll("td").forEach((td) => { td.textContent = "–"; });
    $("tree-about").textContent = "";
    return;
  }
  option4.disabled = data.deepest < 4;
  option4.textContent = data.deepest < 4 ? "4 (too large here)" : "4";
  rows.minimax.cells[1].textContent = data.minimax.nodes.toLocaleString("en");
  rows.minimax.cells[2].textContent = data.minimax.leaves.toLocaleString("en");
  rows.alphabeta.cells[1].textContent = data.alphabeta.nodes.toLocaleString("en");
  rows.alphabeta.cells[2].textContent = data.alphabeta.leaves.toLocaleString("en");
  rows.best.cells[2].textContent = data.best_case.toFixed(1);
  const B = data.branching.toFixed(2);
  const D = data.depth;
  const formula = D % 2 === 0 ? `2B^${D / 2} − 1` : `B^${(D + 1) / 2} + B^${(D - 1) / 2} − 1`;
  rows.best.cells[0].textContent = `Alpha-beta at best (${formula})`;
  const alphabeta = $("algo-alphabeta").checked;
  const saved = data.minimax.nodes - data.alphabeta.nodes;
  $("tree-about").textContent = `Depth ${D}, ${data.position}. Minimax evaluates B^${D} leaves, here with B ≈ ${B}; `
    + `alpha-beta found the same value (${valueText(data, data.root.value)}) and best line ${data.pv.join(" ") || "(none)"} `
    + `visiting ${saved} fewer positions. Perfectly ordered moves would leave it ${formula} ≈ ${data.best_case.toFixed(1)} leaves.`
    + (alphabeta ? " Grey branches were cut off: ✂ marks where, with alpha (α) and beta (β) under each node as it was searched." : "");

  // Layout: leaves in slots left to right, a parent above the middle of
  // its children, one row per ply.
  // The drawing fills the panel's width: a small tree gets its labels
  // scaled up (at most TREE_ZOOM times) and its leaves spread out (at
  // most MAX_SLOT apart); a wide one keeps the least size and scrolls.
  const ROW = alphabeta ? 78 : 62;
  const PAD = 40;
  const countLeaves = (node) => node.children.length === 0 ? 1 : node.children.reduce((n, c) => n + countLeaves(c), 0);
  const leaves = countLeaves(data.root);
  const room = Math.max(0, holder.clientWidth - 2);
  const zoom = Math.min(TREE_ZOOM, Math.max(1, room / (PAD + leaves * MIN_SLOT + 10)));
  const SLOT = Math.max(MIN_SLOT, Math.min(MAX_SLOT, (room / zoom - PAD - 10) / leaves));
  let slot = 0;
  const nodes = [];
  const place = (node, depth, path) => {
    const entry = { node, depth, path, children: [] };
    if (node.children.length === 0) {
      entry.x = PAD + slot * SLOT + SLOT / 2;
      slot++;
    } else {
      entry.children = node.children.map((child, i) => place(child, depth + 1, path.concat(i)));
      entry.x = (entry.children[0].x + entry.children[entry.children.length - 1].x) / 2;
    }
    entry.y = 24 + depth * ROW;
    nodes.push(entry);
    return entry;
  };
  const root = place(data.root, 0, []);
  const width = PAD + slot * SLOT + 10;
  const height = 24 + D * ROW + (alphabeta ? 44 : 30);
  const drawing = svg("svg", {
    width: Math.floor(width * zoom), height: Math.floor(height * zoom), viewBox: `0 0 ${width} ${height}`,
    role: "img", "aria-label": `game tree to depth ${D}`,
  });
  drawing.dataset.zoom = zoom.toFixed(2);
  drawing.dataset.algorithm = alphabeta ? "alphabeta" : "minimax";
  // Level labels.
  for (let depth = 0; depth <= D; depth++) {
    const side = depth % 2 === 0 ? data.root.side : other(data.root.side);
    drawing.appendChild(svg("text", { class: "level", x: 2, y: 24 + depth * ROW + 4 }, side === "white" ? "MAX" : "MIN"));
  }
  // The principal line: the moves of data.pv from the root.
  const pvSet = new Set();
  let walk = root;
  for (const mv of data.pv) {
    const next = walk.children.find((c) => c.node.move === mv);
    if (!next) break;
    pvSet.add(next);
    walk = next;
  }
  const edges = [];
  const shapes = [];
  const visit = (entry, cutHere) => {
    const node = entry.node;
    const cut = alphabeta && (cutHere || !node.ab);
    entry.children.forEach((child, i) => {
      const childCut = alphabeta && (cut || !child.node.ab);
      const cls = `edge${childCut ? " cut" : ""}${pvSet.has(child) && !childCut ? " pv" : ""}`;
      edges.push(svg("line", { class: cls, x1: entry.x, y1: entry.y + 11, x2: child.x, y2: child.y - 11 }));
      edges.push(svg("text", { class: "mv", x: child.x, y: child.y - 15 }, child.node.move));
      if (alphabeta && !cut && node.ab && node.ab.cut_after === i) {
        const mark = svg("text", { class: "scissors", x: (entry.x * 0.4 + child.x * 0.6), y: entry.y + (child.y - entry.y) * 0.6 }, "✂");
        const last = entry.children[i - 1].node.ab.value;
        mark.appendChild(svg("title", {}, node.side === "white"
          ? `β cut-off: MAX already has ${valueText(data, last)} ≥ β ${valueText(data, node.ab.beta)}; MIN above will not allow it`
          : `α cut-off: MIN already has ${valueText(data, last)} ≤ α ${valueText(data, node.ab.alpha)}; MAX above will not allow it`));
        edges.push(mark);
      }
      visit(child, childCut);
    });
    const max = node.side === "white";
    const leaf = node.children.length === 0;
    const g = svg("g", { class: `node ${max ? "max" : "min"}${leaf ? " leaf" : ""}${cut ? " cut" : ""}`, "data-path": entry.path.join(".") });
    if (max) g.appendChild(svg("rect", { x: entry.x - 19, y: entry.y - 11, width: 38, height: 22, rx: 3 }));
    else g.appendChild(svg("ellipse", { cx: entry.x, cy: entry.y, rx: 20, ry: 11 }));
    let shown = valueText(data, node.value);
    if (alphabeta && node.ab) {
      const v = node.ab.value;
      shown = valueText(data, v);
      if (v <= node.ab.alpha && !leaf) shown = `≤${shown}`;
      else if (v >= node.ab.beta && !leaf) shown = `≥${shown}`;
    } else if (alphabeta) {
      shown = "";
    }
    g.appendChild(svg("text", { class: "value", x: entry.x, y: entry.y }, shown));
    if (alphabeta && node.ab && !leaf) {
      g.appendChild(svg("text", { class: "window", x: entry.x, y: entry.y + 20 },
        `α ${valueText(data, node.ab.alpha)} β ${valueText(data, node.ab.beta)}`));
    }
    const title = leaf
      ? (node.leaf === "end" ? "game over" : "textbook evaluation")
      : `${max ? "MAX: the largest" : "MIN: the smallest"} of its children`;
    g.appendChild(svg("title", {}, `${node.move || "root"}: ${valueText(data, node.value)} (${title})${cut ? ", cut off by alpha-beta" : ""}`));
    shapes.push(g);
  };
  visit(root, false);
  drawing.append(...edges, ...shapes);
  holder.replaceChildren(drawing);
  holder.dataset.cuts = String(nodes.filter((e) => !e.node.ab).length);
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
  const v = s.view;
  const mover = v.side_to_move;
  if (s.review !== null) {
    refuse("You are looking back at an earlier position: press Play on from here to play from it, or Back to the game.", square);
    return;
  }
  if (s.turn === "over") {
    refuse("The game is over. Start a new game, undo, or look back through the moves.", square);
    return;
  }
  if (s.turn === "engine") {
    const why = s.engine.status === "dead"
      ? "It is the engine's turn, but the engine is not running: restart it, or set it to play neither side."
      : `Please wait: the engine is playing ${sideName(mover)}.`;
    refuse(why, square);
    return;
  }
  const own = v[mover].includes(square);
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
    refuse(v[other(mover)].includes(square)
      ? `It is ${sideName(mover)}'s turn: pick one of ${sideName(mover)}'s cars.`
      : `Pick one of ${sideName(mover)}'s cars first.`, square);
    return;
  }
  const mv = selected + square;
  if (!v.legal_moves.includes(mv)) {
    refuse(whyIllegal(selected, square, mover), square);
    return;
  }
  selected = null;
  post("/api/move", { move: mv });
}

function newGame(event) {
  event.preventDefault();
  selected = null;
  sizeChosen = false;
  rulesChosen = false;
  post("/api/new", {
    size: parseInt($("size").value, 10),
    rules: $("rules").value,
    engine: $("engine-side").value,
    movetime: parseInt($("movetime").value, 10),
  }).then((ok) => { if (ok) notice("New game."); });
}

async function copyText(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    notice(`Copied ${what}.`);
    return true;
  } catch (_) {
    return false;
  }
}

async function copyPosition() {
  const text = state ? state.view.position : $("position").value;
  if (!(await copyText(text, text))) {
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

/// Shows the position after `ply` moves (the live game at the last one).
function review(ply) {
  if (!state) return;
  const last = state.moves.length;
  const target = Math.max(0, Math.min(ply, last));
  selected = null;
  post("/api/review", { ply: target >= last ? null : target });
}

function step(delta) {
  if (!state) return;
  review(state.view.ply + delta);
}

function onKey(event) {
  const tag = event.target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || event.altKey || event.ctrlKey || event.metaKey) return;
  const keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), Home: () => review(0), End: () => review(Infinity) };
  const action = keys[event.key];
  if (action) {
    event.preventDefault();
    action();
  }
}

async function fetchRecord() {
  const response = await fetch("/api/export");
  if (!response.ok) throw new Error(`the server answered ${response.status}`);
  return response.text();
}

async function exportRecord() {
  try {
    const text = await fetchRecord();
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = `dodgem-${state.size}x${state.size}-${state.moves.length}-plies.pgn`;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
    notice("Record saved.");
  } catch (error) {
    refuse(`Cannot export: ${error.message}`);
  }
}

async function copyRecord() {
  try {
    const text = await fetchRecord();
    if (!(await copyText(text, "the record"))) {
      const area = $("import-text");
      area.value = text;
      area.select();
      notice("The record is in the box below: press Ctrl+C (or ⌘C) to copy.");
    }
  } catch (error) {
    refuse(`Cannot export: ${error.message}`);
  }
}

function importRecord() {
  const text = $("import-text").value;
  const error = $("import-error");
  if (!text.trim()) {
    error.hidden = false;
    error.textContent = "Paste a record, or choose a file, first.";
    return;
  }
  post("/api/import", { record: text }, (message) => {
    error.hidden = false;
    error.textContent = message;
  }).then((ok) => {
    if (ok) {
      error.hidden = true;
      selected = null;
      sizeChosen = false;
      rulesChosen = false;
      renderSettings(state);
      notice(`Imported: ${state.imported}.`);
    }
  });
}

function importFile() {
  const file = $("import-file").files[0];
  if (!file) return;
  const reader = new FileReader();
  reader.onload = () => {
    $("import-text").value = String(reader.result);
    importRecord();
  };
  reader.onerror = () => {
    $("import-error").hidden = false;
    $("import-error").textContent = `Cannot read ${file.name}.`;
  };
  reader.readAsText(file);
}

function onGraphClick(event) {
  if (!state) return;
  const graph = $("graph");
  const box = graph.getBoundingClientRect();
  const x = ((event.clientX - box.left) / box.width) * 300;
  const plies = Math.max(1, state.graph.length - 1);
  const ply = Math.round(((x - 34) / (300 - 34 - 6)) * plies);
  review(ply);
}

function init() {
  $("board").addEventListener("click", onBoardClick);
  $("undo").addEventListener("click", () => { selected = null; post("/api/undo", {}); });
  $("flip").addEventListener("click", () => { flipped = !flipped; if (state) render(); });
  $("new-game").addEventListener("submit", newGame);
  $("size").addEventListener("change", () => { sizeChosen = true; });
  $("rules").addEventListener("change", () => { rulesChosen = true; });
  $("new-same").addEventListener("click", () => $("new").click());
  $("best").addEventListener("click", () => post("/api/best", {}).then((ok) => { if (ok) notice("Asked the engine for its best move."); }));
  $("hints").addEventListener("change", () => post("/api/config", { hints: $("hints").checked }));
  $("hints-all").addEventListener("change", () => { if (state) renderArrows(); });
  $("engine-side").addEventListener("change", () => post("/api/config", { engine: $("engine-side").value }));
  $("movetime").addEventListener("change", () => post("/api/config", { movetime: parseInt($("movetime").value, 10) }));
  $("level").addEventListener("change", () => {
    const value = $("level").value;
    post("/api/config", { level: value === "full" ? "full" : parseInt(value, 10) });
  });
  $("restart").addEventListener("click", () => post("/api/restart", {}).then((ok) => { if (ok) notice("Engine restarted."); }));
  $("copy").addEventListener("click", copyPosition);
  $("position-form").addEventListener("submit", setPosition);
  $("moves-body").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-ply]");
    if (button) review(parseInt(button.dataset.ply, 10));
  });
  $("nav-first").addEventListener("click", () => review(0));
  $("nav-prev").addEventListener("click", () => step(-1));
  $("nav-next").addEventListener("click", () => step(1));
  $("nav-last").addEventListener("click", () => review(Infinity));
  $("playon").addEventListener("click", () => post("/api/playon", {}).then((ok) => { if (ok) notice("Playing on from here."); }));
  $("live").addEventListener("click", () => review(Infinity));
  $("graph").addEventListener("click", onGraphClick);
  $("export").addEventListener("click", exportRecord);
  $("export-copy").addEventListener("click", copyRecord);
  $("import").addEventListener("click", importRecord);
  $("import-file").addEventListener("change", importFile);
  $("learn").addEventListener("toggle", renderTree);
  $("tree-depth").addEventListener("change", renderTree);
  for (const radio of document.querySelectorAll('input[name="algorithm"]')) radio.addEventListener("change", drawTree);
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", () => { if (state) renderArrows(); if (treeData) drawTree(); });
  poll();
}

init();
