// The sign-once executor against the simulated chain over HTTP through the
// production node client, on a real database; test-only outcome handlers
// record what the executor told the owner (inside its transactions).
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { Tx } from '../../../src/db/transaction.ts';
import { inTransaction } from '../../../src/db/transaction.ts';
import type { ExecutorOptions } from '../../../src/crypto/sending/executor-context.ts';
import { createOutgoingExecutor, type OutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import {
  enqueueOutgoingTransfer,
  enqueueOutgoingTransfers,
  type OutgoingTransfer,
  type OutgoingTransferRequest,
} from '../../../src/crypto/sending/outgoing-transfers.ts';
import { tronAddressFromPrivateKey, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';
import type { ReceivingSetup } from '../receiving/receiving-service-support.ts';
import { uniqueName } from '../../support/seeded-random.ts';

export interface HandlerLog {
  readonly submitted: OutgoingTransfer[];
  readonly final: OutgoingTransfer[];
}

export function recordingHandler(log: HandlerLog) {
  return {
    async onSubmitted(_tx: Tx, _clock: unknown, transfer: OutgoingTransfer) {
      log.submitted.push(transfer);
    },
    async onFinal(_tx: Tx, _clock: unknown, transfer: OutgoingTransfer) {
      log.final.push(transfer);
    },
  };
}

export function newLog(): HandlerLog {
  return { submitted: [], final: [] };
}

export function freshAddress(): TronAddress {
  return tronAddressFromPrivateKey(secp256k1.utils.randomSecretKey());
}

export function executorFor(
  setup: ReceivingSetup,
  log: HandlerLog,
  overrides: Partial<ExecutorOptions> = {},
): OutgoingExecutor {
  const handler = recordingHandler(log);
  return createOutgoingExecutor({
    db: setup.context.db,
    clock: setup.clock,
    logger: setup.context.logger,
    chain: 'tron-sandbox',
    node: setup.access.node,
    transferEnergy: setup.access.transferEnergy,
    signingKey: () => setup.access.signingKey(),
    hotWallet: setup.access.addressKey.hotWalletAddress,
    usdtContract: USDT_CONTRACT_MAINNET,
    handlers: { payout: handler, refund: handler, withdrawal: handler, sweep: handler, gas_topup: handler },
    trxUsdtRateMicro: 300_000n,
    maxInFlight: 10_000,
    maxAttempts: 3,
    fundsWaitSeconds: 600,
    ...overrides,
  });
}

export function fundHotWallet(setup: ReceivingSetup, usdt = 1_000_000_000n, trxSun = 10_000_000_000n): void {
  setup.sandbox.chain.faucet(setup.access.addressKey.hotWalletAddress, { trxSun, usdt });
}

export async function enqueuePayout(
  setup: ReceivingSetup,
  to: TronAddress,
  amount: bigint,
  overrides: Partial<OutgoingTransferRequest> = {},
): Promise<OutgoingTransfer> {
  return inTransaction(setup.context.db, (tx) =>
    enqueueOutgoingTransfer(tx, setup.clock, {
      chain: 'tron-sandbox',
      purpose: 'payout',
      ownerId: uniqueName('po_test'),
      asset: 'USDT',
      from: { kind: 'hot_wallet' },
      to,
      amount,
      ...overrides,
    }),
  );
}

/** Payouts of `amount` from the hot wallet to each of `recipients`, queued in one INSERT as a batch payout's items are. */
export async function enqueuePayouts(
  setup: ReceivingSetup,
  recipients: readonly TronAddress[],
  amount: bigint,
): Promise<OutgoingTransfer[]> {
  return inTransaction(setup.context.db, (tx) =>
    enqueueOutgoingTransfers(
      tx,
      setup.clock,
      recipients.map((to) => ({
        chain: 'tron-sandbox' as const,
        purpose: 'payout' as const,
        ownerId: uniqueName('po_test'),
        asset: 'USDT' as const,
        from: { kind: 'hot_wallet' as const },
        to,
        amount,
      })),
    ),
  );
}

/** Blocks until a block made now is solidified, and one more. */
export function mineToFinal(setup: ReceivingSetup): void {
  setup.sandbox.chain.mine(setup.sandbox.chain.parameters.solidityDepth + 1);
}
