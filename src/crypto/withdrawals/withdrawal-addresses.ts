// The merchant's withdrawal address book (issue 27 point 4): per merchant and
// book (sandbox/live), a cabinet withdrawal may only go to an address of it, and
// a new address becomes usable only after PAYGATE_WITHDRAWAL_ADDRESS_COOLDOWN_HOURS
// (default 24) — what exchanges do against account takeover: whoever adds an
// address with a stolen session cannot send to it before the owners, mailed by
// the cabinet and shown the audit log, notice. Additions and removals are audited
// (withdrawal_address.added / .removed) in their own transaction. The cabinet
// checks the person's second factor before calling `addWithdrawalAddress`.
import { recordAudit, type AuditActor } from '../../audit/audit-service.ts';
import type { Clock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { inTransaction, isUniqueViolation, type Db } from '../../db/transaction.ts';
import { InvalidRequestError, NotFoundError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { ShopProfile } from '../../merchants/merchant-service.ts';
import type { CryptoChain } from '../chain/crypto-chain.ts';
import { checkRecipients, parseRecipient } from '../payouts/payout-service.ts';
import * as repository from './withdrawal-addresses-repository.ts';
import type { WithdrawalAddressRow } from './withdrawal-addresses-repository.ts';

type ShopMode = ShopProfile['mode'];

export interface WithdrawalAddressDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly config: Pick<Config, 'withdrawalAddressCooldownMs'>;
  readonly chain: Pick<CryptoChain, 'forMode'>;
}

export interface WithdrawalAddressView {
  readonly address_id: string;
  readonly label: string;
  readonly address: string;
  readonly added_by: string;
  readonly created_at: string;
  /** From this instant withdrawals may name it. */
  readonly usable_from: string;
  readonly usable: boolean;
}

const LABEL_MAX_LENGTH = 100;
const ADDRESS_ID = /^wda_[0-9a-z]{26}$/;

export function chainOfMode(mode: ShopMode): WithdrawalAddressRow['chain'] {
  return mode === 'live' ? 'tron-live' : 'tron-sandbox';
}

function addressView(row: WithdrawalAddressRow, now: Date): WithdrawalAddressView {
  return {
    address_id: row.id,
    label: row.label,
    address: row.address,
    added_by: row.added_by,
    created_at: row.created_at.toISOString(),
    usable_from: row.usable_from.toISOString(),
    usable: row.usable_from.getTime() <= now.getTime(),
  };
}

function parseLabel(value: string): string {
  const label = value.trim();
  if (label.length < 1 || label.length > LABEL_MAX_LENGTH)
    throw new InvalidRequestError(`The label must be 1 to ${LABEL_MAX_LENGTH} characters.`);
  return label;
}

export interface AddWithdrawalAddressInput {
  readonly merchantId: string;
  readonly mode: ShopMode;
  readonly label: string;
  readonly address: string;
  readonly actor: AuditActor & { readonly label: string };
}

/**
 * Adds an address, usable after the cool-down; validated as payout recipients are (a strict TRON
 * address, none of the gateway's own). The same live address twice in one book is refused.
 */
export async function addWithdrawalAddress(
  deps: WithdrawalAddressDeps,
  input: AddWithdrawalAddressInput,
): Promise<WithdrawalAddressView> {
  const label = parseLabel(input.label);
  const address = parseRecipient(input.address.trim(), 'address');
  const access = await deps.chain.forMode(input.mode);
  await checkRecipients(deps.db, access, [{ address, field: 'address' }]);
  const chain = chainOfMode(input.mode);
  const duplicate = 'This address is already in the address book.';
  try {
    return await inTransaction(deps.db, async (tx) => {
      const live = await repository.liveAddresses(tx, input.merchantId, chain);
      if (live.some((row) => row.address === address)) throw new InvalidRequestError(duplicate);
      if (live.length >= repository.WITHDRAWAL_ADDRESSES_MAX)
        throw new InvalidRequestError(
          `The address book holds at most ${repository.WITHDRAWAL_ADDRESSES_MAX} addresses; remove one first.`,
        );
      const now = deps.clock.now();
      const row = await repository.insertAddress(tx, {
        id: newId('withdrawalAddress'),
        merchant_id: input.merchantId,
        chain,
        label,
        address,
        added_by: input.actor.label.slice(0, 320) || 'unknown',
        added_by_user_id: input.actor.kind === 'user' ? (input.actor.id ?? null) : null,
        created_at: now,
        usable_from: new Date(now.getTime() + deps.config.withdrawalAddressCooldownMs),
        removed_at: null,
        removed_by: null,
      });
      await recordAudit(tx, deps.clock, {
        actor: input.actor,
        action: 'withdrawal_address.added',
        merchantId: input.merchantId,
        target: row.id,
        details: { label, address, book: input.mode, usable_from: row.usable_from.toISOString() },
      });
      return addressView(row, now);
    });
  } catch (error) {
    if (isUniqueViolation(error, repository.WITHDRAWAL_ADDRESS_LIVE_INDEX)) throw new InvalidRequestError(duplicate);
    throw error;
  }
}

/** Removes a live address of the merchant (audited); withdrawals already made to it keep it. */
export async function removeWithdrawalAddress(
  deps: Pick<WithdrawalAddressDeps, 'db' | 'clock'>,
  input: { merchantId: string; addressId: string; actor: AuditActor & { readonly label: string } },
): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    const removed = ADDRESS_ID.test(input.addressId)
      ? await repository.removeAddress(
          tx,
          input.addressId,
          input.merchantId,
          input.actor.label.slice(0, 320) || 'unknown',
          deps.clock.now(),
        )
      : undefined;
    if (!removed) throw new NotFoundError('No such address in the address book.');
    await recordAudit(tx, deps.clock, {
      actor: input.actor,
      action: 'withdrawal_address.removed',
      merchantId: input.merchantId,
      target: removed.id,
      details: { label: removed.label, address: removed.address },
    });
  });
}

/** The book's live addresses, newest first, each saying whether its cool-down is over. */
export async function listWithdrawalAddresses(
  deps: Pick<WithdrawalAddressDeps, 'db' | 'clock'>,
  merchantId: string,
  mode: ShopMode,
): Promise<WithdrawalAddressView[]> {
  const now = deps.clock.now();
  return (await repository.liveAddresses(deps.db, merchantId, chainOfMode(mode))).map((row) => addressView(row, now));
}

/**
 * The live address `addressId` of the merchant's book, past its cool-down: what a withdrawal may
 * name. Inside its cool-down: 400 invalid_request saying from when.
 */
export async function usableAddress(
  deps: Pick<WithdrawalAddressDeps, 'db' | 'clock'>,
  merchantId: string,
  chain: WithdrawalAddressRow['chain'],
  addressId: string,
): Promise<WithdrawalAddressRow> {
  const row = ADDRESS_ID.test(addressId) ? await repository.findAddress(deps.db, addressId) : undefined;
  if (!row || row.merchant_id !== merchantId || row.chain !== chain || row.removed_at !== null)
    throw new InvalidRequestError('Choose an address from the address book.');
  if (row.usable_from.getTime() > deps.clock.now().getTime())
    throw new InvalidRequestError(
      `The address “${row.label}” was added recently and can be used from ${row.usable_from.toISOString().slice(0, 16).replace('T', ' ')} UTC (the cool-down protects against a stolen session).`,
    );
  return row;
}
