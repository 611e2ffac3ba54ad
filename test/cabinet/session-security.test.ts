// The cabinet session's defences through the real app: a planted session cookie is
// never promoted by sign-in, the cookie's flags (and `__Host-` + Secure behind
// https), the 12-hour end that activity does not push back, the anti-framing and
// CSP headers on every page, and `back=` never leading off the cabinet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE_PLAIN, SESSION_COOKIE_SECURE } from '../../src/cabinet/cabinet-http.ts';
import { newSecretToken } from '../../src/cabinet/secret-tokens.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient, createOwner, TEST_PASSWORD } from './cabinet-client.ts';
import { cabinetRoutes, concretePath, describeRoute } from './cabinet-route-table.ts';

const PUBLIC_URL = 'http://paygate.test';

/** back= values that try to leave the cabinet (or its site). */
const OFFSITE_BACKS = [
  '//evil.example',
  'https://evil.example',
  'http://paygate.test.evil.example/cabinet',
  '/\\evil.example',
  '\\\\evil.example',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  ' //evil.example',
  '/cabinet/../evil',
  '/cabinet/%2e%2e/evil',
  '/cabinet\\..\\evil',
  '/cabinet/\r\nSet-Cookie: planted=1',
  '/cabinet/\tx',
  'data:text/html,<script>alert(1)</script>',
];

/** Where a redirect lands, resolved as a browser would. */
function landing(location: unknown): URL {
  return new URL(String(location), PUBLIC_URL);
}

function expectInsideCabinet(location: unknown, label: string): void {
  const url = landing(location);
  expect(url.origin, label).toBe(PUBLIC_URL);
  expect(url.pathname, label).toMatch(/^\/cabinet(?:\/|$)/);
}

describe.each(backends)('cabinet session security on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend, { config: { publicUrl: PUBLIC_URL } });
  });
  afterAll(() => testApp?.close());

  it('a session cookie planted before sign-in is replaced by sign-in, and the planted value opens nothing', async () => {
    const owner = await createOwner(testApp);
    const planted = newSecretToken();
    const victim = new CabinetClient(testApp.app);
    victim.cookies.set(SESSION_COOKIE_PLAIN, planted);
    expect((await victim.signIn(owner.email)).statusCode).toBe(303);
    const held = victim.cookies.get(SESSION_COOKIE_PLAIN);
    expect(held).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(held).not.toBe(planted);
    expect((await victim.get('/cabinet/account')).statusCode).toBe(200);
    const attacker = new CabinetClient(testApp.app);
    attacker.cookies.set(SESSION_COOKIE_PLAIN, planted);
    const refused = await attacker.get('/cabinet/account');
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toMatch(/^\/cabinet\/sign-in/);
  });

  it('over http the session cookie is HttpOnly, SameSite=Lax and scoped to /cabinet, and not Secure', async () => {
    const owner = await createOwner(testApp);
    const signedIn = await new CabinetClient(testApp.app).signIn(owner.email);
    const cookie = [signedIn.headers['set-cookie']].flat().find((each) => each?.startsWith(`${SESSION_COOKIE_PLAIN}=`));
    expect(cookie).toBeDefined();
    const flags = cookie!.split(';').map((part) => part.trim());
    expect(flags).toEqual(expect.arrayContaining(['Path=/cabinet', 'HttpOnly', 'SameSite=Lax']));
    expect(flags).not.toContain('Secure');
  });

  it('behind an https public URL the session cookie is __Host- prefixed, Secure, HttpOnly, SameSite=Lax, Path=/', async () => {
    const httpsApp = await createTestApp(backend, { config: { publicUrl: 'https://pay.example' } });
    try {
      const owner = await createOwner(httpsApp);
      const client = new CabinetClient(httpsApp.app);
      const signedIn = await client.signIn(owner.email);
      const cookies = [signedIn.headers['set-cookie']].flat();
      const cookie = cookies.find((each) => each?.startsWith(`${SESSION_COOKIE_SECURE}=`));
      expect(cookie, String(cookies)).toBeDefined();
      const flags = cookie!.split(';').map((part) => part.trim());
      expect(flags).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Lax', 'Secure']));
      expect(flags.some((flag) => flag.startsWith('Domain='))).toBe(false);
      expect(cookies.some((each) => each?.startsWith(`${SESSION_COOKIE_PLAIN}=`))).toBe(false);
      expect((await client.get('/cabinet/account')).statusCode).toBe(200);
    } finally {
      await httpsApp.close();
    }
  });

  it('a session ends 12 hours after sign-in even when used every 25 minutes', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    const step = 25 * 60_000;
    for (let elapsed = step; elapsed < 12 * 3_600_000; elapsed += step) {
      testApp.clock.advance(step);
      expect((await client.get('/cabinet/account')).statusCode, `after ${elapsed / 60_000} min`).toBe(200);
    }
    testApp.clock.advance(step);
    const ended = await client.get('/cabinet/account');
    expect(ended.statusCode).toBe(303);
    expect(ended.headers.location).toMatch(/^\/cabinet\/sign-in/);
  });

  it("every GET page forbids framing (frame-ancestors 'none', X-Frame-Options DENY) and its CSP allows no inline code", async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    const anonymous = new CabinetClient(testApp.app);
    const paths = [
      ...cabinetRoutes(testApp)
        .filter((route) => route.method === 'GET')
        .map((route) => ({ name: describeRoute(route), path: concretePath(route, owner.shopId) })),
      { name: 'an unknown cabinet path', path: '/cabinet/no-such-page' },
    ];
    expect(paths.length).toBeGreaterThan(1);
    for (const { name, path } of paths)
      for (const [who, browser] of [
        ['signed in', client],
        ['signed out', anonymous],
      ] as const) {
        const response = await browser.get(path);
        const label = `${name} ${who} (${response.statusCode})`;
        const csp = String(response.headers['content-security-policy']);
        expect(csp, label).toContain("frame-ancestors 'none'");
        expect(csp, label).not.toContain('unsafe-inline');
        expect(csp, label).not.toContain('unsafe-eval');
        expect(csp, label).toMatch(/script-src 'self'(;|$)/);
        expect(response.headers['x-frame-options'], label).toBe('DENY');
        expect(response.headers['x-content-type-options'], label).toBe('nosniff');
      }
  });

  it('a back= inside the cabinet is kept as given', async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.get('/cabinet/sign-in');
    const signedIn = await client.post('/cabinet/sign-in', {
      email: owner.email,
      password: TEST_PASSWORD,
      back: '/cabinet/account?tab=sessions',
    });
    expect(signedIn.headers.location).toBe('/cabinet/account?tab=sessions');
  });

  it.each(OFFSITE_BACKS)('back=%j after sign-in lands inside /cabinet', async (back) => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.get('/cabinet/sign-in');
    const signedIn = await client.post('/cabinet/sign-in', { email: owner.email, password: TEST_PASSWORD, back });
    expect(signedIn.statusCode).toBe(303);
    expectInsideCabinet(signedIn.headers.location, 'sign-in form');
    const again = await client.get(`/cabinet/sign-in?back=${encodeURIComponent(back)}`);
    expect(again.statusCode).toBe(303);
    expectInsideCabinet(again.headers.location, 'sign-in page when signed in');
    const language = await client.get(`/cabinet/language/en?back=${encodeURIComponent(back)}`);
    expect(language.statusCode).toBe(303);
    expectInsideCabinet(language.headers.location, 'language switch');
  });
});
