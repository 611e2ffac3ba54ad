// The built-in sandbox acquirer. It keeps its own book of charges (table
// sandbox_acquirer_charges) exactly as a bank would on its side: one charge per
// charge key, at most one successful capture per payment and rail (card, SBP,
// SberPay are separate systems), and refunds of a captured charge, in full or in
// part, never more in total than it captured (table sandbox_acquirer_refunds).
// The book is a table so that it outlives the gateway process, as a real acquirer does.
import type { Clock } from '../../../clock.ts';
import { inTransaction, isUniqueViolation, type Db } from '../../../db/transaction.ts';
import type {
  AcquirerConnector,
  ChargeOutcome,
  ChargeRequest,
  RefundOutcome,
  RefundRequest,
} from '../acquirer-connector.ts';
import { PAYMENT_METHODS } from '../../payment-tables.ts';
import { sandboxCardBehaviour } from './sandbox-cards.ts';

type ChargeRow = {
  charge_key: string;
  status: 'succeeded' | 'declined' | 'requires_confirmation' | 'canceled';
  decline_code: string | null;
};

const FINAL_DECLINE_CODES = new Set(['suspected_fraud']);

function outcomeOf(row: ChargeRow): ChargeOutcome {
  switch (row.status) {
    case 'succeeded':
      return { status: 'succeeded', chargeKey: row.charge_key };
    case 'requires_confirmation':
      return { status: 'requires_confirmation', chargeKey: row.charge_key };
    case 'declined':
    case 'canceled': {
      const declineCode = row.decline_code ?? 'card_declined';
      return {
        status: 'declined',
        chargeKey: row.charge_key,
        declineCode,
        final: FINAL_DECLINE_CODES.has(declineCode),
      };
    }
  }
}

export function createSandboxConnector(deps: { db: Db; clock: Clock }): AcquirerConnector {
  async function lookupKey(chargeKey: string): Promise<ChargeOutcome | undefined> {
    const row = await deps.db
      .selectFrom('sandbox_acquirer_charges')
      .select(['charge_key', 'status', 'decline_code'])
      .where('charge_key', '=', chargeKey)
      .executeTakeFirst();
    return row ? outcomeOf(row) : undefined;
  }

  function decide(request: ChargeRequest): { status: ChargeRow['status']; declineCode: string | null } {
    if (request.method !== 'card') return { status: 'succeeded', declineCode: null };
    const card = request.card;
    if (!card) return { status: 'declined', declineCode: 'invalid_card' };
    const now = deps.clock.now();
    const expiredBefore =
      card.expiryYear < now.getUTCFullYear() ||
      (card.expiryYear === now.getUTCFullYear() && card.expiryMonth < now.getUTCMonth() + 1);
    if (expiredBefore) return { status: 'declined', declineCode: 'expired_card' };
    const behaviour = sandboxCardBehaviour(card.number);
    if (behaviour.kind === 'succeed') return { status: 'succeeded', declineCode: null };
    if (behaviour.kind === 'confirm') return { status: 'requires_confirmation', declineCode: null };
    return { status: 'declined', declineCode: behaviour.declineCode };
  }

  async function record(
    request: ChargeRequest,
    status: ChargeRow['status'],
    declineCode: string | null,
  ): Promise<ChargeOutcome> {
    const now = deps.clock.now();
    try {
      const inserted = await inTransaction(deps.db, (tx) =>
        tx
          .insertInto('sandbox_acquirer_charges')
          .values({
            charge_key: request.chargeKey,
            payment_id: request.paymentId,
            method: request.method,
            amount_kopecks: request.amountKopecks,
            card_last4: request.card ? request.card.number.slice(-4) : null,
            status,
            decline_code: declineCode,
            created_at: now,
            updated_at: now,
          })
          .onConflict((conflict) => conflict.column('charge_key').doNothing())
          .returning(['charge_key', 'status', 'decline_code'])
          .executeTakeFirst(),
      );
      if (inserted) return outcomeOf(inserted);
    } catch (error) {
      // The order was already captured under another key: the acquirer refuses a second capture.
      if (isUniqueViolation(error, 'sandbox_acquirer_charges_one_success')) {
        return { status: 'declined', chargeKey: request.chargeKey, declineCode: 'already_captured', final: false };
      }
      throw error;
    }
    return (await lookupKey(request.chargeKey))!;
  }

  return {
    name: 'sandbox',
    methods: PAYMENT_METHODS,
    lookup: (charge) => lookupKey(charge.chargeKey),
    async charge(request) {
      const existing = await lookupKey(request.chargeKey);
      if (existing) return existing;
      const decision = decide(request);
      return record(request, decision.status, decision.declineCode);
    },
    async confirm(chargeKey, approve) {
      try {
        await inTransaction(deps.db, (tx) =>
          tx
            .updateTable('sandbox_acquirer_charges')
            .set(
              approve
                ? { status: 'succeeded', updated_at: deps.clock.now() }
                : { status: 'canceled', decline_code: 'authentication_failed', updated_at: deps.clock.now() },
            )
            .where('charge_key', '=', chargeKey)
            .where('status', '=', 'requires_confirmation')
            .execute(),
        );
      } catch (error) {
        if (!isUniqueViolation(error, 'sandbox_acquirer_charges_one_success')) throw error;
        return { status: 'declined', chargeKey, declineCode: 'already_captured', final: false };
      }
      const outcome = await lookupKey(chargeKey);
      if (!outcome) return { status: 'declined', chargeKey, declineCode: 'unknown_charge', final: false };
      return outcome;
    },
    refund: (request) => refundCharge(deps, request),
    async lookupRefund({ refundKey, chargeKey }) {
      const row = await deps.db
        .selectFrom('sandbox_acquirer_refunds')
        .select('refund_key')
        .where('refund_key', '=', refundKey)
        .where('charge_key', '=', chargeKey)
        .executeTakeFirst();
      return row ? { status: 'succeeded', refundKey } : undefined;
    },
    qrPayload({ paymentId, method, amountKopecks }) {
      const scheme = method === 'sbp' ? 'https://qr.nspk.ru/sandbox' : 'https://sberpay.sandbox.invalid/pay';
      return `${scheme}/${paymentId}?sum=${amountKopecks}&cur=RUB`;
    },
  };
}

