// Computing TOTP codes in tests as an authenticator app would: from the secret the
// enrolment page shows, at the test clock's time.
import { Secret, TOTP } from 'otpauth';
import type { CabinetClient } from './cabinet-client.ts';

export function secretOnPage(body: string): string {
  const match = /<code class="secret" id="totp-secret">([A-Z2-7 ]+)<\/code>/.exec(body);
  if (!match?.[1]) throw new Error(`no TOTP secret on the page:\n${body.slice(0, 2000)}`);
  return match[1].replace(/ /g, '');
}

export function recoveryCodesOnPage(body: string): string[] {
  return [...body.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((match) => match[1]!);
}

export function totpCode(secret: string, at: Date): string {
  return new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: at.getTime(),
  });
}

/** Enrols the signed-in client's user; returns the secret and the recovery codes shown once. */
export async function enrol(client: CabinetClient, now: () => Date): Promise<{ secret: string; codes: string[] }> {
  const page = await client.get('/cabinet/account/two-factor');
  const secret = secretOnPage(page.body);
  const enabled = await client.post('/cabinet/account/two-factor/enable', { code: totpCode(secret, now()) });
  if (enabled.statusCode !== 200) throw new Error(`enrolment refused: ${enabled.statusCode}`);
  return { secret, codes: recoveryCodesOnPage(enabled.body) };
}
