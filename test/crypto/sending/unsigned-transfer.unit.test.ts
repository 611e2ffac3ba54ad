// Building a chunk's transactions: one transfer's error (its key, its fields) is
// that transfer's alone; the others of the chunk are built, in order.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import type { OutgoingTransferRow } from '../../../src/crypto/sending/sending-repository.ts';
import type { SignJob } from '../../../src/crypto/sending/signing-decisions.ts';
import {
  UnsignableTransferError,
  unsignedTransfers,
  type PrivateKeyOf,
} from '../../../src/crypto/sending/unsigned-transfer.ts';
import { tronAddressFromPrivateKey, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';

const privateKey = secp256k1.utils.randomSecretKey();
const from = tronAddressFromPrivateKey(privateKey);
const solid = { number: 1, id: `${'0'.repeat(15)}1${'ab'.repeat(24)}`, parentId: '0'.repeat(64), timestamp: 0 };

function job(id: string): SignJob {
  const at = new Date(0);
  const row: OutgoingTransferRow = {
    id,
    chain: 'tron-sandbox',
    purpose: 'payout',
    owner_id: `po_${id}`,
    asset: 'TRX',
    from_kind: 'hot_wallet',
    from_address: null,
    from_derivation_index: null,
    to_address: tronAddressFromPrivateKey(secp256k1.utils.randomSecretKey()),
    amount: 1_000_000n,
    status: 'queued',
    tx_id: null,
    attempts: 0,
    fee_sun: null,
    block_number: null,
    error_code: null,
    error_message: null,
    short_of_funds_since: null,
    energy_used: null,
    energy_own: null,
    energy_fee_sun: null,
    bandwidth_used: null,
    bandwidth_fee_sun: null,
    energy_source: null,
    energy_plan: null,
    rental_sun: null,
    cost_micro: null,
    above_burn_cap_since: null,
    unsignable_checked_at: null,
    created_at: at,
    updated_at: at,
    submitted_at: null,
    final_at: null,
  };
  return { row, from, feeLimit: 0n, energy: { plan: null, rentalSun: null } };
}

describe('unsignedTransfers', () => {
  it('a transfer whose key fails is set apart with its reason; the rest of the chunk is built', () => {
    const jobs = [job('ogt_a'), job('ogt_bad'), job('ogt_c')];
    const privateKeyOf: PrivateKeyOf = (row) => {
      if (row.id === 'ogt_bad') throw new UnsignableTransferError('the signing key does not derive it');
      return privateKey;
    };
    let timestampMs = 1_000;
    const context = { nextTimestampMs: () => (timestampMs += 1), usdtContract: USDT_CONTRACT_MAINNET as TronAddress };
    const { prepared, unsignable } = unsignedTransfers(context, jobs, privateKeyOf, { head: solid, solid });
    expect(prepared.map((item) => item.row.id)).toEqual(['ogt_a', 'ogt_c']);
    expect(prepared.every((item) => /^[0-9a-f]{64}$/.test(item.txId))).toBe(true);
    expect(unsignable).toEqual([{ row: jobs[1]!.row, reason: 'the signing key does not derive it' }]);
  });
});
