// Which objects an event is about, read from its data as the outbox writes it.
import { describe, expect, it } from 'vitest';
import { subjectIdsOf } from '../../src/webhooks/outbox.ts';

describe('subjectIdsOf', () => {
  it('reads the top-level ids and those of the wallet and deposit an event carries, each once', () => {
    expect(subjectIdsOf({ payment_id: '5f0c6a2e-1c1b-4f7e-9f55-3f3c1c6f1a10', status: 'paid' })).toEqual([
      '5f0c6a2e-1c1b-4f7e-9f55-3f3c1c6f1a10',
    ]);
    expect(
      subjectIdsOf({
        wallet: { wallet_id: 'wal_1', address: 'T…' },
        deposit: { deposit_id: 'dep_1', wallet_id: 'wal_1' },
      }),
    ).toEqual(['wal_1', 'dep_1']);
    expect(subjectIdsOf({ refund_id: 'ref_1', deposit_id: 'dep_2', invoice_id: null })).toEqual(['ref_1', 'dep_2']);
  });

  it('ignores anything that is not an id: other types, commas, overlong text, no data', () => {
    expect(subjectIdsOf({ payment_id: 42, invoice_id: 'a,b', payout_id: 'x'.repeat(101) })).toEqual([]);
    expect(subjectIdsOf(null)).toEqual([]);
    expect(subjectIdsOf('payment_id')).toEqual([]);
  });
});
