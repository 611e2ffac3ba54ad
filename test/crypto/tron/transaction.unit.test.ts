import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { describe, expect, it } from 'vitest';
import { parseTronHexAddress, type TronAddress } from '../../../src/crypto/tron/address.ts';
import {
  decodeSignedTransaction,
  decodeTriggerSmartContractRaw,
  encodeSignedTransaction,
  encodeTriggerSmartContractRaw,
  referenceBlockFields,
  TRANSACTION_MAX_BYTES,
  transactionId,
  transactionJson,
  TRIGGER_SMART_CONTRACT_TYPE_URL,
  type TriggerSmartContractRaw,
} from '../../../src/crypto/tron/transaction.ts';
import { transferCalldata } from '../../../src/crypto/tron/trc20-usdt.ts';

function fromHex(hex: string): TronAddress {
  const parsed = parseTronHexAddress(hex);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.address;
}

// docs/tron.md §1.2: a real /wallet/triggersmartcontract answer on Nile, from TRON's documentation.
const DOC_RAW_DATA_HEX =
  '0a0228c32208ce6d34028278856940f89cf1c0dd335aae01081f12a9010a31747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261637412740a1541dd791d6b49e190062d650e6a23c575510d35f2f9121541eca9bc828a3005b9a3b909f2cc5c2a54794de05f2244a9059cbb000000000000000000000000088a2bfcb1c7271029fd69a66859d5556089588400000000000000000000000000000000000000000000000000000000000000647089d0edc0dd33900180c2d72f';
const DOC_TX_ID = '8c621a0dc9bd4d405b20d0a43143955b9f546f98bbfde1aec295a65b0f925629';
const DOC_FIELDS: Required<TriggerSmartContractRaw> = {
  refBlockBytes: hexToBytes('28c3'),
  refBlockHash: hexToBytes('ce6d340282788569'),
  expirationMs: 1777447227000,
  timestampMs: 1777447168009,
  feeLimitSun: 100_000_000n,
  ownerAddress: fromHex('41dd791d6b49e190062d650e6a23c575510d35f2f9'),
  contractAddress: fromHex('41eca9bc828a3005b9a3b909f2cc5c2a54794de05f'),
  callValueSun: 0n,
  data: transferCalldata(fromHex('41088a2bfcb1c7271029fd69a66859d55560895884'), 100n),
};

describe('Transaction.raw encoder: the golden vector of docs/tron.md §1.2 / Appendix A', () => {
  it("reproduces the docs' raw_data_hex byte for byte, 211 bytes", () => {
    const raw = encodeTriggerSmartContractRaw(DOC_FIELDS);
    expect(bytesToHex(raw)).toBe(DOC_RAW_DATA_HEX);
    expect(raw.length).toBe(211);
  });

  it("hashes it to the docs' txID", () => {
    expect(transactionId(hexToBytes(DOC_RAW_DATA_HEX))).toBe(DOC_TX_ID);
  });

  it('writes the same bytes when call_value is left out or given as 0 (proto3 omits defaults)', () => {
    const { callValueSun: _omitted, ...withoutCallValue } = DOC_FIELDS;
    expect(bytesToHex(encodeTriggerSmartContractRaw(withoutCallValue))).toBe(DOC_RAW_DATA_HEX);
  });

  it("prints the node's JSON for it (the fields of the docs' answer)", () => {
    const json = transactionJson({ rawBytes: hexToBytes(DOC_RAW_DATA_HEX), raw: DOC_FIELDS });
    expect(json).toEqual({
      txID: DOC_TX_ID,
      raw_data: {
        contract: [
          {
            parameter: {
              value: {
                data: bytesToHex(DOC_FIELDS.data),
                owner_address: '41dd791d6b49e190062d650e6a23c575510d35f2f9',
                contract_address: '41eca9bc828a3005b9a3b909f2cc5c2a54794de05f',
              },
              type_url: TRIGGER_SMART_CONTRACT_TYPE_URL,
            },
            type: 'TriggerSmartContract',
          },
        ],
        ref_block_bytes: '28c3',
        ref_block_hash: 'ce6d340282788569',
        fee_limit: 100000000,
        expiration: 1777447227000,
        timestamp: 1777447168009,
      },
      raw_data_hex: DOC_RAW_DATA_HEX,
      visible: false,
    });
  });

  it('refuses fields a node would refuse or that do not fit', () => {
    expect(() => encodeTriggerSmartContractRaw({ ...DOC_FIELDS, refBlockBytes: new Uint8Array(3) })).toThrow(
      /ref_block_bytes/,
    );
    expect(() => encodeTriggerSmartContractRaw({ ...DOC_FIELDS, refBlockHash: new Uint8Array(7) })).toThrow(
      /ref_block_hash/,
    );
    expect(() => encodeTriggerSmartContractRaw({ ...DOC_FIELDS, expirationMs: 0 })).toThrow(/expiration/);
    expect(() => encodeTriggerSmartContractRaw({ ...DOC_FIELDS, expirationMs: 1.5 })).toThrow(/expiration/);
    expect(() => encodeTriggerSmartContractRaw({ ...DOC_FIELDS, feeLimitSun: -1n })).toThrow(/fee_limit/);
    expect(() => encodeTriggerSmartContractRaw({ ...DOC_FIELDS, feeLimitSun: 1n << 63n })).toThrow(/fee_limit/);
  });
});

