// End-to-end test of `dodgem gui` in a real headless Chromium.
//
// Starts `dodgem gui --port 0`, opens the printed address and, as a person
// would, by clicking and typing:
//
// 1. plays a 3 x 3 game as Black against the engine (White, 0.1 s a move)
//    to the end, with refused clicks explained on the way, the cars-off
//    tally counting the first car that leaves, and the result banner
//    agreeing with the server;
// 2. steps back through the finished game (Home, arrow keys, a click in the
//    move list), sees the engine's analysis of an earlier position and
//    plays on from it;
// 3. exports the game, imports the record again (and a bad one, which is
//    refused with a clear message);
// 4. turns hints on in a 4 x 4 game (the built-in table): the selected
//    car's targets and, with "every move", every move are coloured by
//    their exact values;
// 5. opens "How the engine thinks" at depth 2 and switches to alpha-beta:
//    cut branches are shown and the counts agree with the server's;
// 6. on a phone-sized screen, while the engine thinks on 8 x 8, the whole
//    analysis panel is in view and nothing is wider than the screen;
// 7. starts two new games in quick succession: the board size selector
//    shows the game's size.
//
// Every wait is for something the page shows (no sleeps), so the test does
// not depend on timing luck. Screenshots go to target/ (gui-screenshot.png,
// gui-tally.png, gui-review.png, gui-import.png, gui-hints.png,
// gui-tree.png, gui-phone.png).
//
// Environment: DODGEM_BIN (default target/debug/dodgem), CHROMIUM
// (default /usr/bin/chromium), SCREENSHOT (default target/gui-screenshot.png;
// the others are saved beside it), GUI_ENGINE (an engine command line for
// `--engine`; default: the binary's own engine).
"use strict";

const { chromium } = require("playwright-core");
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");

const ROOT = path.resolve(__dirname, "..", "..");
const BIN = process.env.DODGEM_BIN || path.join(ROOT, "target", "debug", "dodgem");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SCREENSHOT = process.env.SCREENSHOT || path.join(ROOT, "target", "gui-screenshot.png");
const shot = (name) => path.join(path.dirname(SCREENSHOT), `gui-${name}.png`);
/// The whole test must finish within this, whatever happens.
const TOTAL_MS = 240_000;
/// Any single wait (CI machines are slow and shared).
const WAIT_MS = 30_000;
const MAX_PLIES = 200;

function fail(message) {
  throw new Error(message);
}

/// Starts the server and resolves with its address, from its first line.
function startServer() {
  return new Promise((resolve, reject) => {
    if (!fs.existsSync(BIN)) {
      reject(new Error(`no binary at ${BIN}: run cargo build first (or set DODGEM_BIN)`));
      return;
    }
    const args = ["gui", "--port", "0"].concat(process.env.GUI_ENGINE ? ["--engine", process.env.GUI_ENGINE] : []);
    const child = spawn(BIN, args, { stdio: ["ignore", "pipe", "inherit"] });
    const timer = setTimeout(() => reject(new Error("dodgem gui printed no address")), WAIT_MS);
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`dodgem gui exited early (${code})`)));
    readline.createInterface({ input: child.stdout }).once("line", (line) => {
      clearTimeout(timer);
      const url = line.trim();
      if (!/^http:\/\/127\.0\.0\.1:\d+\/$/.test(url)) reject(new Error(`not an address: ${line}`));
      else resolve({ child, url });
    });
  });
}

const boardData = (page) =>
  page.$eval("#board", (b) => ({
    turn: b.dataset.turn,
    side: b.dataset.side,
    legal: b.dataset.legal ? b.dataset.legal.split(" ") : [],
    selected: b.dataset.selected,
    ply: Number(b.dataset.ply),
  }));

const moveCount = (page) => page.$$eval("#moves-body button[data-ply]", (buttons) => buttons.length);
const serverState = (page) => page.evaluate(() => fetch("/api/state").then((r) => r.json()));
const waitPly = (page, ply) =>
  page.waitForFunction((p) => document.getElementById("board").dataset.ply === String(p), ply);

