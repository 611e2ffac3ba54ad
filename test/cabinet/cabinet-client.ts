// A browser-less client of the cabinet for integration tests: it keeps cookies
// like a browser (per path, HttpOnly included), reads the CSRF token of the page
// it last opened, and posts forms through the real app (`inject`).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { addMembership, createMerchantWithOwner, createUser } from '../../src/cabinet/users/user-service.ts';
import type { Role } from '../../src/cabinet/roles.ts';
import type { TestApp } from '../support/app.ts';
import { uniqueName } from '../support/seeded-random.ts';

export const TEST_PASSWORD = 'correct horse battery';

export class CabinetClient {
  readonly cookies = new Map<string, string>();
  lastPage = '';
  private readonly app: FastifyInstance;

  constructor(app: FastifyInstance) {
    this.app = app;
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies as Array<{ name: string; value: string; expires?: Date; maxAge?: number }>) {
      const cleared =
        cookie.value === '' || cookie.maxAge === 0 || (cookie.expires && cookie.expires.getTime() < Date.now());
      if (cleared) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({
      method: 'GET',
      url,
      headers: { cookie: this.cookieHeader(), ...headers },
    });
    this.keep(response);
    if (response.headers['content-type']?.toString().startsWith('text/html')) this.lastPage = response.body;
    return response;
  }

  /** The CSRF token of the last page opened. */
  csrf(): string {
    const match = /name="csrf" value="([^"]+)"/.exec(this.lastPage);
    if (!match?.[1]) throw new Error(`no CSRF field on the last page:\n${this.lastPage.slice(0, 2000)}`);
    return match[1];
  }

  /** Posts a form; the CSRF token of the last page is added unless `fields.csrf` is given. */
  async post(
    url: string,
    fields: Record<string, string> = {},
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams({ csrf: this.lastPage ? this.csrf() : '', ...fields }).toString();
    const response = await this.app.inject({
      method: 'POST',
      url,
      payload: body,
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
    this.keep(response);
    if (response.headers['content-type']?.toString().startsWith('text/html')) this.lastPage = response.body;
    return response;
  }

  /** Posts exactly `fields` (no CSRF token is added): for forged and token-less requests. */
  async postRaw(
    url: string,
    fields: Record<string, string> = {},
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({
      method: 'POST',
      url,
      payload: new URLSearchParams(fields).toString(),
      headers: { cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
    this.keep(response);
    return response;
  }

  /** Signs in with the password (a user without a second factor ends up signed in). */
  async signIn(email: string, password = TEST_PASSWORD): Promise<LightMyRequestResponse> {
    await this.get('/cabinet/sign-in');
    return this.post('/cabinet/sign-in', { email, password });
  }
}

export interface CabinetPerson {
  readonly email: string;
  readonly userId: string;
  readonly merchantId: string;
  readonly shopId: string;
  readonly apiKey: string;
}

/** A merchant made as `paygate merchant create --password` makes it: its owner can sign in. */
export async function createOwner(testApp: TestApp, options: { live?: boolean } = {}): Promise<CabinetPerson> {
  const unique = uniqueName('owner');
  const email = `owner-${unique}@example.test`;
  const created = await createMerchantWithOwner(testApp.context, {
    name: `Cabinet shop ${unique}`,
    email,
    password: TEST_PASSWORD,
    mode: options.live ? 'live' : 'sandbox',
  });
  return {
    email,
    userId: created.owner_user_id!,
    merchantId: created.merchant_id,
    shopId: created.shop_id,
    apiKey: created.api_key,
  };
}

/** Another person of the owner's merchant, with `role`. */
export async function addMember(testApp: TestApp, owner: CabinetPerson, role: Role): Promise<CabinetPerson> {
  const email = `${role}-${uniqueName('member')}@example.test`;
  const user = await createUser(testApp.context, { email, password: TEST_PASSWORD });
  await addMembership(testApp.context, testApp.context.db, { userId: user.id, merchantId: owner.merchantId, role });
  return { ...owner, email, userId: user.id };
}
