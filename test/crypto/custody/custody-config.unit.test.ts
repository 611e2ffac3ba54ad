// PAYGATE_CUSTODY_TOLERANCE_USDT (a USDT decimal string read exactly, 0.01 by
// default) and PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS (600 by default, 30..86400):
// anything else stops the start with a message naming the setting.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';

const base = { PAYGATE_DATA_DIR: 'memory://' };

describe('the custody reconciliation settings', () => {
  it('tolerate 0.01 USDT and run every 600 s by default; read exactly when set', () => {
    expect(loadConfig(base)).toMatchObject({ custodyToleranceMicro: 10_000n, custodyReconcileIntervalSeconds: 600 });
    expect(loadConfig({ ...base, PAYGATE_CUSTODY_TOLERANCE_USDT: '0' }).custodyToleranceMicro).toBe(0n);
    expect(loadConfig({ ...base, PAYGATE_CUSTODY_TOLERANCE_USDT: '2.5' }).custodyToleranceMicro).toBe(2_500_000n);
    expect(loadConfig({ ...base, PAYGATE_CUSTODY_TOLERANCE_USDT: '1000000' }).custodyToleranceMicro).toBe(
      1_000_000_000_000n,
    );
    expect(
      loadConfig({ ...base, PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS: '30' }).custodyReconcileIntervalSeconds,
    ).toBe(30);
  });

  it('refuses signs, exponents, more than 6 places, more than a million USDT, and intervals out of bounds, naming the setting', () => {
    for (const bad of ['-1', '1e3', '0.0000001', '1000000.000001', 'small']) {
      expect(() => loadConfig({ ...base, PAYGATE_CUSTODY_TOLERANCE_USDT: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, PAYGATE_CUSTODY_TOLERANCE_USDT: bad }), bad).toThrow(
        /PAYGATE_CUSTODY_TOLERANCE_USDT/,
      );
    }
    for (const bad of ['29', '86401', 'hourly']) {
      expect(() => loadConfig({ ...base, PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS: bad }), bad).toThrow(
        /PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS/,
      );
    }
  });
});