/// Black's exits first, then forward moves, so the game moves on and a car
/// leaves early.
function chooseMove(legal, size) {
  const exits = legal.filter((mv) => mv.charCodeAt(2) - 97 === size);
  const forward = legal.filter((mv) => mv.charCodeAt(2) > mv.charCodeAt(0));
  return (exits.length ? exits : forward.length ? forward : legal)[0];
}

/// Clicks a car and then its target.
async function clickMove(page, mv) {
  const [from, to] = [mv.slice(0, 2), mv.slice(2)];
  await page.click(`[data-square="${from}"]`);
  await page.waitForFunction((sq) => document.getElementById("board").dataset.selected === sq, from);
  await page.waitForSelector(`[data-square="${to}"].target`);
  await page.click(`[data-square="${to}"]`);
}

/// Starts a new game from the settings form.
async function newGame(page, { size, engine, movetime }) {
  await page.selectOption("#engine-side", engine);
  await page.selectOption("#movetime", String(movetime));
  await page.selectOption("#size", String(size));
  await page.selectOption("#rules", "textbook");
  await page.click("#new");
  await page.waitForFunction((n) => {
    const board = document.getElementById("board");
    return board.querySelectorAll(".sq").length === n * n && board.dataset.ply === "0" && board.dataset.turn !== "over";
  }, size);
}

async function playAGame(page) {
  await newGame(page, { size: 3, engine: "white", movetime: 100 });
  await page.waitForFunction(() => {
    const board = document.getElementById("board");
    return board.dataset.turn === "human" && board.dataset.legal === "a2a1 a2b2 a3b3";
  });
  // Plain squares (no chess colouring), and a clear ring on the cars
  // that can move.
  const colours = await page.$$eval(".sq", (cells) => new Set(cells.map((c) => getComputedStyle(c).backgroundColor)).size);
  if (colours !== 1) fail(`the squares have ${colours} colours`);
  if ((await page.$$(".sq.movable")).length !== 2) fail("the two Black cars are not ringed");

  // Illegal clicks are refused visibly: a White car, then a backward step.
  await page.click('[data-square="b1"]');
  await page.waitForFunction(() => {
    const notice = document.getElementById("notice");
    return notice.classList.contains("refused") && notice.textContent.includes("Black's turn");
  });
  await page.click('[data-square="a3"]');
  await page.waitForFunction(() => document.getElementById("board").dataset.selected === "a3");
  await page.click('[data-square="c3"]');
  await page.waitForFunction(() => document.getElementById("notice").textContent.includes("one square"));
  if ((await moveCount(page)) !== 0) fail("a refused click played a move");
  await page.click('[data-square="a3"]'); // deselect

  // Play Black by clicking until the game ends.
  let plies = 0;
  let tallySeen = false;
  for (;;) {
    await page.waitForFunction(() => {
      const board = document.getElementById("board");
      return board.dataset.turn === "human" || board.dataset.turn === "over";
    });
    // The game stands still now (the engine waits for Black, or it is
    // over): the tally shows the cars off as the server counts them.
    const now = await serverState(page);
    await page.waitForFunction(([b, w]) => {
      const [black, white] = ["black", "white"].map((c) => document.getElementById(`tally-${c}`));
      return black.dataset.off === String(b) && white.dataset.off === String(w)
        && black.textContent.includes(`Black: ${b} of 2 off`) && white.textContent.includes(`White: ${w} of 2 off`);
    }, [now.black_off, now.white_off]);
    // The last move is marked where it came from and where it went.
    const last = now.moves[now.moves.length - 1];
    if (last) {
      await page.waitForSelector(`[data-square="${last.slice(0, 2)}"].last-from`);
      await page.waitForSelector(`[data-square="${last.slice(2)}"].last-to`);
    }
    if (!tallySeen && now.black_off + now.white_off > 0) {
      // The first car has left: the tally counts it.
      await page.screenshot({ path: shot("tally"), clip: { x: 0, y: 0, width: 1000, height: 720 } });
      tallySeen = true;
    }
    const board = await boardData(page);
    if (board.turn === "over") break;
    if (board.side !== "black") fail(`the person's turn, but ${board.side} is to move`);
    if (++plies > MAX_PLIES) fail("the game does not end");
    const mv = chooseMove(board.legal, 3);
    const before = await moveCount(page);
    await clickMove(page, mv);
    await page.waitForFunction((n) => document.querySelectorAll("#moves-body button[data-ply]").length > n, before);

    if (plies === 3) {
      await page.waitForFunction(() => document.getElementById("a-depth").textContent !== "–");
      // The engine offers UCI_ShowWDL: the page shows its chances.
      await page.waitForFunction(() => /win \d+%, draw \d+%, loss \d+%/.test(document.getElementById("a-score").textContent));
    }
  }
  if (!tallySeen) fail("no car left the board before the game ended");

  // The banner says who won and why, as the server has it.
  await page.waitForSelector("#banner:not([hidden])");
  const state = await serverState(page);
  if (!state.result) fail(`the page shows a result the server does not have: ${JSON.stringify(state)}`);
  const title = await page.textContent("#banner-title");
  const text = await page.textContent("#banner-text");
  const winner = state.result.winner;
  const expectedTitle = winner ? `${winner[0].toUpperCase()}${winner.slice(1)} wins` : "Draw";
  if (!title.startsWith(expectedTitle)) fail(`banner title "${title}", expected "${expectedTitle}..."`);
  const reason = state.result.text.slice(state.result.text.indexOf(": ") + 2);
  if (!text.toLowerCase().includes(reason.toLowerCase())) fail(`banner text "${text}" lacks "${reason}"`);
  const moves = await moveCount(page);
  if (moves !== state.moves.length) fail(`move list has ${moves} moves, the game ${state.moves.length}`);
  const headings = await page.$$eval("#moves thead th", (ths) => ths.map((th) => th.textContent));
  if (headings.join(",") !== "#,Black,White") fail(`move list headings ${headings}`);
  // The graph fills in once the game is over (exact: the 3 x 3 table).
  await page.waitForFunction((n) => Number(document.getElementById("graph").dataset.points) === n, state.moves.length + 1);
  fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  return state;
}