/**
 * A refund in the sandbox's book, under the charge row's lock so that racing
 * refunds of one charge never return more than it captured. The same refund key
 * answers as it did the first time; another key past what is left is refused.
 */
async function refundCharge(deps: { db: Db; clock: Clock }, request: RefundRequest): Promise<RefundOutcome> {
  const { refundKey, chargeKey, amountKopecks } = request;
  if (amountKopecks <= 0n) return { status: 'refused', refundKey, reason: 'invalid_amount' };
  return inTransaction(deps.db, async (tx) => {
    const charge = await tx
      .selectFrom('sandbox_acquirer_charges')
      .select(['status', 'amount_kopecks'])
      .where('charge_key', '=', chargeKey)
      .forUpdate()
      .executeTakeFirst();
    if (!charge) return { status: 'refused', refundKey, reason: 'unknown_charge' };
    const refunds = await tx
      .selectFrom('sandbox_acquirer_refunds')
      .select(['refund_key', 'amount_kopecks'])
      .where('charge_key', '=', chargeKey)
      .execute();
    const repeat = refunds.find((refund) => refund.refund_key === refundKey);
    if (repeat) {
      // A real acquirer refuses a key reused for another amount; so does the sandbox.
      return repeat.amount_kopecks === amountKopecks
        ? { status: 'succeeded', refundKey }
        : { status: 'refused', refundKey, reason: 'refund_key_reused' };
    }
    if (charge.status !== 'succeeded') return { status: 'refused', refundKey, reason: 'not_captured' };
    const refunded = refunds.reduce((sum, refund) => sum + refund.amount_kopecks, 0n);
    if (refunded + amountKopecks > charge.amount_kopecks) {
      return {
        status: 'refused',
        refundKey,
        reason: refunded === charge.amount_kopecks ? 'already_refunded' : 'exceeds_captured',
      };
    }
    await tx
      .insertInto('sandbox_acquirer_refunds')
      .values({
        refund_key: refundKey,
        charge_key: chargeKey,
        amount_kopecks: amountKopecks,
        created_at: deps.clock.now(),
      })
      .execute();
    return { status: 'succeeded', refundKey };
  });
}
