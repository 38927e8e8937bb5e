/**
 * TEST/BENCH helper, the one way pages are opened: Debian's Chromium driven by playwright-core
 * (MACHINE-NOTES), axe-core run in the page, and screenshots into artifacts/<suite>/
 * (gitignored) for a person to look at. The payer's injected wallet is in wallet.ts.
 */
import { chromium, type Browser, type Page } from "playwright-core";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const CHROMIUM = process.env.PAYSESSION_CHROMIUM ?? "/usr/bin/chromium";

/** Where a suite's screenshots go (gitignored): artifacts/<suite>/. */
export function artifactsDir(suite: string): string {
  const dir = resolve(import.meta.dir, "..", "artifacts", suite);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

const axeSource = readFileSync(resolve(import.meta.dir, "../node_modules/axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA rules, best practices). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern: nothing is
  // loosened on the page under test.
  await page.evaluate(`${axeSource}\n;0`);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] })`)) as {
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }));
}

/** A full-page screenshot into artifacts/<suite>/<name>.png (the dashboard's by default). */
export async function screenshot(page: Page, name: string, suite = "dashboard"): Promise<string> {
  const file = join(artifactsDir(suite), `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