async function reviewAndPlayOn(page, finished) {
  const total = finished.moves.length;
  await page.keyboard.press("Home");
  await waitPly(page, 0);
  await page.waitForSelector("#review-bar:not([hidden])");
  if ((await page.$eval("#tally-black", (el) => el.dataset.off)) !== "0") fail("the start shows cars off");
  await page.keyboard.press("ArrowRight");
  await waitPly(page, 1);
  await page.keyboard.press("ArrowRight");
  await waitPly(page, 2);
  await page.keyboard.press("ArrowLeft");
  await waitPly(page, 1);
  // A click in the move list: the position after Black's second move.
  await page.click('#moves-body button[data-ply="3"]');
  await waitPly(page, 3);
  if (!(await page.$eval('#moves-body button[data-ply="3"]', (b) => b.classList.contains("current")))) {
    fail("the move on show is not marked in the list");
  }
  // The engine's analysis of that position.
  await page.waitForFunction(() => {
    const about = document.getElementById("a-about").textContent;
    return about.includes("after 2.") && document.getElementById("a-depth").textContent !== "–";
  });
  // The board does not take moves while looking back.
  await page.click('[data-square="a2"]');
  await page.waitForFunction(() => document.getElementById("notice").textContent.includes("Play on from here"));
  await page.screenshot({ path: shot("review"), clip: { x: 0, y: 0, width: 1000, height: 800 } });
  if ((await serverState(page)).moves.length !== total) fail("looking back changed the game");

  // Play on: the later moves go, the engine (White) answers, the game is live.
  await page.click("#playon");
  await page.waitForSelector("#review-bar", { state: "hidden" });
  await page.waitForFunction(() => document.getElementById("board").dataset.turn === "human");
  const state = await serverState(page);
  if (state.moves.length !== 4 || state.review !== null) fail(`after play on: ${state.moves.length} moves, review ${state.review}`);
  if (state.moves.slice(0, 3).join(" ") !== finished.moves.slice(0, 3).join(" ")) fail("play on changed the earlier moves");
}

