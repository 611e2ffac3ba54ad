// What `paygate trigger <event>` does on a sandbox shop to make the gateway emit
// that event for real: the API calls a merchant's program would make and the
// test-helper calls that play the payer, the acquirer, the chain and the clock.
// Each scenario returns how to recognise its event among the shop's events (by
// type and by the id of the resource it made), so an older event of the same
// type is never mistaken for it.
import { randomBytes, randomUUID } from 'node:crypto';
import { tronAddressFromEvm } from '../../crypto/tron/address.ts';
import type { GatewayClient } from './gateway-client.ts';
import { waitFor, type Deadline } from './polling.ts';

/** A block is final once 18 blocks are above it: 19 new blocks make a fresh transfer final. */
const BLOCKS_TO_FINALITY = 19;
/** Tries between two rounds of mining while a sent transfer is still not final. */
const TRIES_BETWEEN_MINING = 4;

export const INVOICE_OUTCOMES = ['paid', 'overpaid', 'underpaid', 'expired'] as const;
export type InvoiceOutcome = (typeof INVOICE_OUTCOMES)[number];

interface TriggerRun {
  readonly client: GatewayClient;
  readonly deadline: Deadline;
  /** A payment's callback_url: `--callback-url`, else the shop's webhook URL; null when neither is set. */
  readonly callbackUrl: string | null;
  readonly invoiceOutcome: InvoiceOutcome;
  /** A progress line for a person (stderr), never part of the result. */
  note(line: string): void;
}

/** The event a scenario waits for: its type and a test on its `data` naming the resource it made. */
export interface ExpectedEvent {
  readonly type: string;
  /** For messages: "crypto.payout.updated of po_… (completed)". */
  readonly describe: string;
  matches(data: Record<string, unknown>): boolean;
}

export interface TriggerKind {
  readonly name: string;
  readonly summary: string;
  /** Payment events are written only for a payment with a callback_url (API.md): without one there is no event. */
  readonly needsCallbackUrl?: true;
  run(run: TriggerRun): Promise<ExpectedEvent>;
}

interface Payment {
  payment_id: string;
  status: string;
}
interface Invoice {
  invoice_id: string;
  address: string;
  status: string;
  paid_amount: string;
}
interface Wallet {
  wallet_id: string;
  address: string;
}
interface Sent {
  status: string;
  tx_hash: string | null;
}
interface Batch {
  batch_id: string;
  completed_at: string | null;
  payouts: Sent[];
}

const nested = (data: Record<string, unknown>, key: string): Record<string, unknown> =>
  (data[key] ?? {}) as Record<string, unknown>;

/** A fresh address no one holds the key of: the recipient of the USDT a scenario sends. */
function throwawayAddress(): string {
  return tronAddressFromEvm(randomBytes(20));
}

function tag(prefix: string): string {
  return `trigger-${prefix}-${randomUUID()}`;
}

// ---- RUB payments ----

async function createPayment(run: TriggerRun): Promise<Payment> {
  return run.client.post<Payment>('/v1/payments', {
    amount: 100,
    currency: 'RUB',
    order_id: tag('order'),
    callback_url: run.callbackUrl,
  });
}

function paymentHelper(action: 'pay' | 'fail' | 'expire', type: string): TriggerKind['run'] {
  return async (run) => {
    const payment = await createPayment(run);
    run.note(`payment ${payment.payment_id} created; test helper: ${action}`);
    await run.client.post(`/v1/test_helpers/payments/${payment.payment_id}/${action}`);
    return {
      type,
      describe: `${type} of payment ${payment.payment_id}`,
      matches: (data) => data.payment_id === payment.payment_id,
    };
  };
}

async function paymentRefunded(run: TriggerRun): Promise<ExpectedEvent> {
  const payment = await createPayment(run);
  await run.client.post(`/v1/test_helpers/payments/${payment.payment_id}/pay`);
  const refund = await run.client.post<{ refund_id: string }>(`/v1/payments/${payment.payment_id}/refunds`, {
    amount: 50,
    reason: 'paygate trigger',
  });
  run.note(`payment ${payment.payment_id} paid; refund ${refund.refund_id} of 50 RUB asked`);
  return {
    type: 'payment.refunded',
    describe: `payment.refunded of refund ${refund.refund_id}`,
    matches: (data) => nested(data, 'refund').refund_id === refund.refund_id,
  };
}

// ---- the simulated chain ----

async function mine(run: TriggerRun): Promise<void> {
  await run.client.post('/v1/test_helpers/crypto/blocks', { count: BLOCKS_TO_FINALITY });
}

/** A payer of the simulated chain sends `amount` to `address`, and the transfer is mined to finality. */
async function payOnChain(run: TriggerRun, address: string, amount: string): Promise<string> {
  const sent = await run.client.post<{ tx_id: string }>('/v1/test_helpers/crypto/deposits', { address, amount });
  await mine(run);
  run.note(`${amount} USDT sent to ${address} (tx ${sent.tx_id}), ${BLOCKS_TO_FINALITY} blocks mined`);
  return sent.tx_id;
}

