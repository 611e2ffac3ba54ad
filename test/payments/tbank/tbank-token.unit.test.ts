// T-Bank's Token, checked against the two worked examples of its documentation
// (fixtures/tbank-docs-examples.json, copied from https://www.tbank.ru/kassa/dev/payments/index.html).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hasValidTbankToken, tbankToken, tbankTokenInput } from '../../../src/payments/connectors/tbank/tbank-token.ts';

const docs = JSON.parse(readFileSync(new URL('./fixtures/tbank-docs-examples.json', import.meta.url), 'utf8')) as {
  tokenExample: { password: string; concatenated: string; token: string; request: Record<string, unknown> };
  notificationTokenExample: {
    password: string;
    concatenated: string;
    token: string;
    notification: Record<string, unknown>;
  };
};

describe('T-Bank Token', () => {
  it('signs the documented Init example to the documented value, leaving DATA and Receipt out', () => {
    const { password, concatenated, token, request } = docs.tokenExample;
    expect(tbankTokenInput(request, password)).toBe(concatenated);
    expect(tbankToken(request, password)).toBe(token);
    expect(hasValidTbankToken(request, password)).toBe(true);
  });

  it('verifies the documented notification example, Token itself excluded and booleans written true', () => {
    const { password, concatenated, token, notification } = docs.notificationTokenExample;
    expect(tbankTokenInput(notification, password)).toBe(concatenated);
    expect(tbankToken(notification, password)).toBe(token);
    expect(hasValidTbankToken(notification, password)).toBe(true);
  });

  it('refuses a notification whose amount or password was changed', () => {
    const { password, notification } = docs.notificationTokenExample;
    expect(hasValidTbankToken({ ...notification, Amount: 985500 }, password)).toBe(false);
    expect(hasValidTbankToken(notification, `${password}x`)).toBe(false);
    expect(hasValidTbankToken({ ...notification, Token: undefined }, password)).toBe(false);
  });
});
