// TOTP (RFC 6238) with the otpauth package: SHA-1, 6 digits, 30 s steps — what
// every authenticator app reads from the QR code. A code is accepted for the
// current step and one either side (clock drift); the caller refuses a step it
// has already accepted (replay).
import { Secret, TOTP } from 'otpauth';

const PERIOD_SECONDS = 30;
const ISSUER = 'Paygate';

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totpOf(secret: string, label: string): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });
}

/** The otpauth:// URI an authenticator app reads (the QR code's content). */
export function totpUri(secret: string, email: string): string {
  return totpOf(secret, email).toString();
}

/** The time step a well-formed `code` matches at `now` (±1 step), or undefined. */
export function matchingStep(secret: string, code: string, now: Date): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const timestamp = now.getTime();
  const delta = totpOf(secret, '').validate({ token: code, timestamp, window: 1 });
  if (delta === null) return undefined;
  return TOTP.counter({ period: PERIOD_SECONDS, timestamp }) + delta;
}

/** Six digits, letters-free after spaces are taken out: a TOTP code rather than a recovery code. */
export function looksLikeTotp(code: string): boolean {
  return /^\d{6}$/.test(code);
}
