/**
 * @module The console's browser for tests: Debian's Chromium, headless, driven by playwright-core with a
 * fresh profile. `chromiumMissing()` says why the browser tests must skip (only when the binary is absent).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

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
