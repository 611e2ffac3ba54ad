// The cabinet in headless Chromium: the gateway's app on a real loopback port, a
// browser, and a signed-in page. Where no Chromium can be had the suites are
// skipped (the global set-up says why, loudly), or fail under PAYGATE_REQUIRE_BROWSER=1 (CI).
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe } from 'vitest';
import type { Config } from '../../src/config.ts';
import { CHROMIUM_ARGS, browserForTests } from '../support/chromium.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import type { DatabaseBackend } from '../../src/db/database.ts';
import { freePort } from '../support/free-port.ts';
import { CabinetClient, TEST_PASSWORD } from './cabinet-client.ts';
import { enrol, totpCode } from './two-factor-support.ts';

const chromiumExecutable = browserForTests();
export const describeInBrowser = 'skip' in chromiumExecutable ? describe.skip : describe;

export interface CabinetInBrowser {
  readonly testApp: TestApp;
  readonly browser: Browser;
  readonly baseUrl: string;
  /** A fresh browser page (its own cookies) whose waits have no deadline of their own. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export async function startCabinetInBrowser(
  backend: DatabaseBackend,
  config: Partial<Config> = {},
): Promise<CabinetInBrowser> {
  if ('fail' in chromiumExecutable) throw new Error(chromiumExecutable.fail);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const testApp = await createTestApp(backend, { config: { publicUrl: baseUrl, ...config } });
  // Sessions and TOTP codes are checked against real time in a browser journey.
  testApp.clock.set(new Date());
  await testApp.app.listen({ port, host: '127.0.0.1' });
  const browser = await chromium.launch({
    executablePath: (chromiumExecutable as { path: string }).path,
    args: CHROMIUM_ARGS,
  });
  return {
    testApp,
    browser,
    baseUrl,
    async newPage() {
      const context = await browser.newContext({ baseURL: baseUrl });
      const page = await context.newPage();
      page.setDefaultTimeout(Number(process.env.DEBUG_PAGE_TIMEOUT ?? 0));
      return page;
    },
    async close() {
      await browser.close();
      await testApp.close();
    },
  };
}

/** Signs in through the form, as a person would (a user without a second factor lands signed in). */
export async function signInInBrowser(page: Page, email: string, password = TEST_PASSWORD): Promise<void> {
  await page.goto('/cabinet/sign-in?back=%2Fcabinet%2Fshops');
  await page.getByLabel(/Email|Эл. почта/).fill(email);
  await page.getByLabel(/Password|Пароль/).fill(password);
  await page.getByRole('button', { name: /Sign in|Войти/ }).click();
  await page.waitForURL(/\/cabinet\/(shops|sign-in\/two-factor)/);
}

/**
 * Enrols the user's second factor through the app, then signs in through the form with the password
 * and a TOTP code, as a person would. Owners, admins and finance need a second factor before any money
 * page, which otherwise sends them to enrolment. Returns the secret (for codes the journey types later).
 */
export async function signInWithSecondFactorInBrowser(page: Page, testApp: TestApp, email: string): Promise<string> {
  const client = new CabinetClient(testApp.app);
  await client.signIn(email);
  const { secret } = await enrol(client, () => testApp.clock.now());
  // A code's time step is accepted once: the sign-in takes the step after the enrolment's.
  testApp.clock.advance(30_000);
  await signInInBrowser(page, email);
  await page.getByLabel(/Code or recovery code|Код или резервный код/).fill(totpCode(secret, testApp.clock.now()));
  await page.getByRole('button', { name: /^(Confirm|Подтвердить)$/ }).click();
  await page.waitForURL(/\/cabinet\/shops/);
  return secret;
}
