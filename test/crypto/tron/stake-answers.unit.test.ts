// A node's Stake 2.0 answers are untrusted: the readers take java-tron's shapes
// (left-out fields are zero, `{}` is nothing) and refuse anything else — another
// account than the one asked about, negative or fractional sun, a third record
// for one pair, an unknown resource (an invalid answer: the transport asks another node).
import { describe, expect, it } from 'vitest';
import { tronAddressToHex } from '../../../src/crypto/tron/address.ts';
import { NodeAttemptFailure } from '../../../src/crypto/tron/node-errors.ts';
import {
  readAccountStake,
  readCanDelegatedMaxSize,
  readDelegatedResources,
  readDelegationIndex,
} from '../../../src/crypto/tron/stake-answers.ts';
import { testKey } from '../simchain/fixtures/transfers.ts';

const owner = testKey('answers owner').address;
const receiver = testKey('answers receiver').address;
const ownerHex = tronAddressToHex(owner);
const receiverHex = tronAddressToHex(receiver);

describe('reading Stake 2.0 answers', () => {
  it('reads getaccount as java-tron prints it, zeros left out', () => {
    expect(
      readAccountStake(
        {
          address: ownerHex,
          balance: 5,
          account_resource: { delegated_frozenV2_balance_for_energy: 2_000_000, energy_window_optimized: true },
          frozenV2: [{}, { type: 'ENERGY', amount: 8_000_000 }, { type: 'TRON_POWER' }],
          unfrozenV2: [{ type: 'ENERGY', unfreeze_amount: 1_000_000, unfreeze_expire_time: 1_700_000_000_000 }],
        },
        owner,
      ),
    ).toEqual({
      address: owner,
      frozenSun: { BANDWIDTH: 0n, ENERGY: 8_000_000n },
      delegatedSun: { BANDWIDTH: 0n, ENERGY: 2_000_000n },
      acquiredSun: { BANDWIDTH: 0n, ENERGY: 0n },
      unfreezing: [{ resource: 'ENERGY', amountSun: 1_000_000n, expireTimeMs: 1_700_000_000_000 }],
    });
    expect(readAccountStake({}, owner).frozenSun).toEqual({ BANDWIDTH: 0n, ENERGY: 0n });
  });

  it('refuses another account, negative sun and an unknown resource', () => {
    expect(() => readAccountStake({ address: receiverHex }, owner)).toThrow(NodeAttemptFailure);
    expect(() => readAccountStake({ address: ownerHex, frozenV2: [{ type: 'ENERGY', amount: -1 }] }, owner)).toThrow(
      NodeAttemptFailure,
    );
    expect(() => readAccountStake({ address: ownerHex, frozenV2: [{ type: 'STORAGE', amount: 1 }] }, owner)).toThrow(
      NodeAttemptFailure,
    );
  });

  it('reads delegation records of the pair asked about, and no more than two', () => {
    const record = {
      from: ownerHex,
      to: receiverHex,
      frozen_balance_for_energy: 3_000_000,
      expire_time_for_energy: 42,
    };
    expect(readDelegatedResources({ delegatedResource: [record] }, owner, receiver)).toEqual([
      {
        from: owner,
        to: receiver,
        energySun: 3_000_000n,
        bandwidthSun: 0n,
        energyLockExpireMs: 42,
        bandwidthLockExpireMs: 0,
      },
    ]);
    expect(readDelegatedResources({}, owner, receiver)).toEqual([]);
    expect(() => readDelegatedResources({ delegatedResource: [{ ...record, to: ownerHex }] }, owner, receiver)).toThrow(
      NodeAttemptFailure,
    );
    expect(() => readDelegatedResources({ delegatedResource: [record, record, record] }, owner, receiver)).toThrow(
      NodeAttemptFailure,
    );
    expect(() =>
      readDelegatedResources({ delegatedResource: [{ ...record, frozen_balance_for_energy: 1.5 }] }, owner, receiver),
    ).toThrow(NodeAttemptFailure);
  });

  it('reads the delegation index and the can-delegate size', () => {
    expect(readDelegationIndex({ account: ownerHex, toAccounts: [receiverHex] }, owner)).toEqual({
      from: [],
      to: [receiver],
    });
    expect(() => readDelegationIndex({ account: receiverHex }, owner)).toThrow(NodeAttemptFailure);
    expect(() => readDelegationIndex({ account: ownerHex, fromAccounts: ['nonsense'] }, owner)).toThrow(
      NodeAttemptFailure,
    );
    expect(readCanDelegatedMaxSize({ max_size: 7_000_000 })).toBe(7_000_000n);
    expect(readCanDelegatedMaxSize({})).toBe(0n);
    expect(() => readCanDelegatedMaxSize({ max_size: -1 })).toThrow(NodeAttemptFailure);
  });
});
