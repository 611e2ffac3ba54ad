// Names and texts an attacker would give a merchant, shop, user or payer field to
// run script in someone else's page. A page that shows one must show it as text:
// no dialog, no element of its own in the DOM, no `javascript:` link. Shared by
// every page's XSS check; `injectedElements` finds what a probe would have made.
import type { Page } from 'playwright-core';

/** Each at most 200 characters (the longest name the gateway keeps). */
export const XSS_PROBES = [
  '<script>window.__xss="script";alert("xss-script")</script>',
  "\"><img src=x data-xss-probe onerror=\"window.__xss='img';alert('xss-img')\">",
  "javascript:alert('xss-href')",
  "'><svg data-xss-probe onload=\"window.__xss='svg';alert('xss-svg')\"></svg>",
  '<a href="javascript:alert(\'xss-a\')" data-xss-probe>click</a>',
] as const;

/** What a probe would have left if it were rendered as HTML rather than as text. */
export async function injectedElements(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    for (const element of document.querySelectorAll('[data-xss-probe], img[src="x"], svg[onload], [onerror]'))
      found.push(element.outerHTML.slice(0, 200));
    for (const script of document.querySelectorAll('script'))
      if (!script.src) found.push(`inline script: ${script.textContent?.slice(0, 100) ?? ''}`);
    for (const link of document.querySelectorAll('a[href], form[action]')) {
      const target = link.getAttribute('href') ?? link.getAttribute('action') ?? '';
      if (/^\s*javascript:/i.test(target)) found.push(link.outerHTML.slice(0, 200));
    }
    if ((globalThis as { __xss?: unknown }).__xss !== undefined) found.push(`window.__xss set`);
    return found;
  });
}
