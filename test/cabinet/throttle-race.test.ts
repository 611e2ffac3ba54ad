// Guesses sent all at once are throttled like guesses sent one by one: every
// attempt is counted before it is checked, under the subject's row lock, so a
// burst of wrong second-factor codes (or passwords) gets the free allowance and
// one more checked, and the rest are refused without a check. A right attempt
// does not use up the address's allowance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from '../../src/cabinet/sign-in/sign-in-service.ts';
import { checkSecondFactor } from '../../src/cabinet/two-factor/two-factor-service.ts';
import { findUser } from '../../src/cabinet/users/user-service.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient, createOwner, TEST_PASSWORD } from './cabinet-client.ts';
import { enrol } from './two-factor-support.ts';

/** Failures the throttle forgives before it locks (sign-in-throttle.ts): an account's, an address's. */
const ACCOUNT_ALLOWANCE = 5;
const BURST = 30;

describe.each(backends)('the sign-in throttle under parallel guesses on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  it(`${BURST} wrong second-factor codes at once: only the allowance and one more are checked`, async () => {
    const owner = await createOwner(testApp);
    const client = new CabinetClient(testApp.app);
    await client.signIn(owner.email);
    await enrol(client, () => testApp.clock.now());
    const user = (await findUser(testApp.context, owner.userId))!;
    const results = await Promise.all(
      Array.from({ length: BURST }, (_, index) =>
        checkSecondFactor(testApp.context, {
          user,
          code: '000000',
          purpose: 'step_up',
          actor: { kind: 'user', id: user.id, label: user.email, ip: `192.0.2.${index + 1}`, userAgent: 'race' },
        }),
      ),
    );
    expect(results.every((result) => result.kind === 'refused')).toBe(true);
    const checked = results.filter((result) => result.kind === 'refused' && result.retryAt === undefined);
    expect(checked.length).toBe(ACCOUNT_ALLOWANCE + 1);
    const failures = await testApp.context.db
      .selectFrom('audit_events')
      .select('id')
      .where('target', '=', user.id)
      .where('action', '=', 'user.second_factor_failed')
      .execute();
    expect(failures.length).toBe(ACCOUNT_ALLOWANCE + 1);
  });

  it(`${BURST} wrong passwords at once for one account: only the allowance and one more are checked`, async () => {
    const owner = await createOwner(testApp);
    const results = await Promise.all(
      Array.from({ length: BURST }, (_, index) =>
        signIn(
          { ...testApp.context, chain: testApp.crypto.chain },
          {
            email: owner.email,
            password: `wrong ${index}`,
            origin: { ip: `198.51.100.${index + 1}`, userAgent: 'race' },
          },
        ),
      ),
    );
    const checked = results.filter((result) => result.kind === 'refused' && result.retryAt === undefined);
    expect(checked.length).toBe(ACCOUNT_ALLOWANCE + 1);
  });

  it('right sign-ins from one address do not use up its allowance', async () => {
    const owner = await createOwner(testApp);
    for (let attempt = 0; attempt < 25; attempt++) {
      const result = await signIn(
        { ...testApp.context, chain: testApp.crypto.chain },
        {
          email: owner.email,
          password: TEST_PASSWORD,
          origin: { ip: '203.0.113.9', userAgent: 'office' },
        },
      );
      expect(result.kind).not.toBe('refused');
    }
  });
});
