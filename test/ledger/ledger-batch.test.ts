// executeBatch: many independent movements in one call (the crypto watcher's
// reservations and settlements). Each is its own chain; a repeat is skipped
// while the rest are written; reused ids with other parameters are 409; any
// refusal writes nothing of the batch. A reservation credited to a merchant
// account (an incoming credit) writes a zero-effect history entry that the
// merchant's history lists only while it is open. Invariants after every test.
import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { listMerchantOperations } from '../../src/ledger/balance-service.ts';
import { findAccountsByIds } from '../../src/ledger/ledger-repository.ts';
import { executeBatch, findTransfer, type LedgerRequest } from '../../src/ledger/ledger-service.ts';
import { backends } from '../support/databases.ts';
import { fund, merchantAccounts, newMerchantId, useLedgerDatabase } from './ledger-support.ts';
import { uniqueName } from '../support/seeded-random.ts';

describe.each(backends)('ledger batches on %s', (backend) => {
  const environment = useLedgerDatabase(backend);
  const unique = (label: string) => uniqueName(`${label}:${backend}`);

  it('reserves, posts and voids many movements at once, each its own chain; a repeat is skipped, not written twice', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const { main, settlement } = await merchantAccounts(context, merchantId, 'USDT');
    const prefix = unique('incoming');
    const reserves: LedgerRequest[] = Array.from({ length: 300 }, (_, index) => ({
      action: 'reserve',
      id: `${prefix}:${index}`,
      debitAccountId: settlement.id,
      creditAccountId: main.id,
      amount: 1_000_000n,
      type: 'deposit',
      reference: { type: 'deposit', id: `${prefix}:${index}` },
    }));
    expect(await inTransaction(context.db, (tx) => executeBatch(tx, context.clock, reserves))).toEqual({
      written: 300,
      replayed: 0,
    });
    const chains = await context.db
      .selectFrom('ledger_transfers')
      .select('chain_id')
      .where('idempotency_key', 'like', `${prefix}:%`)
      .execute();
    expect(new Set(chains.map((row) => row.chain_id)).size).toBe(300);
    let [account] = await findAccountsByIds(context.db, [main.id]);
    expect([account!.credits_pending, account!.credits_posted]).toEqual([300_000_000n, 0n]);

    const closes: LedgerRequest[] = reserves.map((request, index) =>
      index % 3 === 0
        ? { action: 'void', id: `${request.id}:void`, pendingId: request.id }
        : { action: 'post', id: `${request.id}:post`, pendingId: request.id },
    );
    // A repeat of the first half of the closes, together with the second half: only that half is written.
    await inTransaction(context.db, (tx) => executeBatch(tx, context.clock, closes.slice(0, 150)));
    expect(await inTransaction(context.db, (tx) => executeBatch(tx, context.clock, closes))).toEqual({
      written: 150,
      replayed: 150,
    });
    expect(await inTransaction(context.db, (tx) => executeBatch(tx, context.clock, reserves.slice(0, 10)))).toEqual({
      written: 0,
      replayed: 10,
    });
    [account] = await findAccountsByIds(context.db, [main.id]);
    expect([account!.credits_pending, account!.credits_posted]).toEqual([0n, 200_000_000n]);
    expect((await findTransfer(context.db, `${prefix}:0`))!.currentStatus).toBe('voided');
    expect((await findTransfer(context.db, `${prefix}:1`))!.currentStatus).toBe('posted');
  });

  it('the same id with other parameters is 409 and a refusal anywhere writes nothing of the batch', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const { main, payout, settlement } = await merchantAccounts(context, merchantId, 'USDT');
    await fund(context, settlement.id, main.id, 5_000_000n);
    const prefix = unique('refused');
    const good: LedgerRequest = {
      action: 'transfer',
      id: `${prefix}:a`,
      debitAccountId: main.id,
      creditAccountId: payout.id,
      amount: 1_000_000n,
      type: 'transfer',
      reference: { type: 'test', id: 'a' },
    };
    await inTransaction(context.db, (tx) => executeBatch(tx, context.clock, [good]));
    await expect(
      inTransaction(context.db, (tx) => executeBatch(tx, context.clock, [{ ...good, amount: 2_000_000n }])),
    ).rejects.toMatchObject({ code: 'duplicate_external_id' });
    const tooMuch: LedgerRequest = { ...good, id: `${prefix}:b`, amount: 5_000_000n };
    const fine: LedgerRequest = { ...good, id: `${prefix}:c`, amount: 1_000n };
    await expect(
      inTransaction(context.db, (tx) => executeBatch(tx, context.clock, [fine, tooMuch])),
    ).rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(await findTransfer(context.db, `${prefix}:c`)).toBeUndefined();
    const [after] = await findAccountsByIds(context.db, [main.id]);
    expect(after!.debits_posted).toBe(1_000_000n);
  });

  it('an incoming reservation is listed in the merchant history while open, with its amount and an unchanged balance; its post replaces it', async () => {
    const { context } = environment();
    const merchantId = await newMerchantId(context);
    const { main, settlement } = await merchantAccounts(context, merchantId, 'USDT');
    const id = unique('deposit');
    const reserve: LedgerRequest = {
      action: 'reserve',
      id,
      debitAccountId: settlement.id,
      creditAccountId: main.id,
      amount: 7_500_000n,
      type: 'deposit',
      reference: { type: 'deposit', id },
    };
    await inTransaction(context.db, (tx) => executeBatch(tx, context.clock, [reserve]));
    const owner = { shopId: 'unused', merchantId, book: 'sandbox' as const };
    const open = await listMerchantOperations(context, owner, { limit: 10, accountId: main.id });
    expect(open.data).toHaveLength(1);
    expect(open.data[0]).toMatchObject({
      type: 'deposit',
      amount: '7.500000',
      status: 'pending',
      balance_after: '0.000000',
    });
    await inTransaction(context.db, (tx) =>
      executeBatch(tx, context.clock, [{ action: 'post', id: `${id}:post`, pendingId: id }]),
    );
    const posted = await listMerchantOperations(context, owner, { limit: 10, accountId: main.id });
    expect(posted.data.map((entry) => [entry.amount, entry.status, entry.balance_after])).toEqual([
      ['7.500000', 'posted', '7.500000'],
    ]);
  });
});
