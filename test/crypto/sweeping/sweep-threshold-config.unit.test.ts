// PAYGATE_SWEEP_THRESHOLD_USDT: a USDT decimal string read exactly (no double),
// 50 by default; anything else stops the start with a message naming it.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';

const base = { PAYGATE_DATA_DIR: 'memory://' };

describe('the sweep threshold setting', () => {
  it('is 50 USDT by default and read exactly when set', () => {
    expect(loadConfig(base).sweepThresholdMicro).toBe(50_000_000n);
    expect(loadConfig({ ...base, PAYGATE_SWEEP_THRESHOLD_USDT: '12.5' }).sweepThresholdMicro).toBe(12_500_000n);
    expect(loadConfig({ ...base, PAYGATE_SWEEP_THRESHOLD_USDT: '0.000001' }).sweepThresholdMicro).toBe(1n);
    expect(loadConfig({ ...base, PAYGATE_SWEEP_THRESHOLD_USDT: ' 1000 ' }).sweepThresholdMicro).toBe(1_000_000_000n);
  });

  it('refuses zero, more than 6 decimals, signs, exponents and words, naming the setting', () => {
    for (const bad of ['0', '0.0', '1.0000001', '-5', '1e3', 'fifty', '5,5']) {
      expect(() => loadConfig({ ...base, PAYGATE_SWEEP_THRESHOLD_USDT: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, PAYGATE_SWEEP_THRESHOLD_USDT: bad }), bad).toThrow(
        /PAYGATE_SWEEP_THRESHOLD_USDT/,
      );
    }
  });
});
