// `paygate user create|reset-password|disable|enable` through the real commands on
// the embedded database, then checked by signing in to the running gateway's cabinet.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../../src/merchants/merchant-service.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../support/cli.ts';

/** Signs in through the cabinet's form as a browser would (the double-submit cookie, then the post). */
async function signInStatus(baseUrl: string, email: string, password: string): Promise<number> {
  const page = await request(`${baseUrl}/cabinet/sign-in`);
  const body = await page.body.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(body)?.[1] ?? '';
  const cookies = [page.headers['set-cookie'] ?? []].flat().map((cookie) => cookie.split(';')[0]);
  const posted = await request(`${baseUrl}/cabinet/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; ') },
    body: new URLSearchParams({ csrf, email, password }).toString(),
  });
  await posted.body.dump();
  return posted.statusCode;
}

describe('paygate user commands (embedded database)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-user-cli-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates members, sets passwords and links, disables and enables; the cabinet honours each', async () => {
    const env = { PAYGATE_DATA_DIR: dataDir };
    const run = (...args: string[]) => runPaygateInProcess(['user', ...args], env);
    const merchant = lastJsonLine<CreatedMerchant>(
      (
        await runPaygateInProcess(
          [
            'merchant',
            'create',
            '--name',
            'People',
            '--email',
            'owner@people.test',
            '--password',
            'first owner pass',
            '--json',
          ],
          env,
        )
      ).stdout,
    );
    const dev = await run(
      'create',
      '--email',
      'dev@people.test',
      '--merchant',
      merchant.merchant_id,
      '--role',
      'developer',
      '--password',
      'developer pass 1',
    );
    expect(dev.code, dev.stderr).toBe(0);
    expect(dev.stdout).toContain(`developer of ${merchant.merchant_id}`);
    const invited = await run(
      'create',
      '--email',
      'new@people.test',
      '--merchant',
      merchant.merchant_id,
      '--role',
      'viewer',
    );
    expect(invited.code, invited.stderr).toBe(0);
    expect(invited.stdout).toMatch(
      /set-password link \(works once within 1 hour\): http:\/\/\S+\/cabinet\/password-reset\/[A-Za-z0-9_-]{43}/,
    );

    const badRole = await run(
      'create',
      '--email',
      'x@people.test',
      '--merchant',
      merchant.merchant_id,
      '--role',
      'boss',
    );
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('--role must be one of owner, admin, developer, finance, viewer');
    const lonelyRole = await run('create', '--email', 'x@people.test', '--role', 'owner');
    expect(lonelyRole.code).toBe(2);
    const noMerchant = await run('create', '--email', 'x@people.test', '--merchant', 'mer_nope', '--role', 'viewer');
    expect(noMerchant.code).toBe(1);
    expect(noMerchant.stderr).toContain('No merchant mer_nope');
    const twice = await run('create', '--email', 'DEV@people.test', '--password', 'developer pass 2');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('already exists');

    const reset = await run('reset-password', '--email', 'owner@people.test', '--password', 'second owner pass');
    expect(reset.code, reset.stderr).toBe(0);
    const link = await run('reset-password', '--email', 'owner@people.test');
    expect(link.code, link.stderr).toBe(0);
    const resetPath = /(\/cabinet\/password-reset\/[A-Za-z0-9_-]{43})/.exec(link.stdout)?.[1];
    expect(resetPath).toBeDefined();
    const nobody = await run('reset-password', '--email', 'nobody@people.test');
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('no user with email nobody@people.test');
    expect((await run('disable', '--email', 'dev@people.test')).code).toBe(0);

    const server = await startPaygate([], { ...env, PORT: '0' });
    try {
      expect(await signInStatus(server.url, 'owner@people.test', 'first owner pass')).toBe(401);
      expect(await signInStatus(server.url, 'owner@people.test', 'second owner pass')).toBe(303);
      expect(await signInStatus(server.url, 'dev@people.test', 'developer pass 1')).toBe(401);
      const linkPage = await request(`${server.url}${resetPath}`);
      await linkPage.body.dump();
      expect(linkPage.statusCode).toBe(200);
      // Beside the running gateway, the command runs inside it.
      const enabled = await run('enable', '--email', 'dev@people.test');
      expect(enabled.code, enabled.stderr).toBe(0);
      expect(await signInStatus(server.url, 'dev@people.test', 'developer pass 1')).toBe(303);
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('close', resolve));
    }
  });
});
