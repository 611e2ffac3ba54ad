// The frame of every cabinet page: the top bar (merchant switch, language switch,
// sign-out), the section navigation, a notice, then the page's own content.
// Pages before sign-in get the same frame without the signed-in parts.
import { CABINET_ASSETS } from '../assets/cabinet-assets.ts';
import { html, type Children, type View } from './html.ts';
import { LANGS, layoutText, type Lang } from './cabinet-language.ts';

export interface Notice {
  readonly kind: 'ok' | 'error' | 'info';
  readonly text: string;
}

/** Who is signed in, as the frame shows it. */
interface SignedInFrame {
  readonly email: string;
  readonly csrfToken: string;
  readonly merchantId: string | null;
  readonly merchants: ReadonlyArray<{ readonly id: string; readonly name: string }>;
  /** The sections the user's role may open, in order. */
  readonly sections: ReadonlyArray<{ readonly href: string; readonly label: string }>;
}

export interface PageFrame {
  readonly lang: Lang;
  readonly title: string;
  /** The path of this page (with its query), for the language switch and the current section. */
  readonly path: string;
  readonly signedIn?: SignedInFrame | undefined;
  readonly notice?: Notice | undefined;
  readonly children: Children;
}

function LanguageSwitch(props: { lang: Lang; path: string }): View {
  const back = encodeURIComponent(props.path);
  return html`<nav class="lang" aria-label=${layoutText(props.lang, 'language')}>
    ${LANGS.map((lang) =>
      lang === props.lang
        ? html`<strong aria-current="true" lang=${lang}>${lang.toUpperCase()}</strong>`
        : html`<a href=${`/cabinet/language/${lang}?back=${back}`} hreflang=${lang} lang=${lang}
            >${lang.toUpperCase()}</a
          >`,
    )}
  </nav>`;
}

function MerchantSwitch(props: { lang: Lang; frame: SignedInFrame }): View {
  if (props.frame.merchants.length < 2) return null;
  return html`<form method="post" action="/cabinet/merchant" class="actions">
    <input type="hidden" name="csrf" value=${props.frame.csrfToken} />
    <label for="merchant-switch" class="muted">${layoutText(props.lang, 'merchant')}</label>
    <select id="merchant-switch" name="merchant_id">
      ${props.frame.merchants.map(
        (merchant) =>
          html`<option value=${merchant.id} selected=${merchant.id === props.frame.merchantId}>
            ${merchant.name}
          </option>`,
      )}
    </select>
    <button type="submit" class="secondary">${layoutText(props.lang, 'switch')}</button>
  </form>`;
}

function Sections(props: { lang: Lang; path: string; frame: SignedInFrame }): View {
  const current = props.path.split('?')[0] ?? '';
  return html`<nav class="sections" aria-label=${layoutText(props.lang, 'main_navigation')}>
    <ul>
      ${props.frame.sections.map((section) => {
        const here = current === section.href || current.startsWith(`${section.href}/`);
        return html`<li><a href=${section.href} aria-current=${here ? 'page' : undefined}>${section.label}</a></li>`;
      })}
    </ul>
  </nav>`;
}

export function Page(frame: PageFrame): View {
  const { lang } = frame;
  return html`<html lang=${lang}>
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width,initial-scale=1" />
      <meta name="robots" content="noindex" />
      <title>${frame.title} · ${layoutText(lang, 'cabinet')}</title>
      <link rel="stylesheet" href=${CABINET_ASSETS.stylesheet.path} />
      <script src=${CABINET_ASSETS.script.path} defer></script>
    </head>
    <body>
      <a class="skip" href="#content">${layoutText(lang, 'skip_to_content')}</a>
      <header class="top">
        <a class="brand" href="/cabinet">${layoutText(lang, 'cabinet')}</a>
        ${frame.signedIn ? MerchantSwitch({ lang, frame: frame.signedIn }) : null}
        ${LanguageSwitch({ lang, path: frame.path })}
        ${
          frame.signedIn
            ? html`<div class="actions">
                <span class="muted">${frame.signedIn.email}</span>
                <form method="post" action="/cabinet/sign-out" class="inline">
                  <input type="hidden" name="csrf" value=${frame.signedIn.csrfToken} />
                  <button type="submit">${layoutText(lang, 'sign_out')}</button>
                </form>
              </div>`
            : null
        }
      </header>
      ${frame.signedIn ? Sections({ lang, path: frame.path, frame: frame.signedIn }) : null}
      <main id="content">
        ${
          frame.notice
            ? html`<div
                class=${`notice ${frame.notice.kind}`}
                role=${frame.notice.kind === 'error' ? 'alert' : 'status'}
              >
                ${frame.notice.text}
              </div>`
            : null
        }
        ${frame.children}
      </main>
    </body>
  </html>`;
}

/** A copy button (shown by the script only) for the element with this id. */
export function CopyButton(props: { lang: Lang; target: string }): View {
  return html`<button
    type="button"
    class="secondary"
    hidden
    data-copy=${props.target}
    data-copied=${layoutText(props.lang, 'copied')}
  >
    ${layoutText(props.lang, 'copy')}
  </button>`;
}

/** The hidden field every state-changing form of a signed-in page carries. */
export function CsrfField(props: { token: string }): View {
  return html`<input type="hidden" name="csrf" value=${props.token} />`;
}
