// The HTML every hosted page is rendered in: no external assets (inline CSS and
// at most one inline script, allowed by a CSP nonce), mobile first, with the
// language switch.
import { kitText, LANGS, type Lang } from './page-language.ts';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:28rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:12px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.12);margin-bottom:1rem}
h1{font-size:1.25rem;margin:0 0 .75rem}h2{font-size:1.1rem;margin:0 0 .75rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem .75rem;margin:0}dt{color:#4b5563}dd{margin:0;text-align:right;font-weight:600}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{width:100%;font-size:1.1rem;padding:.65rem .75rem;border:1px solid #9ca3af;border-radius:8px}
input:focus,button:focus,a:focus{outline:3px solid #2563eb;outline-offset:2px}
.row{display:flex;gap:.75rem}.row>div{flex:1}
button,.button{display:block;width:100%;margin-top:1rem;padding:.8rem;font-size:1.1rem;font-weight:600;border:0;border-radius:8px;background:#1d4ed8;color:#fff;text-align:center;text-decoration:none;cursor:pointer}
button.secondary{background:#e5e7eb;color:#111827}
ul.methods{list-style:none;padding:0;margin:0}ul.methods li{margin:.5rem 0}
ul.methods a{display:flex;justify-content:space-between;padding:.9rem;border:1px solid #d1d5db;border-radius:8px;color:inherit;text-decoration:none}
.notice{padding:.75rem;border-radius:8px;background:#fef3c7;margin-bottom:1rem}.error{background:#fee2e2}.ok{background:#dcfce7}
.qr{display:flex;justify-content:center}.qr svg{width:220px;height:220px}
.qr-step{display:flex;flex-direction:column}.qr-step>*{margin-top:0}
@media (max-width:40rem){.qr-step>h2{order:-2}.qr-step>.open-app{order:-1}}
nav.lang{text-align:right;font-size:.9rem}nav.lang a{margin-left:.5rem}
.muted{color:#4b5563;font-size:.9rem}
`;

export interface Layout {
  readonly lang: Lang;
  readonly title: string;
  readonly body: string;
  readonly nonce: string;
  /** The current path+query without lang, for the language switch. */
  readonly switchPath: string;
  readonly script?: string | undefined;
  /** A page waiting on something reloads this URL every `seconds` where JavaScript is off (its script polls otherwise). */
  readonly noscriptRefresh?: { readonly url: string; readonly seconds: number } | undefined;
}

export function layout(page: Layout): string {
  const separator = page.switchPath.includes('?') ? '&' : '?';
  const switcher = LANGS.map((lang) =>
    lang === page.lang
      ? `<strong aria-current="true">${lang.toUpperCase()}</strong>`
      : `<a href="${escapeHtml(`${page.switchPath}${separator}lang=${lang}`)}" hreflang="${lang}" lang="${lang}">${lang.toUpperCase()}</a>`,
  ).join(' ');
  return `<!doctype html>
<html lang="${page.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(page.title)}</title>
${page.noscriptRefresh ? `<noscript><meta http-equiv="refresh" content="${page.noscriptRefresh.seconds};url=${escapeHtml(page.noscriptRefresh.url)}"></noscript>` : ''}
<style nonce="${page.nonce}">${STYLE}</style>
</head>
<body>
<main>
<nav class="lang" aria-label="${kitText(page.lang, 'language')}">${switcher}</nav>
${page.body}
</main>
${page.script ? `<script nonce="${page.nonce}">${page.script}</script>` : ''}
</body>
</html>`;
}

/** A script expression: the countdown's text ("4 мин 05 с" / "4 min 05 s") from the script variable of whole seconds left. */
export function timeLeftExpression(lang: Lang, seconds: string): string {
  return `Math.floor(${seconds}/60)+' ${kitText(lang, 'minutes')} '+String(${seconds}%60).padStart(2,'0')+' ${kitText(lang, 'seconds')}'`;
}
