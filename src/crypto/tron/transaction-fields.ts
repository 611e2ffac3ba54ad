// Strict reading of the protobuf messages inside a `Transaction.raw`, shared by
// the TriggerSmartContract reader (transaction.ts) and the simulated chain's
// TransferContract reader: each field at most once, only the expected ones, of
// the expected wire type. A malformation throws MalformedTransaction, which the
// readers turn into their `problem` (problemOf).
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';

export const REF_BLOCK_BYTES_LENGTH = 2;
export const REF_BLOCK_HASH_LENGTH = 8;

class MalformedTransaction extends Error {}

type FieldKind = 'bytes' | 'varint';

export interface MessageFields {
  bytes(fieldNo: number): Uint8Array | undefined;
  varint(fieldNo: number): bigint | undefined;
}

/** One message's fields, each at most once, each of the expected wire type; anything else is refused. */
export function readFields(
  bytes: Uint8Array,
  message: string,
  expected: Readonly<Record<number, FieldKind>>,
): MessageFields {
  const values = new Map<number, Uint8Array | bigint>();
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    const kind = expected[fieldNo];
    if (kind === undefined) throw new MalformedTransaction(`${message} field ${fieldNo} is not supported`);
    if (values.has(fieldNo)) throw new MalformedTransaction(`${message} field ${fieldNo} appears twice`);
    if (wireType !== (kind === 'bytes' ? WireType.LengthDelimited : WireType.Varint))
      throw new MalformedTransaction(`${message} field ${fieldNo} has wire type ${wireType}`);
    values.set(fieldNo, kind === 'bytes' ? reader.bytes() : BigInt(reader.int64()));
  }
  return {
    bytes: (fieldNo: number) => values.get(fieldNo) as Uint8Array | undefined,
    varint: (fieldNo: number) => values.get(fieldNo) as bigint | undefined,
  };
}

/**
 * The fields of the contract's parameter (`google.protobuf.Any`), once its
 * type_url names `contractName` (`typeUrl`); `fields` are the contract's own.
 */
export function readContractParameter(
  contract: MessageFields,
  typeUrl: string,
  contractName: string,
  fields: Readonly<Record<number, FieldKind>>,
): MessageFields {
  const any = readFields(contract.bytes(2) ?? new Uint8Array(), 'parameter', { 1: 'bytes', 2: 'bytes' });
  const givenTypeUrl = new TextDecoder().decode(any.bytes(1) ?? new Uint8Array());
  if (givenTypeUrl !== typeUrl)
    throw new MalformedTransaction(
      `parameter type_url ${JSON.stringify(givenTypeUrl.slice(0, 80))} is not ${contractName}`,
    );
  return readFields(any.bytes(2) ?? new Uint8Array(), contractName, fields);
}

/** The TaPoS reference of `Transaction.raw` (fields 1 and 4), of the lengths java-tron requires. */
export function readRefBlock(raw: MessageFields): { refBlockBytes: Uint8Array; refBlockHash: Uint8Array } {
  const refBlockBytes = raw.bytes(1) ?? new Uint8Array();
  const refBlockHash = raw.bytes(4) ?? new Uint8Array();
  if (refBlockBytes.length !== REF_BLOCK_BYTES_LENGTH)
    throw new MalformedTransaction(`ref_block_bytes is ${refBlockBytes.length} bytes, not 2`);
  if (refBlockHash.length !== REF_BLOCK_HASH_LENGTH)
    throw new MalformedTransaction(`ref_block_hash is ${refBlockHash.length} bytes, not 8`);
  return { refBlockBytes, refBlockHash };
}

/** What a reader reports for an exception thrown while it read. */
export function problemOf(error: unknown): string {
  return error instanceof MalformedTransaction ? error.message : `malformed protobuf: ${(error as Error).message}`;
}