describe('Transaction.raw decoder (what the simulated chain reads from a broadcast)', () => {
  it('reads back every field of the golden vector', () => {
    expect(decodeTriggerSmartContractRaw(hexToBytes(DOC_RAW_DATA_HEX))).toEqual({ ok: true, raw: DOC_FIELDS });
  });

  it('reads a non-zero call_value', () => {
    const raw = encodeTriggerSmartContractRaw({ ...DOC_FIELDS, callValueSun: 5n });
    expect(decodeTriggerSmartContractRaw(raw)).toMatchObject({ ok: true, raw: { callValueSun: 5n } });
  });

  function problemOf(bytes: Uint8Array): string {
    const decoded = decodeTriggerSmartContractRaw(bytes);
    if (decoded.ok) throw new Error('accepted');
    return decoded.problem;
  }

  /** The golden raw with extra fields appended (protobuf readers take fields in any order). */
  function withExtra(write: (writer: BinaryWriter) => void): Uint8Array {
    const writer = new BinaryWriter();
    writer.raw(hexToBytes(DOC_RAW_DATA_HEX));
    write(writer);
    return writer.finish();
  }

  /** A raw whose only contract is built by `contract`. */
  function withContract(contract: (writer: BinaryWriter) => void): Uint8Array {
    const contractWriter = new BinaryWriter();
    contract(contractWriter);
    const writer = new BinaryWriter();
    writer.tag(1, WireType.LengthDelimited).bytes(DOC_FIELDS.refBlockBytes);
    writer.tag(4, WireType.LengthDelimited).bytes(DOC_FIELDS.refBlockHash);
    writer.tag(8, WireType.Varint).int64(DOC_FIELDS.expirationMs);
    writer.tag(11, WireType.LengthDelimited).bytes(contractWriter.finish());
    return writer.finish();
  }

  function anyOf(typeUrl: string, call: (writer: BinaryWriter) => void): Uint8Array {
    const callWriter = new BinaryWriter();
    call(callWriter);
    return new BinaryWriter()
      .tag(1, WireType.LengthDelimited)
      .string(typeUrl)
      .tag(2, WireType.LengthDelimited)
      .bytes(callWriter.finish())
      .finish();
  }

  const owner = hexToBytes('41dd791d6b49e190062d650e6a23c575510d35f2f9');

  it('refuses truncated bytes', () => {
    expect(problemOf(hexToBytes(DOC_RAW_DATA_HEX).subarray(0, 100))).toMatch(/malformed|premature|invalid|range/i);
  });

  it('refuses a second contract (java-tron: "only support size = 1")', () => {
    expect(
      problemOf(withExtra((writer) => writer.tag(11, WireType.LengthDelimited).bytes(new Uint8Array([8, 31])))),
    ).toMatch(/field 11 appears twice/);
  });

  it('refuses auths, scripts and unknown fields', () => {
    expect(problemOf(withExtra((writer) => writer.tag(9, WireType.LengthDelimited).bytes(new Uint8Array(0))))).toMatch(
      /raw field 9 is not supported/,
    );
    expect(problemOf(withExtra((writer) => writer.tag(12, WireType.LengthDelimited).bytes(new Uint8Array(1))))).toMatch(
      /raw field 12/,
    );
  });

  it('refuses a field of the wrong wire type', () => {
    expect(problemOf(withExtra((writer) => writer.tag(18, WireType.LengthDelimited).bytes(new Uint8Array(1))))).toMatch(
      /wire type|appears twice/,
    );
    const wrongType = new BinaryWriter()
      .tag(8, WireType.LengthDelimited)
      .bytes(new Uint8Array(1))
      .raw(hexToBytes(DOC_RAW_DATA_HEX).subarray(0, 4))
      .finish();
    expect(problemOf(wrongType)).toMatch(/field 8 has wire type 2/);
  });

  it('refuses a TransferContract (type 1) and a wrong type_url', () => {
    expect(problemOf(withContract((writer) => writer.tag(1, WireType.Varint).int32(1)))).toMatch(
      /contract type 1 is not TriggerSmartContract/,
    );
    const wrongUrl = withContract((writer) =>
      writer
        .tag(1, WireType.Varint)
        .int32(31)
        .tag(2, WireType.LengthDelimited)
        .bytes(
          anyOf('type.googleapis.com/protocol.TransferContract', (call) =>
            call.tag(1, WireType.LengthDelimited).bytes(owner),
          ),
        ),
    );
    expect(problemOf(wrongUrl)).toMatch(/type_url/);
  });

  it('refuses a permission id (no multi-signature permissions here)', () => {
    const withPermission = withContract((writer) =>
      writer
        .tag(1, WireType.Varint)
        .int32(31)
        .tag(2, WireType.LengthDelimited)
        .bytes(
          anyOf(TRIGGER_SMART_CONTRACT_TYPE_URL, (call) =>
            call.tag(1, WireType.LengthDelimited).bytes(owner).tag(2, WireType.LengthDelimited).bytes(owner),
          ),
        )
        .tag(5, WireType.Varint)
        .int32(2),
    );
    expect(problemOf(withPermission)).toMatch(/contract field 5 is not supported/);
  });

  it('refuses a TRC10 token value and an owner that is not 21 bytes with 0x41', () => {
    const contractWith = (call: (writer: BinaryWriter) => void) =>
      withContract((writer) =>
        writer
          .tag(1, WireType.Varint)
          .int32(31)
          .tag(2, WireType.LengthDelimited)
          .bytes(anyOf(TRIGGER_SMART_CONTRACT_TYPE_URL, call)),
      );
    expect(
      problemOf(
        contractWith((call) => call.tag(1, WireType.LengthDelimited).bytes(owner).tag(5, WireType.Varint).int64(1)),
      ),
    ).toMatch(/TriggerSmartContract field 5/);
    expect(
      problemOf(
        contractWith((call) =>
          call.tag(1, WireType.LengthDelimited).bytes(owner.subarray(1)).tag(2, WireType.LengthDelimited).bytes(owner),
        ),
      ),
    ).toMatch(/owner_address/);
    expect(
      problemOf(
        contractWith((call) =>
          call
            .tag(1, WireType.LengthDelimited)
            .bytes(owner)
            .tag(2, WireType.LengthDelimited)
            .bytes(Uint8Array.of(0x42, ...owner.subarray(1))),
        ),
      ),
    ).toMatch(/contract_address/);
    expect(
      decodeTriggerSmartContractRaw(
        contractWith((call) =>
          call.tag(1, WireType.LengthDelimited).bytes(owner).tag(2, WireType.LengthDelimited).bytes(owner),
        ),
      ).ok,
    ).toBe(true);
  });

  it('refuses a missing expiration and TaPoS fields of the wrong size', () => {
    const raw = (fields: Partial<Record<'refBlockBytes' | 'refBlockHash', Uint8Array>> & { expirationMs?: number }) => {
      const writer = new BinaryWriter();
      writer.tag(1, WireType.LengthDelimited).bytes(fields.refBlockBytes ?? DOC_FIELDS.refBlockBytes);
      writer.tag(4, WireType.LengthDelimited).bytes(fields.refBlockHash ?? DOC_FIELDS.refBlockHash);
      if (fields.expirationMs !== 0)
        writer.tag(8, WireType.Varint).int64(fields.expirationMs ?? DOC_FIELDS.expirationMs);
      const call = anyOf(TRIGGER_SMART_CONTRACT_TYPE_URL, (writer) =>
        writer.tag(1, WireType.LengthDelimited).bytes(owner).tag(2, WireType.LengthDelimited).bytes(owner),
      );
      writer
        .tag(11, WireType.LengthDelimited)
        .bytes(
          new BinaryWriter().tag(1, WireType.Varint).int32(31).tag(2, WireType.LengthDelimited).bytes(call).finish(),
        );
      return writer.finish();
    };
    expect(decodeTriggerSmartContractRaw(raw({})).ok).toBe(true);
    expect(problemOf(raw({ expirationMs: 0 }))).toMatch(/expiration is missing/);
    expect(problemOf(raw({ refBlockBytes: new Uint8Array(3) }))).toMatch(/ref_block_bytes is 3 bytes/);
    expect(problemOf(raw({ refBlockBytes: new Uint8Array(1) }))).toMatch(/ref_block_bytes is 1 bytes/);
    expect(problemOf(raw({ refBlockHash: new Uint8Array(9) }))).toMatch(/ref_block_hash is 9 bytes/);
    expect(problemOf(raw({ refBlockHash: new Uint8Array(7) }))).toMatch(/ref_block_hash is 7 bytes/);
  });

  it('refuses more than the node limit of 500 KiB without parsing it', () => {
    expect(problemOf(new Uint8Array(TRANSACTION_MAX_BYTES + 1))).toMatch(/over 512000/);
  });
});

