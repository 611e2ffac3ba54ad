// Shared steps of the crypto route and page tests: the real app with its sandbox
// chain on a manual block clock (blocks only when a test mines), a shop with a
// key, and JSON calls through app.inject.
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createCryptoChain } from '../../../src/crypto/chain/crypto-chain.ts';
import type { DatabaseBackend } from '../../../src/db/database.ts';
import { parseMinor } from '../../../src/money/decimal.ts';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { uniqueName } from '../../support/seeded-random.ts';

export interface CryptoTestApp extends TestApp {
  /** A new shop (sandbox unless asked) and its key with every scope. */
  shop(mode?: 'sandbox' | 'live'): Promise<{ shopId: string; key: string }>;
  call(key: string, method: InjectOptions['method'], url: string, body?: unknown): Promise<LightMyRequestResponse>;
}

export async function createCryptoTestApp(
  backend: DatabaseBackend,
  options: Parameters<typeof createTestApp>[1] = {},
): Promise<CryptoTestApp> {
  // These files send hundreds of requests with one key within a minute; the limit has its own tests.
  const testApp = await createTestApp(backend, {
    chain: ({ config, logger }) => createCryptoChain({ config, dataDir: undefined, logger, sandboxClock: 'manual' }),
    ...options,
    config: { rateLimitPerMinute: 1_000_000, ...options.config },
  });
  return {
    ...testApp,
    async shop(mode = 'sandbox') {
      const merchant = await testApp.createMerchant({ mode });
      return { shopId: merchant.shop_id, key: merchant.api_key };
    },
    call(key, method, url, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      return testApp.app.inject({
        method,
        url,
        headers,
        payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
  };
}

/** A fresh external_id, unique across the tests of a run. */
export function externalId(label = 'order'): string {
  return uniqueName(label);
}

export function invoiceBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { external_id: externalId(), amount: '25.5', network: 'TRC20', ...overrides };
}

/** Strict TRON address shape (the services validate Base58Check; this is what a client sees). */
export const TRON_ADDRESS_PATTERN = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/** Micro-USDT of a decimal string the API answered, whatever number of places it shows. */
export function micro(decimal: string): bigint {
  const parsed = parseMinor(decimal, 'USDT', 'decimal-string');
  if (!parsed.ok) throw new Error(`"${decimal}" is not a USDT decimal string: ${parsed.problem}`);
  return parsed.minor;
}