async function exportAndImport(page, finished) {
  // Export: a download of the record of the game on the board.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
  const file = await download.path();
  const record = fs.readFileSync(file, "utf8");
  const state = await serverState(page);
  for (const needle of ["[BoardSize \"3\"]", "[FEN \"B2/B2/1WW b\"]", `[PlyCount "${state.moves.length}"]`, state.moves[0]]) {
    if (!record.includes(needle)) fail(`the record lacks ${needle}:\n${record}`);
  }
  // A bad record is refused with the line and the reason; nothing changes.
  await page.fill("#import-text", "[BoardSize \"3\"]\n1. a3b3 b1b2 2. a3b3");
  await page.click("#import");
  await page.waitForSelector("#import-error:not([hidden])");
  const error = await page.textContent("#import-error");
  if (!/line 2: move 3 \('a3b3'\): .*illegal/.test(error)) fail(`import error: ${error}`);
  if ((await serverState(page)).moves.length !== state.moves.length) fail("a bad import changed the game");
  // From another game, import the exported record through the file
  // chooser: the game on the board is the exported one again.
  await newGame(page, { size: 4, engine: "none", movetime: 100 });
  const chooser = path.join(path.dirname(file), "game.pgn");
  fs.writeFileSync(chooser, record);
  await page.setInputFiles("#import-file", chooser);
  await page.waitForFunction((n) => document.querySelectorAll("#moves-body button[data-ply]").length === n, state.moves.length);
  await page.waitForSelector("#import-error", { state: "hidden" });
  const imported = await serverState(page);
  if (imported.moves.join(" ") !== state.moves.join(" ") || imported.size !== 3) fail("the import is not the exported game");
  if ((await page.inputValue("#size")) !== "3") fail("the size selector does not show the imported game's size");
  await page.screenshot({ path: shot("import"), clip: { x: 0, y: 0, width: 1000, height: 800 } });
  if (!finished.moves.length) fail("no finished game");
}

async function hints(page) {
  await newGame(page, { size: 4, engine: "white", movetime: 100 });
  await page.waitForFunction(() => document.getElementById("board").dataset.turn === "human");
  await page.check("#hints");
  await page.waitForFunction(() => {
    const list = document.getElementById("hints-list");
    return list.dataset.source === "table" && list.dataset.done === "true";
  });
  const texts = await page.$$eval("#hints-list li", (items) => items.map((li) => li.textContent));
  // The 4 x 4 start is a draw, and so is every first move.
  if (texts.length !== 4 || !texts.every((t) => t.includes("a draw with best play"))) fail(`hints: ${texts}`);
  // The selected car's targets are coloured with their values.
  await page.click('[data-square="a4"]');
  await page.waitForSelector('[data-square="b4"].target.val-draw');
  // Every move: an arrow each, coloured.
  await page.check("#hints-all");
  await page.waitForFunction(() => document.querySelectorAll("#arrows line.val-draw").length === 4);
  // A decided position: wins and losses with their distances.
  await page.fill("#position", "1B1/BW1/2W b");
  await page.click("#set-position");
  await page.waitForFunction(() => {
    const list = document.getElementById("hints-list");
    return list.dataset.done === "true" && document.getElementById("board").dataset.legal === "a2a1 a2a3 b3c3";
  });
  await page.click('[data-square="b3"]');
  await page.waitForSelector('[data-square="c3"].target.val-win, [data-square="c3"].target.val-loss');
  const labels = await page.$$eval(".target .hint-label", (spans) => spans.map((s) => s.textContent));
  if (!labels.length || !labels.every((l) => /^[WL]\d+$/.test(l))) fail(`hint labels ${labels}`);
  await page.screenshot({ path: shot("hints"), clip: { x: 0, y: 0, width: 1000, height: 800 } });
  await page.uncheck("#hints-all");
  await page.uncheck("#hints");
  await page.waitForSelector("#hints-panel", { state: "hidden" });
}

