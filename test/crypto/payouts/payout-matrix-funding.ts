// Credits a scope-matrix shop's USDT main account as a final deposit would, so
// its payouts can be accepted (the matrix builds its own app, not PayoutTestApp).
import { inTransaction } from '../../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../../src/ledger/ledger-accounts.ts';
import { transfer } from '../../../src/ledger/ledger-service.ts';
import type { MatrixShop } from '../../support/scope-matrix.ts';

let fundings = 0;

export async function fundShop(shop: MatrixShop): Promise<void> {
  const { context, clock } = shop.testApp;
  fundings += 1;
  await inTransaction(context.db, async (tx) => {
    const [main, hotWallet] = await ensureAccounts(tx, clock, [
      merchantAccountKey('sandbox', shop.merchant.merchant_id, 'USDT', 'main'),
      systemAccountKey('sandbox', 'hot_wallet', 'USDT', 0),
    ]);
    await transfer(tx, clock, {
      id: `test-matrix-funding:${process.pid}:${fundings}:${shop.merchant.shop_id}`,
      debitAccountId: hotWallet!.id,
      creditAccountId: main!.id,
      amount: 1_000_000_000n,
      type: 'deposit',
      reference: { type: 'deposit', id: `matrix-${fundings}` },
    });
  });
}
