// The cabinet's views never carry raw HTML: the real eslint.config.js refuses
// Preact's dangerouslySetInnerHTML (and its `__html` object) in src/cabinet,
// however it is written, and accepts ordinary escaped templates.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

/** The raw-HTML errors ESLint reports for `source` as if it were the file at `filePath`. */
async function rawHtmlErrors(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === 'no-restricted-syntax')
    .map((message) => message.message);
}

const HEADER = "import { html } from 'htm/preact';\nconst comment = '<b>';\n";

describe('raw HTML in cabinet views is refused by lint', () => {
  it.each([
    ['inside an htm template', 'export const view = html`<div dangerouslySetInnerHTML=${{ __html: comment }} />`;\n'],
    ['as an object property', 'export const props = { dangerouslySetInnerHTML: { __html: comment } };\n'],
    ['as a quoted key', "export const props = { 'dangerouslySetInnerHTML': { ['__html']: comment } };\n"],
    [
      'as a member written to',
      'export const props: Record<string, unknown> = {};\nprops.dangerouslySetInnerHTML = comment;\n',
    ],
  ])('dangerouslySetInnerHTML %s is refused', { timeout: 120_000 }, async (_name, source) => {
    const errors = await rawHtmlErrors('src/cabinet/shops/shop-routes.ts', HEADER + source);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatch(/Raw HTML bypasses escaping/);
  });

  it('an escaped template passes', { timeout: 120_000 }, async () => {
    const source = `${HEADER}export const view = html\`<p>\${comment}</p>\`;\n`;
    expect(await rawHtmlErrors('src/cabinet/shops/shop-routes.ts', source)).toEqual([]);
  });
});
