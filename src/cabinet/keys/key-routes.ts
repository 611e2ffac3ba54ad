// /cabinet/shops/:shopId/keys: a shop's API keys. Listing needs keys.read;
// creating and revoking need keys.manage and a recent second factor (step-up).
// A new key's secret is in the response to its creation only (rendered there,
// never carried by a redirect) and never again.
import type { FastifyInstance } from 'fastify';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../http/api-scopes.ts';
import {
  API_KEY_NAME_MAX,
  apiKeysOfShop,
  createApiKey,
  revokeApiKey,
  type ApiKeyListing,
} from '../../merchants/merchant-service.ts';
import { InvalidRequestError } from '../../errors.ts';
import { actorOf, cabinetOf, redirectTo, sendPage, shopOf, type CabinetHttpDeps } from '../cabinet-http.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import { roleCan } from '../roles.ts';
import { html, type View } from '../views/html.ts';
import { CopyButton, CsrfField } from '../views/layout.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import KEY_TEXTS from './key-texts.json' with { type: 'json' };

const text = translator(KEY_TEXTS);

const READ = { schema: { hide: true }, config: { cabinet: { access: { permission: 'keys.read' as const } } } };
const MANAGE = {
  schema: { hide: true },
  config: { cabinet: { access: { permission: 'keys.manage' as const, stepUp: true } } },
};

function when(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The ticked scope checkboxes (one value or several), each a known scope. */
function scopesOf(value: unknown): ApiKeyScope[] {
  const ticked = (Array.isArray(value) ? value : value === undefined ? [] : [value]).map(String);
  const scopes = API_KEY_SCOPES.filter((scope) => ticked.includes(scope));
  if (scopes.length === 0 || scopes.length !== new Set(ticked).size)
    throw new InvalidRequestError(`choose at least one scope of ${API_KEY_SCOPES.join(', ')}`);
  return scopes;
}

export function keyRoutes(deps: CabinetDeps, http: CabinetHttpDeps) {
  return async (app: FastifyInstance) => {
    app.get('/cabinet/shops/:shopId/keys', READ, async (request, reply) => {
      const { lang, role, session } = cabinetOf(request);
      const shop = shopOf(request);
      const keys = await apiKeysOfShop(deps.db, shop.shopId);
      const manage = role !== undefined && roleCan(role, 'keys.manage');
      const revoked = (request.query as Record<string, string | undefined>).revoked === '1';
      const csrf = session!.csrf_token;
      return sendPage(request, reply, http, {
        title: `${text(lang, 'keys')} · ${shop.name}`,
        notice: revoked ? { kind: 'ok', text: text(lang, 'revoked') } : undefined,
        children: html`
          <p><a href=${`/cabinet/shops/${shop.shopId}`}>${shop.name}</a></p>
          <h1>${text(lang, 'keys')}</h1>
          <p class="muted">${text(lang, 'intro')}</p>
          ${KeyList({ lang, shopId: shop.shopId, keys, csrf: manage ? csrf : undefined })}
          ${manage ? CreateKeyForm({ lang, shopId: shop.shopId, csrf }) : null}
        `,
      });
    });

    app.post('/cabinet/shops/:shopId/keys', MANAGE, async (request, reply) => {
      const { lang } = cabinetOf(request);
      const shop = shopOf(request);
      const form = (request.body ?? {}) as Record<string, unknown>;
      const scopes = scopesOf(form.scopes);
      const key = await createApiKey(deps, shop.shopId, scopes, {
        name: String(form.name ?? ''),
        actor: actorOf(request),
      });
      return sendPage(request, reply, http, {
        title: text(lang, 'created_title'),
        notice: { kind: 'info', text: text(lang, 'created_once') },
        children: html`
          <h1>${text(lang, 'created_title')}</h1>
          <section class="card">
            <h2>${text(lang, 'secret')}</h2>
            <code class="secret" id="new-api-key">${key.api_key}</code>
            ${CopyButton({ lang, target: 'new-api-key' })}
            <p class="muted">${scopes.join(', ')}</p>
            <p><a href=${`/cabinet/shops/${shop.shopId}/keys`}>${text(lang, 'back_to_keys')}</a></p>
          </section>
        `,
      });
    });

    app.post('/cabinet/shops/:shopId/keys/:keyId/revoke', MANAGE, async (request, reply) => {
      const shop = shopOf(request);
      const { keyId } = request.params as { keyId: string };
      await revokeApiKey(deps, keyId, { shopId: shop.shopId, actor: actorOf(request) });
      return redirectTo(reply, `/cabinet/shops/${shop.shopId}/keys?revoked=1`);
    });
  };
}

function KeyList(props: { lang: Lang; shopId: string; keys: ApiKeyListing[]; csrf: string | undefined }): View {
  const { lang } = props;
  if (props.keys.length === 0) return html`<section class="card"><p>${text(lang, 'none')}</p></section>`;
  return html`<section class="card">
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">${text(lang, 'name')}</th>
            <th scope="col">${text(lang, 'prefix')}</th>
            <th scope="col">${text(lang, 'scopes')}</th>
            <th scope="col">${text(lang, 'created')}</th>
            <th scope="col">${text(lang, 'last_used')}</th>
            <th scope="col">${text(lang, 'status')}</th>
            ${props.csrf ? html`<th scope="col">${text(lang, 'actions')}</th>` : null}
          </tr>
        </thead>
        <tbody>
          ${props.keys.map(
            (key) =>
              html`<tr>
                <td>${key.name || html`<span class="muted">${text(lang, 'unnamed')}</span>`}</td>
                <td><code>${key.key_prefix}…</code></td>
                <td>${key.scopes.join(', ')}</td>
                <td>${when(key.created_at)}</td>
                <td>${key.last_used_at ? when(key.last_used_at) : text(lang, 'never')}</td>
                <td>
                  ${
                    key.revoked_at
                      ? html`<span class="badge">${text(lang, 'revoked_at')}</span> ${when(key.revoked_at)}`
                      : text(lang, 'active')
                  }
                </td>
                ${
                  props.csrf
                    ? html`<td>
                        ${
                          key.revoked_at
                            ? null
                            : html`<form
                                method="post"
                                action=${`/cabinet/shops/${props.shopId}/keys/${key.id}/revoke`}
                                class="inline"
                              >
                                ${CsrfField({ token: props.csrf })}
                                <button
                                  type="submit"
                                  class="danger"
                                  aria-label=${`${text(lang, 'revoke')} ${key.name || key.key_prefix}`}
                                >
                                  ${text(lang, 'revoke')}
                                </button>
                              </form>`
                        }
                      </td>`
                    : null
                }
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}

function CreateKeyForm(props: { lang: Lang; shopId: string; csrf: string }): View {
  const { lang } = props;
  return html`<section class="card">
    <h2>${text(lang, 'create_key')}</h2>
    <form method="post" action=${`/cabinet/shops/${props.shopId}/keys`}>
      ${CsrfField({ token: props.csrf })}
      <label for="key-name">${text(lang, 'name')}</label>
      <input id="key-name" type="text" name="name" maxlength=${API_KEY_NAME_MAX} />
      <fieldset>
        <legend>${text(lang, 'scopes')}</legend>
        ${API_KEY_SCOPES.map(
          (scope) =>
            html`<label class="check"
              ><input type="checkbox" name="scopes" value=${scope} /> ${text(lang, `scope_${scope}`)}</label
            >`,
        )}
      </fieldset>
      <button type="submit">${text(lang, 'create')}</button>
    </form>
  </section>`;
}
