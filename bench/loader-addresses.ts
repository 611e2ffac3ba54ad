// The TRON addresses of the bench loaders (bench/cabinet-loader.ts): real
// Base58Check (docs/tron.md §1.1), so that everything that reads a loaded row —
// the custody check reading each deposit address's balance, a payout's
// recipient check — does the work it does on the gateway's own rows instead of
// failing on the first address. An address is 0x41 ‖ a kind byte ‖ 11 zero
// bytes ‖ the row number as 8 bytes: distinct per kind and number by
// construction, no one's key (nothing spends from it).
//
// Made in SQL, in the loading session's temporary schema (gone with the
// session, dropped after the shops' rows too): this PL/pgSQL function is ≈ 7 µs
// an address on this machine (1,000,000 in ≈ 7 s; the old unchecked spelling
// ≈ 0.8 s). Measured against it: the same arithmetic as a scalar subquery
// ≈ 19 µs (its subplan per row), @scure/base in Node ≈ 10 µs before any copy
// into the database. Base58 of the 25 bytes goes through numeric once (four
// int8 chunks of at most 10 base-58 digits: ≈ 5 µs of the 7), int8 arithmetic
// after; a digit's character is get_byte of the alphabet (translate() over the
// 34 characters cost 9 µs in a UTF-8 database, substr 0.5 µs a digit).

const VERSION = 0x41n;
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const CHUNK = 58n ** 10n;
/** The address's 25 bytes as a number: 0x41 at byte 0, the kind at byte 1, the row number at bytes 13–20, the checksum at 21–24. */
const VERSION_PLACE = 2n ** 192n;
const KIND_PLACE = 2n ** 184n;
const NUMBER_PLACE = 2n ** 32n;

const FUNCTION = 'pg_temp.bench_tron_address';

/** The base-58 digits of int8 `chunk`, `count` of them, most significant first, spelled in the alphabet. */
const digits = (chunk: string, count: number) =>
  Array.from(
    { length: count },
    (_, index) => `chr(get_byte(alphabet, (${chunk} / ${58n ** BigInt(count - 1 - index)} % 58)::int))`,
  ).join(' || ');

/** Makes the address function in the session's temporary schema (run on every loading connection). */
export const CREATE_ADDRESS_FUNCTION = `
create or replace function ${FUNCTION}(kind int, i int8) returns text language plpgsql immutable strict as $$
declare
  alphabet bytea := '\\x${Buffer.from(ALPHABET).toString('hex')}';
  payload bytea := '\\x${VERSION.toString(16)}'::bytea || set_byte('\\x00'::bytea, 0, kind) || '\\x${'00'.repeat(11)}'::bytea || int8send(i);
  n numeric := ${VERSION * VERSION_PLACE}::numeric + kind::numeric * ${KIND_PLACE} + i::numeric * ${NUMBER_PLACE}
               + ('x' || left(encode(sha256(sha256(payload)), 'hex'), 8))::bit(32)::int8;
  c3 int8 := div(n, ${CHUNK ** 3n});
  c2 int8 := mod(div(n, ${CHUNK ** 2n}), ${CHUNK});
  c1 int8 := mod(div(n, ${CHUNK}), ${CHUNK});
  c0 int8 := mod(n, ${CHUNK});
begin
  return ${digits('c3', 4)} || ${digits('c2', 10)} || ${digits('c1', 10)} || ${digits('c0', 10)};
end $$`;

export const DROP_ADDRESS_FUNCTION = `drop function if exists ${FUNCTION}(int, int8)`;

/**
 * The address of row `numberExpression` (an int8 expression) of `kind` (one letter: 'B' invoice,
 * 'W' wallet, 'F' payer, 'R' payout recipient), as SQL. The function must exist in the session.
 */
export function loaderAddress(kind: string, numberExpression: string): string {
  if (!/^[A-Z]$/.test(kind)) throw new Error(`an address kind is one capital letter, got ${JSON.stringify(kind)}`);
  return `${FUNCTION}(${kind.charCodeAt(0)}, (${numberExpression})::int8)`;
}