async function tree(page) {
  await page.fill("#position", "B2/B2/1WW b");
  await page.click("#set-position");
  await page.waitForFunction(() => document.getElementById("board").dataset.legal === "a2a1 a2b2 a3b3");
  await page.click("#learn summary");
  await page.selectOption("#tree-depth", "2");
  await page.waitForSelector('#tree svg[data-algorithm="minimax"]');
  await page.check("#algo-alphabeta");
  await page.waitForSelector('#tree svg[data-algorithm="alphabeta"]');
  const drawn = await page.evaluate(() => ({
    cut: document.querySelectorAll("#tree .node.cut").length,
    scissors: document.querySelectorAll("#tree .scissors").length,
    windows: document.querySelectorAll("#tree .window").length,
    minimax: Number(document.querySelector("#count-minimax").cells[1].textContent),
    alphabeta: Number(document.querySelector("#count-alphabeta").cells[1].textContent),
  }));
  const server = await page.evaluate(() => fetch("/api/tree?depth=2&ply=0").then((r) => r.json()));
  if (drawn.minimax !== server.minimax.nodes || drawn.alphabeta !== server.alphabeta.nodes) {
    fail(`counts ${JSON.stringify(drawn)} differ from the server's ${server.minimax.nodes}/${server.alphabeta.nodes}`);
  }
  if (drawn.cut !== server.minimax.nodes - server.alphabeta.nodes || drawn.cut === 0 || drawn.scissors === 0 || drawn.windows === 0) {
    fail(`cut-offs not shown: ${JSON.stringify(drawn)}`);
  }
  // The depth-2 tree of 3 x 3 is narrow: it is scaled up to fill most of
  // its panel (it used to sit in a third of it with 9-pixel labels).
  const fill = await page.evaluate(() => {
    const holder = document.getElementById("tree");
    const drawing = holder.querySelector("svg");
    const label = holder.querySelector(".mv").getBoundingClientRect();
    return { panel: holder.clientWidth, drawing: drawing.getBoundingClientRect().width, label: label.height };
  });
  if (fill.drawing < 0.8 * fill.panel || fill.label < 12) {
    fail(`the tree does not fill its panel: ${JSON.stringify(fill)}`);
  }
  await page.$eval("#learn", (el) => el.scrollIntoView());
  await page.screenshot({ path: shot("tree"), fullPage: true });
  await page.click("#learn summary");
}

async function phone(page) {
  await newGame(page, { size: 8, engine: "white", movetime: 3000 });
  await page.setViewportSize({ width: 380, height: 800 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForFunction(() => document.getElementById("board").dataset.turn === "human");
  await clickMove(page, "a2b2");
  await page.waitForSelector("#thinking:not([hidden])");
  await page.waitForFunction(() => document.getElementById("a-depth").textContent !== "–");
  const fit = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    board: document.getElementById("board").getBoundingClientRect().right,
    // From the top of the page: in view without scrolling.
    panel: document.getElementById("analysis-panel").getBoundingClientRect().bottom + window.scrollY,
    thinking: getComputedStyle(document.getElementById("thinking")).opacity,
  }));
  if (fit.scroll > 380 || fit.board > 380) fail(`not usable at 380 px: ${JSON.stringify(fit)}`);
  if (fit.panel > 800) fail(`the analysis panel is below the fold while the engine thinks: ${JSON.stringify(fit)}`);
  if (fit.thinking !== "1") fail(`"thinking" fades: ${JSON.stringify(fit)}`);
  await page.screenshot({ path: shot("phone") });
  await page.setViewportSize({ width: 1000, height: 800 });
}

