/**
 * @module The console's browser for tests: Debian's Chromium, headless, driven by playwright-core with a
 * fresh profile. `chromiumMissing()` says why the browser tests must skip (only when the binary is absent).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { TEST_TIMEOUT_MS } from "../support/timeouts.js";

export const CHROMIUM_PATH = "/usr/bin/chromium";

export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM_PATH)
    ? undefined
    : `${CHROMIUM_PATH} is missing (apt-get install -y chromium; .ci/run installs it)`;
}

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh user-data folder, deleted on close. */
export async function launchChromium(viewport = { width: 1280, height: 800 }): Promise<TestBrowser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), "nimbus-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport,
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
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where the console tests' screenshots go: docs/console/ with UPDATE_CONSOLE_SCREENSHOTS=1, else a temp folder. */
export function screenshotFolder(): string {
  return process.env.UPDATE_CONSOLE_SCREENSHOTS === "1"
    ? path.join(import.meta.dirname, "../../docs/console")
    : mkdtempSync(path.join(os.tmpdir(), "nimbus-console-shots-"));
}

/** Removes a temp screenshot folder (never docs/console/). */
export function removeScreenshotFolder(folder: string): void {
  if (process.env.UPDATE_CONSOLE_SCREENSHOTS !== "1") rmSync(folder, { recursive: true, force: true });
}

/** Why the console's browser tests skip, if they must; and the bound of every wait for a state in them. */
export const CONSOLE_SKIP = chromiumMissing();
export const WAIT = { timeout: TEST_TIMEOUT_MS };

export interface ConsoleSession {
  readonly browser: TestBrowser;
  readonly page: Page;
  /** The screenshot folder. */
  readonly shots: string;
  /** The console's URL of a view (`#/cluster`, ...). */
  consoleUrl(hash: string): string;
  /** A full-page screenshot of the page as `<name>.png` in the screenshot folder. */
  shot(name: string): Promise<Buffer>;
}

/**
 * One browser and page for a describe block, against the server at `baseUrl()`: launched before its tests,
 * closed after them with its screenshot folder (kept when UPDATE_CONSOLE_SCREENSHOTS=1).
 */
export function useConsolePage(baseUrl: () => string): ConsoleSession {
  const shots = screenshotFolder();
  let browser: TestBrowser | undefined;
  let page: Page | undefined;
  before(async () => {
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.setDefaultTimeout(TEST_TIMEOUT_MS);
  });
  after(async () => {
    await browser?.close();
    removeScreenshotFolder(shots);
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the console page is opened before the tests");
    return value;
  };
  return {
    get browser() {
      return started(browser);
    },
    get page() {
      return started(page);
    },
    shots,
    consoleUrl: (hash) => `${baseUrl()}/console/${hash}`,
    shot: (name) => started(page).screenshot({ path: path.join(shots, `${name}.png`), fullPage: true }),
  };
}
