// The money module: exact parsing from text, formatting, JSON numbers, rounding;
// and through the API, amounts read from the JSON lexeme, never from a double.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSET_SCALE, ASSETS, type Asset } from '../../src/money/asset.ts';
import { formatMinor, minorToJsonNumber, parseMinor, percentHalfUp } from '../../src/money/decimal.ts';
import { numberLexeme, parseJsonKeepingNumberLexemes } from '../../src/money/json-lexemes.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';

const asset = fc.constantFrom<Asset>(...ASSETS);
const minor = fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n });

describe('parseMinor and formatMinor', () => {
  it('parse(format(m)) is m for every amount and asset, as a decimal string and as a JSON number lexeme', () => {
    fc.assert(
      fc.property(asset, minor, (currency, amount) => {
        const text = formatMinor(amount, currency);
        expect(parseMinor(text, currency, 'json-number')).toEqual({ ok: true, minor: amount });
        // Decimal strings are unsigned: the API takes no negative amounts.
        expect(parseMinor(text, currency, 'decimal-string')).toEqual(
          amount >= 0n ? { ok: true, minor: amount } : expect.objectContaining({ ok: false }),
        );
      }),
      { numRuns: 2_000 },
    );
  });

  it('the JSON number of an amount reads back as the same amount', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), (amount) => {
        const lexeme = JSON.stringify(minorToJsonNumber(amount, 'RUB'));
        expect(parseMinor(lexeme, 'RUB', 'json-number')).toEqual({ ok: true, minor: amount });
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses more decimal places than the asset has, however many zeros come first or after', () => {
    fc.assert(
      fc.property(
        asset,
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.nat(30),
        fc.boolean(),
        (currency, amount, zeros, trailingZero) => {
          const extra = `${'0'.repeat(zeros)}${trailingZero ? '0' : '1'}`;
          const text = `${formatMinor(amount, currency)}${extra}`;
          const parsed = parseMinor(text, currency, 'json-number');
          expect(parsed.ok).toBe(false);
          expect(parsed.ok ? '' : parsed.problem).toContain(`more than ${ASSET_SCALE[currency]} decimal places`);
        },
      ),
      { numRuns: 1_000 },
    );
    expect(parseMinor('10.0000000000000001', 'RUB', 'json-number').ok).toBe(false);
    expect(parseMinor('100.00000000000000000001', 'RUB', 'json-number').ok).toBe(false);
    expect(parseMinor('10.000', 'RUB', 'json-number').ok).toBe(false);
  });

  it('reads exponents exactly and refuses what is not a number of its form', () => {
    expect(parseMinor('1e3', 'RUB', 'json-number')).toEqual({ ok: true, minor: 100_000n });
    expect(parseMinor('1.5E-1', 'RUB', 'json-number')).toEqual({ ok: true, minor: 15n });
    expect(parseMinor('1.5E-2', 'RUB', 'json-number').ok).toBe(false); // 0.015: three places
    expect(parseMinor('0.000001', 'USDT', 'decimal-string')).toEqual({ ok: true, minor: 1n });
    for (const text of [
      '',
      '.5',
      '5.',
      '+5',
      '-5',
      '-0',
      '0x10',
      '1e3',
      '1,5',
      ' 1',
      '1 ',
      'NaN',
      'Infinity',
      '1_000',
      '010',
      '00.5',
      '00',
    ]) {
      expect(parseMinor(text, 'RUB', 'decimal-string').ok, text).toBe(false);
    }
    // Canonical forms only, but any number of places up to the asset's.
    for (const [text, minor] of [
      ['0', 0n],
      ['0.5', 50n],
      ['10', 1_000n],
      ['10.50', 1_050n],
      ['100', 10_000n],
    ] as const) {
      expect(parseMinor(text, 'RUB', 'decimal-string')).toEqual({ ok: true, minor });
    }
    for (const text of ['01', '.5', '5.', '+5', '1e', '--1', '1e1234']) {
      expect(parseMinor(text, 'RUB', 'json-number').ok, text).toBe(false);
    }
  });

  it('rounds percentages half up', () => {
    expect(percentHalfUp(100n, 250)).toBe(3n); // 2.5 → 3
    expect(percentHalfUp(100n, 249)).toBe(2n); // 2.49 → 2
    expect(percentHalfUp(1n, 5_000)).toBe(1n); // 0.5 → 1
    expect(percentHalfUp(12_345n, 0)).toBe(0n);
  });
});

describe('JSON bodies keep their number lexemes', () => {
  it('every number, at any depth, keeps its source text; objects otherwise parse as usual', () => {
    const parsed = parseJsonKeepingNumberLexemes(
      '{"amount": 10.0000000000000001, "items": [{"n": 1e3}], "s": "10.5"}',
    ) as {
      amount: number;
      items: Array<{ n: number }>;
      s: string;
    };
    expect(parsed.amount).toBe(10);
    expect(numberLexeme(parsed, 'amount')).toBe('10.0000000000000001');
    expect(numberLexeme(parsed.items[0]!, 'n')).toBe('1e3');
    expect(numberLexeme(parsed, 's')).toBeUndefined();
    expect(Object.keys(parsed)).toEqual(['amount', 'items', 's']);
    expect(JSON.stringify(parsed)).toBe('{"amount":10,"items":[{"n":1000}],"s":"10.5"}');
  });

  it("refuses prototype poisoning as Fastify's own parser does", () => {
    expect(() => parseJsonKeepingNumberLexemes('{"__proto__": {"admin": true}}')).toThrow();
    expect(() => parseJsonKeepingNumberLexemes('{"constructor": {"prototype": {"admin": true}}}')).toThrow();
  });
});

describe.each(backends)('payment amounts through the API on %s', (backend) => {
  let testApp: TestApp;
  let key: string;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    key = (await testApp.createMerchant()).api_key;
  });
  afterAll(async () => {
    await testApp?.close();
  });

  const create = (amountLexeme: string) =>
    testApp.app.inject({
      method: 'POST',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: `{"amount": ${amountLexeme}, "currency": "RUB"}`,
    });

  it.each(['10.0000000000000001', '100.00000000000000000001', '10.000', '1500.501', '1e-3'])(
    '%s is refused with 400, and nothing is created',
    async (lexeme) => {
      const before = await testApp.context.db
        .selectFrom('payments')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow();
      const response = await create(lexeme);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        error: 'invalid_request',
        message: expect.stringContaining('at most 2 decimal places'),
      });
      const after = await testApp.context.db
        .selectFrom('payments')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow();
      expect(String(after.count)).toBe(String(before.count));
    },
  );

  it.each([
    ['1500.50', 1500.5],
    ['1e3', 1000],
    ['10.1', 10.1],
    ['1000000', 1000000],
  ])('%s is taken exactly as %d', async (lexeme, expected) => {
    const response = await create(lexeme);
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json().amount).toBe(expected);
  });
});