async function quickNewGames(page) {
  // Two New game clicks in a row, the second with another size: the
  // selector must show the size of the game the server has at the end.
  const before = await serverState(page);
  await page.selectOption("#engine-side", "none");
  await page.selectOption("#size", "5");
  await page.click("#new");
  await page.selectOption("#size", "4");
  await page.click("#new");
  await page.waitForFunction(() => document.querySelectorAll("#board .sq").length === 16);
  const state = await serverState(page);
  // Once the page has drawn that state (or a later one), nothing older
  // overwrites it.
  await page.waitForFunction((v) => Number(document.getElementById("board").dataset.version) >= v, state.version);
  // The answer to a poll sent before the clicks, arriving last: ignored.
  await page.evaluate((old) => show(old), before);
  const shown = await page.inputValue("#size");
  const squares = await page.$$eval("#board .sq", (cells) => cells.length);
  if (state.size !== 4 || shown !== "4" || squares !== 16) fail(`size ${state.size}, selector ${shown}, ${squares} squares`);
}

/// The level selector offers the engine's levels, and a choice reaches
/// the server.
async function levels(page) {
  const state = await serverState(page);
  const level = await page.evaluate(() => ({
    disabled: document.getElementById("level").disabled,
    hint: document.getElementById("level-hint").textContent,
    options: [...document.getElementById("level").options].map((o) => o.value),
  }));
  // The engine has `Skill Level` 0..20 (an engine without levels is
  // covered by the HTTP tests).
  if (!state.strength || state.strength.kind !== "skill") fail(`the engine's levels are not offered: ${JSON.stringify(state.strength)}`);
  if (level.disabled || level.options[0] !== "full" || level.options.length < 3) fail(`level selector ${JSON.stringify(level)}`);
  const weakest = level.options[1];
  await page.selectOption("#level", weakest);
  await page.waitForFunction(async (value) => {
    const s = await fetch("/api/state").then((r) => r.json());
    return String(s.level) === value;
  }, weakest);
  await page.selectOption("#level", "full");
  await page.waitForFunction(async () => (await fetch("/api/state").then((r) => r.json())).level === null);
}

async function run() {
  const started = Date.now();
  const { child, url } = await startServer();
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "dodgem-chromium-"));
  let context = null;
  const pageErrors = [];
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1000, height: 800 },
      acceptDownloads: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    context.setDefaultTimeout(WAIT_MS);
    const page = context.pages()[0] || (await context.newPage());
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      // The test provokes refusals (a bad record): the browser logs each
      // refused request, which is not a fault of the page.
      const refused = /^Failed to load resource: the server responded with a status of 4\d\d/;
      if (message.type() === "error" && !refused.test(message.text())) pageErrors.push(message.text());
    });

    await page.goto(url);
    await page.waitForSelector('#board [data-square="a1"]');
    await page.waitForFunction(() => document.getElementById("status").textContent.includes("your turn"));
    await levels(page);

    const finished = await playAGame(page);
    await reviewAndPlayOn(page, finished);
    await exportAndImport(page, finished);
    await hints(page);
    await tree(page);
    await phone(page);
    await quickNewGames(page);

    if (pageErrors.length) fail(`errors on the page: ${pageErrors.join("; ")}`);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const result = finished.result.text;
    console.log(`ok: ${result} after ${finished.moves.length} plies; review, import, hints, tree, phone (${seconds} s); screenshots in ${path.dirname(SCREENSHOT)}`);
  } finally {
    if (context) await context.close().catch(() => {});
    child.kill();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}

const watchdog = setTimeout(() => {
  console.error(`browser test: no result within ${TOTAL_MS / 1000} s`);
  process.exit(1);
}, TOTAL_MS);

run().then(
  () => {
    clearTimeout(watchdog);
    process.exit(0);
  },
  (error) => {
    console.error(`browser test failed: ${error.stack || error}`);
    process.exit(1);
  },
);