async function createInvoice(run: TriggerRun, amount: string): Promise<Invoice> {
  return run.client.post<Invoice>('/v1/crypto/invoices', { external_id: tag('invoice'), amount, network: 'TRC20' });
}

function readInvoice(run: TriggerRun, invoiceId: string): Promise<Invoice> {
  return run.client.get<Invoice>(`/v1/crypto/invoices/${invoiceId}`);
}

/** An invoice paid on chain and credited: `amount` USDT more on the shop's balance. */
async function fundBalance(run: TriggerRun, amount: string): Promise<Invoice> {
  const invoice = await createInvoice(run, amount);
  await payOnChain(run, invoice.address, amount);
  await waitFor(`invoice ${invoice.invoice_id} to be paid (the chain watcher credits it)`, run.deadline, async () => {
    const now = await readInvoice(run, invoice.invoice_id);
    return now.status === 'paid' ? now : undefined;
  });
  run.note(`balance funded with ${amount} USDT through invoice ${invoice.invoice_id}`);
  return invoice;
}

/**
 * Waits until what `read` shows is final, mining blocks whenever its transfer is on chain but not
 * final yet: the gateway's executor signs and broadcasts by itself, the blocks are ours to make.
 */
async function driveToFinal(
  run: TriggerRun,
  what: string,
  read: () => Promise<{ final: boolean; broadcast: boolean }>,
): Promise<void> {
  let minedAt: number | undefined;
  await waitFor(`${what} to be final`, run.deadline, async (attempt) => {
    const state = await read();
    if (state.final) return true;
    if (state.broadcast && (minedAt === undefined || attempt - minedAt >= TRIES_BETWEEN_MINING)) {
      await mine(run);
      minedAt = attempt;
    }
    return undefined;
  });
}

const isFinal = (status: string) => status === 'completed' || status === 'failed';
const sentState = (sent: Sent) => ({ final: isFinal(sent.status), broadcast: sent.tx_hash !== null });

function invoiceUpdated(outcome: InvoiceOutcome, invoiceId: string): ExpectedEvent {
  return {
    type: 'crypto.invoice.updated',
    describe: `crypto.invoice.updated of ${invoiceId} (${outcome})`,
    matches: (data) => data.invoice_id === invoiceId && data.status === outcome,
  };
}

async function invoiceUpdatedKind(run: TriggerRun): Promise<ExpectedEvent> {
  const outcome = run.invoiceOutcome;
  const invoice = await createInvoice(run, '10');
  run.note(`invoice ${invoice.invoice_id} of 10 USDT created`);
  if (outcome === 'expired') {
    await run.client.post(`/v1/test_helpers/crypto/invoices/${invoice.invoice_id}/expire`);
    return invoiceUpdated(outcome, invoice.invoice_id);
  }
  const paid = { paid: '10', overpaid: '12', underpaid: '4' }[outcome];
  await payOnChain(run, invoice.address, paid);
  if (outcome === 'underpaid') {
    // Short of its amount the invoice waits for the rest until it expires: once the part paid is final, expire it.
    await waitFor(`the 4 USDT paid to invoice ${invoice.invoice_id} to be final`, run.deadline, async () => {
      const now = await readInvoice(run, invoice.invoice_id);
      return now.paid_amount === '4' ? now : undefined;
    });
    await run.client.post(`/v1/test_helpers/crypto/invoices/${invoice.invoice_id}/expire`);
  }
  return invoiceUpdated(outcome, invoice.invoice_id);
}

async function walletDeposit(run: TriggerRun, type: string): Promise<ExpectedEvent> {
  const wallet = await run.client.post<Wallet>('/v1/crypto/wallets', { client_id: tag('client'), network: 'TRC20' });
  run.note(`wallet ${wallet.wallet_id} created`);
  const txId = await payOnChain(run, wallet.address, '5');
  if (type === 'crypto.balance.funded')
    return {
      type,
      describe: `crypto.balance.funded by transaction ${txId}`,
      matches: (data) => nested(data, 'deposit').tx_id === txId,
    };
  return {
    type,
    describe: `crypto.wallet.deposit of wallet ${wallet.wallet_id} (credited)`,
    matches: (data) =>
      nested(data, 'wallet').wallet_id === wallet.wallet_id && nested(data, 'deposit').status === 'credited',
  };
}

async function refundUpdated(run: TriggerRun): Promise<ExpectedEvent> {
  const invoice = await fundBalance(run, '20');
  const refund = await run.client.post<Sent & { refund_id: string }>('/v1/crypto/refunds', {
    invoice_id: invoice.invoice_id,
    address: throwawayAddress(),
    external_id: tag('refund'),
  });
  run.note(`refund ${refund.refund_id} of invoice ${invoice.invoice_id} asked`);
  await driveToFinal(run, `refund ${refund.refund_id}`, async () =>
    sentState(await run.client.get<Sent>(`/v1/crypto/refunds/${refund.refund_id}`)),
  );
  return {
    type: 'crypto.refund.updated',
    describe: `crypto.refund.updated of ${refund.refund_id} (final)`,
    matches: (data) => data.refund_id === refund.refund_id && isFinal(String(data.status)),
  };
}

