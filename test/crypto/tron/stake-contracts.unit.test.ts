// Our Stake 2.0 encodings against tronweb 6's (TransactionBuilder.freezeBalanceV2,
// unfreezeBalanceV2, withdrawExpireUnfreeze, delegateResource, undelegateResource,
// which build the protobuf locally with google-protobuf classes generated from
// java-tron's protos): same inputs, same raw_data_hex and txID. Then our reader
// gives back exactly what was encoded, and refuses what java-tron would not write.
import { hexToBytes } from '@noble/hashes/utils.js';
import { TronWeb, utils as tronwebUtils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { tronAddressToHex, type TronAddress } from '../../../src/crypto/tron/address.ts';
import {
  decodeSignedStakeTransaction,
  decodeStakeTransactionRaw,
  encodeStakeTransactionRaw,
  signStakeTransaction,
  stakeTransactionJson,
  type StakeContract,
  type StakeTransactionRaw,
} from '../../../src/crypto/tron/stake-contracts.ts';
import { tronAddressFromPrivateKey } from '../../../src/crypto/tron/address.ts';
import { transactionId } from '../../../src/crypto/tron/transaction.ts';

const OWNER_KEY = hexToBytes('0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef');
const OWNER = tronAddressFromPrivateKey(OWNER_KEY);
const RECEIVER = tronAddressFromPrivateKey(hexToBytes('11'.repeat(32)));
const HEADER = {
  refBlockBytes: hexToBytes('28c3'),
  refBlockHash: hexToBytes('ce6d340282788569'),
  expirationMs: 1_777_447_227_000,
  timestampMs: 1_777_447_168_009,
};
const BLOCK_HEADER = {
  ref_block_bytes: '28c3',
  ref_block_hash: 'ce6d340282788569',
  expiration: HEADER.expirationMs,
  timestamp: HEADER.timestampMs,
};

// No request reaches this node: every build below is given its block header.
const tronWeb = new TronWeb({ fullHost: 'http://127.0.0.1:9' });
const builder = tronWeb.transactionBuilder;
const hex = (address: TronAddress) => tronAddressToHex(address);

const cases: {
  name: string;
  contract: StakeContract;
  tronweb: () => Promise<{ raw_data_hex: string; txID: string }>;
}[] = [
  {
    name: 'freezeBalanceV2 for ENERGY',
    contract: {
      type: 'FreezeBalanceV2Contract',
      ownerAddress: OWNER,
      frozenBalanceSun: 1_234_000_000n,
      resource: 'ENERGY',
    },
    tronweb: () => builder.freezeBalanceV2(1_234_000_000, 'ENERGY', hex(OWNER), { blockHeader: BLOCK_HEADER }),
  },
  {
    name: 'freezeBalanceV2 for BANDWIDTH (resource 0 left out)',
    contract: {
      type: 'FreezeBalanceV2Contract',
      ownerAddress: OWNER,
      frozenBalanceSun: 5_000_000n,
      resource: 'BANDWIDTH',
    },
    tronweb: () => builder.freezeBalanceV2(5_000_000, 'BANDWIDTH', hex(OWNER), { blockHeader: BLOCK_HEADER }),
  },
  {
    name: 'unfreezeBalanceV2 for ENERGY',
    contract: {
      type: 'UnfreezeBalanceV2Contract',
      ownerAddress: OWNER,
      unfreezeBalanceSun: 7_000_000n,
      resource: 'ENERGY',
    },
    tronweb: () => builder.unfreezeBalanceV2(7_000_000, 'ENERGY', hex(OWNER), { blockHeader: BLOCK_HEADER }),
  },
  {
    name: 'withdrawExpireUnfreeze',
    contract: { type: 'WithdrawExpireUnfreezeContract', ownerAddress: OWNER },
    tronweb: () => builder.withdrawExpireUnfreeze(hex(OWNER), { blockHeader: BLOCK_HEADER }),
  },
  {
    name: 'delegateResource ENERGY without lock',
    contract: {
      type: 'DelegateResourceContract',
      ownerAddress: OWNER,
      resource: 'ENERGY',
      balanceSun: 100_000_000n,
      receiverAddress: RECEIVER,
      lock: false,
      lockPeriodBlocks: 0n,
    },
    tronweb: () =>
      builder.delegateResource(100_000_000, hex(RECEIVER), 'ENERGY', hex(OWNER), false, undefined, {
        blockHeader: BLOCK_HEADER,
      }),
  },
  {
    name: 'delegateResource ENERGY locked for 1,200 blocks',
    contract: {
      type: 'DelegateResourceContract',
      ownerAddress: OWNER,
      resource: 'ENERGY',
      balanceSun: 2_000_000n,
      receiverAddress: RECEIVER,
      lock: true,
      lockPeriodBlocks: 1_200n,
    },
    tronweb: () =>
      builder.delegateResource(2_000_000, hex(RECEIVER), 'ENERGY', hex(OWNER), true, 1_200, {
        blockHeader: BLOCK_HEADER,
      }),
  },
  {
    name: 'undelegateResource ENERGY',
    contract: {
      type: 'UnDelegateResourceContract',
      ownerAddress: OWNER,
      resource: 'ENERGY',
      balanceSun: 2_000_000n,
      receiverAddress: RECEIVER,
    },
    tronweb: () =>
      builder.undelegateResource(2_000_000, hex(RECEIVER), 'ENERGY', hex(OWNER), { blockHeader: BLOCK_HEADER }),
  },
];

describe('Stake 2.0 transactions encode as tronweb encodes them', () => {
  for (const { name, contract, tronweb } of cases) {
    it(`${name}: same raw_data_hex and txID as tronweb, and reads back the same`, async () => {
      const raw: StakeTransactionRaw = { ...HEADER, contract };
      const bytes = encodeStakeTransactionRaw(raw);
      const built = await tronweb();
      expect(Buffer.from(bytes).toString('hex')).toBe(built.raw_data_hex);
      expect(transactionId(bytes)).toBe(built.txID);
      const decoded = decodeStakeTransactionRaw(bytes);
      expect(decoded).toEqual({ ok: true, raw });
    });
  }

  it('the node JSON of a signed one re-encodes (tronweb txJsonToPb) to the signed bytes', () => {
    const signed = signStakeTransaction({ ...HEADER, contract: cases[5]!.contract }, OWNER_KEY);
    const json = stakeTransactionJson(signed);
    const pb = tronwebUtils.transaction.txJsonToPb(json as never);
    expect(tronwebUtils.transaction.txPbToRawDataHex(pb).toLowerCase()).toBe(json['raw_data_hex']);
    expect(decodeSignedStakeTransaction(signed.bytes)).toEqual({
      ok: true,
      transaction: {
        kind: 'stake',
        rawBytes: signed.rawBytes,
        raw: signed.raw,
        txId: signed.txId,
        signatures: signed.signatures,
      },
    });
  });

  it('refuses a key that is not the owner, a TRON_POWER resource and an unknown field', () => {
    expect(() =>
      signStakeTransaction({ ...HEADER, contract: cases[0]!.contract }, hexToBytes('22'.repeat(32))),
    ).toThrow(/not for the owner/);
    // FreezeBalanceV2Contract with resource 2 (TRON_POWER), built by hand.
    const tronPower = encodeStakeTransactionRaw({ ...HEADER, contract: cases[0]!.contract });
    const patched = Buffer.from(tronPower)
      .toString('hex')
      .replace(/1801(?=[0-9a-f]*$)/, '1802');
    expect(decodeStakeTransactionRaw(hexToBytes(patched))).toEqual({
      ok: false,
      problem: 'resource 2 is not BANDWIDTH or ENERGY',
    });
    expect(decodeStakeTransactionRaw(new Uint8Array([0x0a, 0x01]))).toMatchObject({ ok: false });
  });
});
