// An object's history on its detail page: what happened to it and when, oldest
// first — state changes, ledger entries, webhook deliveries, the on-chain
// transaction — each a moment with a line of text and optional detail.
import type { Config } from '../../config.ts';
import { html, type Children, type View } from './html.ts';
import { translator, type Lang } from './cabinet-language.ts';
import LISTING_TEXTS from '../listings/listing-texts.json' with { type: 'json' };

const text = translator(LISTING_TEXTS);

export interface TimelineEntry {
  readonly at: Date;
  readonly what: Children;
  readonly detail?: Children;
}

export function Timeline(props: { lang: Lang; entries: readonly TimelineEntry[] }): View {
  const entries = [...props.entries].sort((a, b) => a.at.getTime() - b.at.getTime());
  return html`<section class="card">
    <h2>${text(props.lang, 'timeline')}</h2>
    ${
      entries.length === 0
        ? html`<p>${text(props.lang, 'no_events')}</p>`
        : html`<ol class="timeline">
            ${entries.map(
              (entry) =>
                html`<li>
                  <time datetime=${entry.at.toISOString()}
                    >${entry.at.toISOString().slice(0, 19).replace('T', ' ')} UTC</time
                  >
                  ${entry.what} ${entry.detail ? html`<div class="muted">${entry.detail}</div>` : null}
                </li>`,
            )}
          </ol>`
    }
  </section>`;
}

/**
 * A transaction hash, linked to the configured block explorer when the shop is
 * live (PAYGATE_TRON_EXPLORER_TX_URL); a sandbox transaction is on the
 * simulated chain, which no explorer knows.
 */
export function TransactionLink(props: {
  lang: Lang;
  config: Pick<Config, 'tronExplorerTxUrl'>;
  mode: 'sandbox' | 'live';
  txHash: string;
}): View {
  const template = props.config.tronExplorerTxUrl;
  if (props.mode !== 'live' || !template || !/^[0-9a-f]{64}$/i.test(props.txHash))
    return html`<code>${props.txHash}</code>`;
  return html`<a href=${template.replace('{tx}', props.txHash)} rel="noopener noreferrer" target="_blank"
    ><code>${props.txHash}</code> <span class="visually-hidden">${text(props.lang, 'explorer')}</span></a
  >`;
}