describe('signed Transaction (the body of /wallet/broadcasthex)', () => {
  const rawBytes = hexToBytes(DOC_RAW_DATA_HEX);
  const signature = new Uint8Array(65).fill(7);

  it('encodes raw ‖ signatures and reads them back with the txID', () => {
    const bytes = encodeSignedTransaction(rawBytes, [signature]);
    const decoded = decodeSignedTransaction(bytes);
    expect(decoded).toEqual({
      ok: true,
      transaction: { rawBytes, raw: DOC_FIELDS, txId: DOC_TX_ID, signatures: [signature] },
    });
  });

  it('ignores the node-filled ret field, which is not signed', () => {
    const bytes = new BinaryWriter()
      .raw(encodeSignedTransaction(rawBytes, [signature]))
      .tag(5, WireType.LengthDelimited)
      .bytes(new Uint8Array([0x08, 0x00]))
      .finish();
    expect(decodeSignedTransaction(bytes)).toMatchObject({ ok: true, transaction: { txId: DOC_TX_ID } });
  });

  it('refuses no signature, no raw data, two raw data and unknown fields', () => {
    const rawOnly = new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(rawBytes).finish();
    expect(decodeSignedTransaction(rawOnly)).toMatchObject({ ok: false, problem: 'transaction has no signature' });
    const signatureOnly = new BinaryWriter().tag(2, WireType.LengthDelimited).bytes(signature).finish();
    expect(decodeSignedTransaction(signatureOnly)).toMatchObject({ ok: false, problem: 'transaction has no raw_data' });
    const twoRaw = new BinaryWriter()
      .raw(encodeSignedTransaction(rawBytes, [signature]))
      .tag(1, WireType.LengthDelimited)
      .bytes(rawBytes)
      .finish();
    expect(decodeSignedTransaction(twoRaw)).toMatchObject({ ok: false, problem: expect.stringMatching(/field 1/) });
    const unknown = new BinaryWriter()
      .raw(encodeSignedTransaction(rawBytes, [signature]))
      .tag(3, WireType.Varint)
      .int32(1)
      .finish();
    expect(decodeSignedTransaction(unknown)).toMatchObject({ ok: false, problem: expect.stringMatching(/field 3/) });
    expect(decodeSignedTransaction(hexToBytes('0aff'))).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/malformed/),
    });
  });

  it('takes 1 to 5 signatures', () => {
    expect(() => encodeSignedTransaction(rawBytes, [])).toThrow(RangeError);
    expect(() =>
      encodeSignedTransaction(
        rawBytes,
        Array.from({ length: 6 }, () => signature),
      ),
    ).toThrow(RangeError);
    const five = encodeSignedTransaction(
      rawBytes,
      Array.from({ length: 5 }, () => signature),
    );
    expect(decodeSignedTransaction(five)).toMatchObject({ ok: true });
    const six = new BinaryWriter().raw(five).tag(2, WireType.LengthDelimited).bytes(signature).finish();
    expect(decodeSignedTransaction(six).ok).toBe(false);
  });
});

describe('TaPoS reference fields (docs/tron.md §1.2, §2.1)', () => {
  // Block 10435 = 0x28c3; a block id starts with the block number (8 bytes).
  const blockId = '00000000000028c3ce6d340282788569aaaabbbbccccddddeeeeffff00001111';

  it('takes the last 2 bytes of the number and bytes 8..16 of the id', () => {
    const fields = referenceBlockFields(10435, blockId);
    expect(bytesToHex(fields.refBlockBytes)).toBe('28c3');
    expect(bytesToHex(fields.refBlockHash)).toBe('ce6d340282788569');
  });

  it('keeps only the low 2 bytes of a large block number', () => {
    const number = 0x04d78887;
    const id = `${number.toString(16).padStart(16, '0')}${'ab'.repeat(24)}`;
    expect(bytesToHex(referenceBlockFields(number, id).refBlockBytes)).toBe('8887');
  });

  it('refuses a block id of another block, a malformed id and a bad number', () => {
    expect(() => referenceBlockFields(10436, blockId)).toThrow(/belongs to block 10435/);
    expect(() => referenceBlockFields(10435, blockId.slice(2))).toThrow(/64 hex/);
    expect(() => referenceBlockFields(-1, blockId)).toThrow(RangeError);
  });
});