async function payoutUpdated(run: TriggerRun): Promise<ExpectedEvent> {
  await fundBalance(run, '20');
  const payout = await run.client.post<Sent & { payout_id: string }>('/v1/crypto/payouts', {
    external_id: tag('payout'),
    network: 'TRC20',
    amount: '1',
    address: throwawayAddress(),
  });
  run.note(`payout ${payout.payout_id} of 1 USDT created`);
  await driveToFinal(run, `payout ${payout.payout_id}`, async () =>
    sentState(await run.client.get<Sent>(`/v1/crypto/payouts/${payout.payout_id}`)),
  );
  return {
    type: 'crypto.payout.updated',
    describe: `crypto.payout.updated of ${payout.payout_id} (final)`,
    matches: (data) => data.payout_id === payout.payout_id && isFinal(String(data.status)),
  };
}

async function batchCompleted(run: TriggerRun): Promise<ExpectedEvent> {
  await fundBalance(run, '20');
  const batch = await run.client.post<Batch>('/v1/crypto/payouts/batch', {
    external_id: tag('batch'),
    network: 'TRC20',
    payouts: [
      { external_id: tag('item'), amount: '1', address: throwawayAddress() },
      { external_id: tag('item'), amount: '1', address: throwawayAddress() },
    ],
  });
  run.note(`batch ${batch.batch_id} of 2 payouts created`);
  await driveToFinal(run, `batch ${batch.batch_id}`, async () => {
    const now = await run.client.get<Batch>(`/v1/crypto/payouts/batch/${batch.batch_id}`);
    return { final: now.completed_at !== null, broadcast: now.payouts.some((item) => item.tx_hash !== null) };
  });
  return {
    type: 'crypto.batch.completed',
    describe: `crypto.batch.completed of ${batch.batch_id}`,
    matches: (data) => data.batch_id === batch.batch_id,
  };
}

async function withdrawalCompleted(run: TriggerRun): Promise<ExpectedEvent> {
  await fundBalance(run, '20');
  const request = { external_id: tag('withdrawal'), amount: '1', address: throwawayAddress() };
  const ask = () => run.client.post<Sent & { withdrawal_id: string }>('/v1/test_helpers/crypto/withdrawals', request);
  const withdrawal = await ask();
  run.note(`withdrawal ${withdrawal.withdrawal_id} of 1 USDT asked and approved (test helper)`);
  // No API route reads a withdrawal; the helper asked again with the same request answers it as it is now.
  await driveToFinal(run, `withdrawal ${withdrawal.withdrawal_id}`, async () => sentState(await ask()));
  return {
    type: 'cabinet.withdrawal.completed',
    describe: `cabinet.withdrawal.completed of ${withdrawal.withdrawal_id}`,
    matches: (data) => data.withdrawal_id === withdrawal.withdrawal_id,
  };
}

export const TRIGGER_KINDS: readonly TriggerKind[] = [
  {
    name: 'payment.paid',
    summary: 'a RUB payment, paid (test helper pay)',
    run: paymentHelper('pay', 'payment.paid'),
    needsCallbackUrl: true,
  },
  {
    name: 'payment.failed',
    summary: 'a RUB payment, declined (test helper fail)',
    run: paymentHelper('fail', 'payment.failed'),
    needsCallbackUrl: true,
  },
  {
    name: 'payment.expired',
    summary: 'a RUB payment, expired (test helper expire)',
    run: paymentHelper('expire', 'payment.expired'),
    needsCallbackUrl: true,
  },
  {
    name: 'payment.refunded',
    summary: 'a RUB payment paid, then 50 RUB of it refunded',
    run: paymentRefunded,
    needsCallbackUrl: true,
  },
  {
    name: 'crypto.invoice.updated',
    summary: 'a 10 USDT invoice paid (--status paid), 12 paid (overpaid), 4 paid then expired (underpaid), or expired',
    run: invoiceUpdatedKind,
  },
  {
    name: 'crypto.wallet.deposit',
    summary: 'a static wallet receiving 5 USDT, final and credited',
    run: (run) => walletDeposit(run, 'crypto.wallet.deposit'),
  },
  {
    name: 'crypto.balance.funded',
    summary: 'a static wallet deposit of 5 USDT crediting the balance',
    run: (run) => walletDeposit(run, 'crypto.balance.funded'),
  },
  {
    name: 'crypto.refund.updated',
    summary: 'a 20 USDT invoice paid, then refunded to a fresh address, final',
    run: refundUpdated,
  },
  {
    name: 'crypto.payout.updated',
    summary: 'the balance funded with 20 USDT, then a 1 USDT payout, final',
    run: payoutUpdated,
  },
  {
    name: 'crypto.batch.completed',
    summary: 'the balance funded with 20 USDT, then a batch of two 1 USDT payouts',
    run: batchCompleted,
  },
  {
    name: 'cabinet.withdrawal.completed',
    summary: 'the balance funded with 20 USDT, then a 1 USDT cabinet withdrawal (test helper), final',
    run: withdrawalCompleted,
  },
];
