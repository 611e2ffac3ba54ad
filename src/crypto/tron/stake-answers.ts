// A node's answers about Stake 2.0, read as untrusted input (node-answers.ts
// style): each checked against its schema, amounts non-negative int64 sun,
// addresses the ones asked about, lists bounded, proto3's left-out fields read
// as zero. Shapes are java-tron's: Account (getaccount: frozenV2, unfrozenV2,
// the delegated balances), DelegatedResourceList (getdelegatedresourcev2),
// DelegatedResourceAccountIndex (getdelegatedresourceaccountindexv2) and
// CanDelegatedMaxSizeResponseMessage (getcandelegatedmaxsize).
import { Type } from 'typebox';
import { parseTronAddress, parseTronHexAddress, type TronAddress } from './address.ts';
import { expectShape, isEmptyObject } from './node-answers.ts';
import { invalidAnswer } from './node-errors.ts';
import type { ResourceCode } from './stake-contracts.ts';

/** What an account has staked, delegated, received and is unfreezing (Stake 2.0), in sun. */
export interface AccountStake {
  readonly address: TronAddress;
  /** Staked by the account and not delegated away (frozenV2). */
  readonly frozenSun: Readonly<Record<ResourceCode, bigint>>;
  /** Staked by the account and delegated to others. */
  readonly delegatedSun: Readonly<Record<ResourceCode, bigint>>;
  /** Staked by others and delegated to this account. */
  readonly acquiredSun: Readonly<Record<ResourceCode, bigint>>;
  /** Unfreezings, withdrawable from `expireTimeMs` on. */
  readonly unfreezing: readonly {
    readonly resource: ResourceCode;
    readonly amountSun: bigint;
    readonly expireTimeMs: number;
  }[];
}

/** One DelegatedResource record: stake `from` delegated to `to`, with the lock expiry per resource (0: not locked). */
export interface DelegatedResource {
  readonly from: TronAddress;
  readonly to: TronAddress;
  readonly energySun: bigint;
  readonly bandwidthSun: bigint;
  readonly energyLockExpireMs: number;
  readonly bandwidthLockExpireMs: number;
}

export interface DelegationIndex {
  /** Accounts that delegated to this one, oldest delegation first. */
  readonly from: readonly TronAddress[];
  /** Accounts this one delegated to. */
  readonly to: readonly TronAddress[];
}

/** More than any account we run delegates to at once; a longer list is refused rather than held. */
const MAX_LISTED = 10_000;
/** java-tron keeps at most 32 unfreezings waiting (UNFREEZE_MAX_TIMES) plus those not yet withdrawn. */
const MAX_UNFREEZING = 1_000;
const INT64_MAX = 2n ** 63n - 1n;

const Sun = Type.Union([Type.Integer({ minimum: 0 }), Type.BigInt()]);
const Millis = Type.Integer({ minimum: 0 });
const AddressText = Type.String({ maxLength: 64 });
const Resource = Type.Optional(
  Type.Union([Type.Literal('BANDWIDTH'), Type.Literal('ENERGY'), Type.Literal('TRON_POWER')]),
);

const AccountStakeSchema = Type.Object({
  address: AddressText,
  frozenV2: Type.Optional(Type.Array(Type.Object({ type: Resource, amount: Type.Optional(Sun) }), { maxItems: 3 })),
  unfrozenV2: Type.Optional(
    Type.Array(
      Type.Object({ type: Resource, unfreeze_amount: Type.Optional(Sun), unfreeze_expire_time: Type.Optional(Millis) }),
      { maxItems: MAX_UNFREEZING },
    ),
  ),
  delegated_frozenV2_balance_for_bandwidth: Type.Optional(Sun),
  acquired_delegated_frozenV2_balance_for_bandwidth: Type.Optional(Sun),
  account_resource: Type.Optional(
    Type.Object({
      delegated_frozenV2_balance_for_energy: Type.Optional(Sun),
      acquired_delegated_frozenV2_balance_for_energy: Type.Optional(Sun),
    }),
  ),
});

const DelegatedResourceListSchema = Type.Object({
  delegatedResource: Type.Optional(
    Type.Array(
      Type.Object({
        from: AddressText,
        to: AddressText,
        frozen_balance_for_bandwidth: Type.Optional(Sun),
        frozen_balance_for_energy: Type.Optional(Sun),
        expire_time_for_bandwidth: Type.Optional(Millis),
        expire_time_for_energy: Type.Optional(Millis),
      }),
      // One unlocked and one locked record per pair (Wallet.getDelegatedResourceV2).
      { maxItems: 2 },
    ),
  ),
});

const DelegationIndexSchema = Type.Object({
  account: Type.Optional(AddressText),
  fromAccounts: Type.Optional(Type.Array(AddressText, { maxItems: MAX_LISTED })),
  toAccounts: Type.Optional(Type.Array(AddressText, { maxItems: MAX_LISTED })),
});

