// What every web page must pass in Chromium (docs/ARCHITECTURE.md, "Tests"):
// axe-core finds no serious or critical accessibility violation, and the page
// fits its viewport without horizontal scrolling, at a phone's width (390 px) and
// a desktop's (1280 px). Screenshots of both widths go to test-results/ for review.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { PageTrail } from './page-trail.ts';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 800 },
] as const;

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: ReadonlyArray<{ readonly target: unknown; readonly html: string }>;
}

/** axe-core's serious and critical violations of the page as it is now (none expected). */
async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Injected as a script element would be refused by a strict CSP; evaluate is not.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (context: Document) => Promise<{ violations: unknown[] }> } })
      .axe;
    return (await axe.run(document)).violations;
  });
  return (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

function describeViolations(violations: readonly AxeViolation[]): string {
  return violations
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.map((node) => node.html.slice(0, 200)).join('\n  ')}`)
    .join('\n');
}

/** The page's content is no wider than its viewport. */
async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/**
 * Checks the page at both widths: no serious or critical axe violation, no horizontal
 * overflow; a screenshot of each is saved as test-results/<name>-<width>.png. With a
 * trail (page-trail.ts), each check is a step of it.
 */
export async function expectPageHoldsUp(page: Page, name: string, trail?: Pick<PageTrail, 'step'>): Promise<void> {
  await mkdir('test-results', { recursive: true });
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize({ width: viewport.width, height: viewport.height });
    trail?.step(`${name}: axe-core at ${viewport.width}px`);
    const violations = await seriousViolations(page);
    expect(describeViolations(violations), `${name} at ${viewport.width}px`).toBe('');
    expect(await horizontalOverflow(page), `${name} overflows sideways at ${viewport.width}px`).toBeLessThanOrEqual(0);
    trail?.step(`${name}: screenshot at ${viewport.width}px`);
    await page.screenshot({ path: `test-results/${name}-${viewport.width}.png`, fullPage: true });
  }
}
