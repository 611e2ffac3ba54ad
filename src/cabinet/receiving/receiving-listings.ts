// The four tables of crypto receiving in a shop (listing.ts): crypto invoices,
// static wallets, deposits (to invoices and wallets) and refunds, each read
// through its module's service and shown as the API shows it (USDT as the API's
// decimal strings).
import {
  browseDeposits,
  browseInvoices,
  browseWallets,
  DEPOSIT_STATUSES,
  INVOICE_STATUSES,
  WALLET_STATUSES,
  type DepositRecord,
} from '../../crypto/receiving/receiving-browsing.ts';
import type { InvoiceView, WalletView } from '../../crypto/receiving/receiving-views.ts';
import { browseRefunds, REFUND_STATUSES } from '../../crypto/refunds/refund-service.ts';
import type { RefundView } from '../../crypto/refunds/refunds-views.ts';
import type { CabinetDeps } from '../cabinet-context.ts';
import type { Listing, ListingColumn } from '../listings/listing.ts';
import { html } from '../views/html.ts';
import { translator, type Lang } from '../views/cabinet-language.ts';
import RECEIVING_TEXTS from './receiving-texts.json' with { type: 'json' };

export const receivingText = translator(RECEIVING_TEXTS);
const text = receivingText;
type TextKey = Parameters<typeof text>[1];

/** An instant as the tables show it: `2026-11-01 10:00 UTC`. */
export function minuteOf(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

function column<Row>(
  key: string,
  label: TextKey,
  value: (row: Row) => string | null,
  shape?: 'code' | 'status' | 'time',
): ListingColumn<Row> {
  const textOf = (row: Row) => value(row) ?? '';
  return {
    key,
    label: (lang: Lang) => text(lang, label),
    text: textOf,
    ...(shape === 'code'
      ? { cell: (row: Row) => (value(row) === null ? '' : html`<code>${textOf(row)}</code>`) }
      : shape === 'status'
        ? { cell: (row: Row) => html`<span class=${`badge ${textOf(row)}`}>${textOf(row)}</span>` }
        : shape === 'time'
          ? { cell: (row: Row) => (value(row) === null ? '' : minuteOf(textOf(row))) }
          : {}),
  };
}

export function invoiceListing(deps: CabinetDeps): Listing<InvoiceView> {
  return {
    path: 'invoices',
    title: (lang) => text(lang, 'invoices'),
    permission: 'payments.read',
    statuses: INVOICE_STATUSES,
    amountAsset: 'USDT',
    searchHint: (lang) => text(lang, 'search_invoices'),
    columns: [
      column('invoice_id', 'col_invoice_id', (row) => row.invoice_id, 'code'),
      column('external_id', 'col_external_id', (row) => row.external_id),
      column('status', 'col_status', (row) => row.status, 'status'),
      column('amount', 'col_amount', (row) => row.amount),
      column('received', 'col_received', (row) => row.paid_amount),
      column('address', 'col_address', (row) => row.address, 'code'),
      column('created_at', 'col_created', (row) => row.created_at, 'time'),
      column('expires_at', 'col_expires', (row) => row.expires_at, 'time'),
    ],
    read: (shop, filter, page) => browseInvoices(deps, shop.shopId, filter, page),
    detailPath: (row) => `invoices/${row.invoice_id}`,
  };
}

export function walletListing(deps: CabinetDeps): Listing<WalletView> {
  return {
    path: 'wallets',
    title: (lang) => text(lang, 'wallets'),
    permission: 'payments.read',
    statuses: WALLET_STATUSES,
    searchHint: (lang) => text(lang, 'search_wallets'),
    columns: [
      column('wallet_id', 'col_wallet_id', (row) => row.wallet_id, 'code'),
      column('client_id', 'col_client_id', (row) => row.client_id),
      column('address', 'col_address', (row) => row.address, 'code'),
      column('status', 'col_status', (row) => row.status, 'status'),
      column('received_amount', 'col_received', (row) => row.received_amount),
      column('held_amount', 'col_held', (row) => row.held_amount),
      column('created_at', 'col_created', (row) => row.created_at, 'time'),
    ],
    read: (shop, filter, page) => browseWallets(deps, shop.shopId, filter, page),
    detailPath: (row) => `wallets/${row.wallet_id}`,
  };
}

export function depositListing(deps: CabinetDeps): Listing<DepositRecord> {
  return {
    path: 'deposits',
    title: (lang) => text(lang, 'deposits'),
    permission: 'payments.read',
    statuses: DEPOSIT_STATUSES,
    amountAsset: 'USDT',
    searchHint: (lang) => text(lang, 'search_deposits'),
    columns: [
      column('deposit_id', 'col_deposit_id', (row) => row.deposit_id, 'code'),
      column('status', 'col_status', (row) => row.status, 'status'),
      column('amount', 'col_amount', (row) => row.amount),
      column('address', 'col_address', (row) => row.address, 'code'),
      column('tx_hash', 'col_tx', (row) => row.tx_id, 'code'),
      column('block_number', 'col_block', (row) => String(row.block_number)),
      column('confirmations', 'col_confirmations', (row) =>
        row.confirmations === null ? null : String(row.confirmations),
      ),
      column('invoice_id', 'col_invoice_id', (row) => row.invoice_id, 'code'),
      column('wallet_id', 'col_wallet_id', (row) => row.wallet_id, 'code'),
      column('seen_at', 'col_seen', (row) => row.seen_at, 'time'),
    ],
    read: (shop, filter, page) => browseDeposits(deps, shop.shopId, filter, page),
    detailPath: (row) => `deposits/${row.deposit_id}`,
  };
}

export function refundListing(deps: CabinetDeps): Listing<RefundView> {
  return {
    path: 'refunds',
    title: (lang) => text(lang, 'refunds'),
    permission: 'payments.read',
    statuses: REFUND_STATUSES,
    amountAsset: 'USDT',
    searchHint: (lang) => text(lang, 'search_refunds'),
    columns: [
      column('refund_id', 'col_refund_id', (row) => row.refund_id, 'code'),
      column('external_id', 'col_external_id', (row) => row.external_id),
      column('status', 'col_status', (row) => row.status, 'status'),
      column('of', 'col_for', (row) => row.deposit_id ?? row.invoice_id, 'code'),
      column('received_amount', 'col_received', (row) => row.received_amount),
      column('network_fee', 'col_network_fee', (row) => row.network_fee),
      column('recipient_amount', 'col_sent_back', (row) => row.recipient_amount),
      column('recipient_address', 'col_recipient', (row) => row.recipient_address, 'code'),
      column('tx_hash', 'col_tx', (row) => row.tx_hash, 'code'),
      column('created_at', 'col_created', (row) => row.created_at, 'time'),
    ],
    read: (shop, filter, page) => browseRefunds(deps, shop.shopId, filter, page),
    detailPath: (row) => `refunds/${row.refund_id}`,
  };
}