const CanDelegatedMaxSizeSchema = Type.Object({ max_size: Type.Optional(Sun) });

/** getaccount's Stake 2.0 fields; `{}` (no such account) stakes nothing. */
export function readAccountStake(answer: unknown, address: TronAddress): AccountStake {
  const empty = { BANDWIDTH: 0n, ENERGY: 0n };
  if (isEmptyObject(answer))
    return { address, frozenSun: empty, delegatedSun: empty, acquiredSun: empty, unfreezing: [] };
  const account = expectShape(AccountStakeSchema, answer, 'account');
  if (addressOf(account.address, 'account address') !== address)
    throw invalidAnswer(`asked for account ${address}, got ${account.address}`);
  const frozenSun = { BANDWIDTH: 0n, ENERGY: 0n };
  for (const entry of account.frozenV2 ?? []) {
    const resource = entry.type ?? 'BANDWIDTH';
    if (resource === 'TRON_POWER') continue;
    frozenSun[resource] += sun(entry.amount, 'frozenV2 amount');
  }
  const unfreezing = (account.unfrozenV2 ?? []).map((entry) => {
    const resource = entry.type ?? 'BANDWIDTH';
    if (resource === 'TRON_POWER') throw invalidAnswer('an unfreezing of TRON_POWER (not staked by this chain)');
    const expireTimeMs = entry.unfreeze_expire_time ?? 0;
    if (!Number.isSafeInteger(expireTimeMs)) throw invalidAnswer('unfreeze_expire_time is out of range');
    return { resource, amountSun: sun(entry.unfreeze_amount, 'unfreeze_amount'), expireTimeMs };
  });
  return {
    address,
    frozenSun,
    delegatedSun: {
      BANDWIDTH: sun(account.delegated_frozenV2_balance_for_bandwidth, 'delegated bandwidth'),
      ENERGY: sun(account.account_resource?.delegated_frozenV2_balance_for_energy, 'delegated energy'),
    },
    acquiredSun: {
      BANDWIDTH: sun(account.acquired_delegated_frozenV2_balance_for_bandwidth, 'acquired bandwidth'),
      ENERGY: sun(account.account_resource?.acquired_delegated_frozenV2_balance_for_energy, 'acquired energy'),
    },
    unfreezing,
  };
}

/** getdelegatedresourcev2: the records from `from` to `to` (none: `{}`); each must be between the two asked about. */
export function readDelegatedResources(answer: unknown, from: TronAddress, to: TronAddress): DelegatedResource[] {
  const list = expectShape(DelegatedResourceListSchema, answer, 'delegated resources');
  return (list.delegatedResource ?? []).map((record) => {
    if (addressOf(record.from, 'from') !== from || addressOf(record.to, 'to') !== to)
      throw invalidAnswer(`asked for delegations ${from} → ${to}, got ${record.from} → ${record.to}`);
    return {
      from,
      to,
      energySun: sun(record.frozen_balance_for_energy, 'frozen_balance_for_energy'),
      bandwidthSun: sun(record.frozen_balance_for_bandwidth, 'frozen_balance_for_bandwidth'),
      energyLockExpireMs: millis(record.expire_time_for_energy),
      bandwidthLockExpireMs: millis(record.expire_time_for_bandwidth),
    };
  });
}

/** getdelegatedresourceaccountindexv2: who delegated to `address` and to whom it delegated. */
export function readDelegationIndex(answer: unknown, address: TronAddress): DelegationIndex {
  const index = expectShape(DelegationIndexSchema, answer, 'delegation index');
  if (index.account !== undefined && addressOf(index.account, 'account') !== address)
    throw invalidAnswer(`asked for the delegation index of ${address}, got ${index.account}`);
  return {
    from: (index.fromAccounts ?? []).map((text) => addressOf(text, 'fromAccounts')),
    to: (index.toAccounts ?? []).map((text) => addressOf(text, 'toAccounts')),
  };
}

/** getcandelegatedmaxsize: sun of stake the account may delegate now (left out: 0). */
export function readCanDelegatedMaxSize(answer: unknown): bigint {
  return sun(expectShape(CanDelegatedMaxSizeSchema, answer, 'can-delegate max size').max_size, 'max_size');
}

function sun(value: number | bigint | undefined, what: string): bigint {
  const amount = BigInt(value ?? 0);
  if (amount < 0n || amount > INT64_MAX) throw invalidAnswer(`${what} ${amount} is not an amount of sun`);
  return amount;
}

function millis(value: number | undefined): number {
  const ms = value ?? 0;
  if (!Number.isSafeInteger(ms)) throw invalidAnswer(`a time of ${ms} ms is out of range`);
  return ms;
}

function addressOf(text: string, what: string): TronAddress {
  const parsed = text.startsWith('T') ? parseTronAddress(text) : parseTronHexAddress(text);
  if (!parsed.ok) throw invalidAnswer(`${what} ${JSON.stringify(text.slice(0, 64))} is not a TRON address`);
  return parsed.address;
}
