// End-to-end test of `dodgem gui` in a real headless Chromium.
//
// Starts `dodgem gui --port 0`, opens the printed address, starts a 3 x 3
// game with the engine as White, plays Black by clicking a car and then its
// target square until the game ends, and checks the result banner against
// the server's state. Also checks that an illegal click is refused visibly
// and that the page fits a phone-sized screen. Saves screenshots to
// target/gui-screenshot.png and target/gui-phone.png.
//
// Environment: DODGEM_BIN (default target/debug/dodgem), CHROMIUM
// (default /usr/bin/chromium), SCREENSHOT (default target/gui-screenshot.png).
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
const PHONE_SCREENSHOT = path.join(path.dirname(SCREENSHOT), "gui-phone.png");
/// The whole test must finish within this, whatever happens.
const TOTAL_MS = 180_000;
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
    const child = spawn(BIN, ["gui", "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
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
  }));

const moveCount = (page) => page.$$eval("#moves span", (spans) => spans.filter((s) => s.textContent !== "…").length);

/// Black's forward moves first (exits included), so the game moves on.
function chooseMove(legal) {
  const forward = legal.filter((mv) => mv.charCodeAt(2) > mv.charCodeAt(0));
  return (forward.length ? forward : legal)[0];
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
      if (message.type() === "error") pageErrors.push(message.text());
    });

    await page.goto(url);
    await page.waitForSelector('#board [data-square="a1"]');
    await page.waitForFunction(() => document.getElementById("status").textContent.includes("your turn"));

    // A new 3 x 3 game, the engine playing White at 0.1 s a move.
    await page.selectOption("#engine-side", "white");
    await page.selectOption("#movetime", "100");
    await page.selectOption("#size", "3");
    await page.selectOption("#rules", "textbook");
    await page.click("#new");
    await page.waitForFunction(() => {
      const board = document.getElementById("board");
      return board.dataset.turn === "human" && board.dataset.legal === "a2a1 a2b2 a3b3";
    });

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
    for (;;) {
      await page.waitForFunction(() => {
        const board = document.getElementById("board");
        return board.dataset.turn === "human" || board.dataset.turn === "over";
      });
      const board = await boardData(page);
      if (board.turn === "over") break;
      if (board.side !== "black") fail(`the person's turn, but ${board.side} is to move`);
      if (++plies > MAX_PLIES) fail("the game does not end");
      const mv = chooseMove(board.legal);
      const [from, to] = [mv.slice(0, 2), mv.slice(2)];
      const before = await moveCount(page);
      await page.click(`[data-square="${from}"]`);
      await page.waitForFunction((sq) => document.getElementById("board").dataset.selected === sq, from);
      await page.waitForSelector(`[data-square="${to}"].target`);
      await page.click(`[data-square="${to}"]`);
      await page.waitForFunction(
        (n) => [...document.querySelectorAll("#moves span")].filter((s) => s.textContent !== "…").length > n,
        before,
      );
      if (plies === 3) {
        // The engine's analysis is on show after its replies.
        await page.waitForFunction(() => document.getElementById("a-depth").textContent !== "–");
      }
    }

    // The banner says who won and why, as the server has it.
    await page.waitForSelector("#banner:not([hidden])");
    const state = await page.evaluate(() => fetch("/api/state").then((r) => r.json()));
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
    const depth = await page.textContent("#a-depth");
    if (!/^\d+/.test(depth)) fail(`no analysis shown (depth "${depth}")`);

    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Phone-sized: nothing wider than the screen, the whole board in view.
    await page.setViewportSize({ width: 380, height: 800 });
    const fit = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      board: document.getElementById("board").getBoundingClientRect().right,
    }));
    if (fit.scroll > 380 || fit.board > 380) fail(`not usable at 380 px: ${JSON.stringify(fit)}`);
    await page.screenshot({ path: PHONE_SCREENSHOT });

    if (pageErrors.length) fail(`errors on the page: ${pageErrors.join("; ")}`);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`ok: ${title} ${text} after ${state.moves.length} plies (${seconds} s); screenshot ${SCREENSHOT}`);
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
