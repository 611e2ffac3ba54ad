// The resources of crypto receiving as the API and webhooks show them: amounts
// as decimal strings of USDT (at most 6 places, no trailing zeros), times in ISO 8601.
import type { NetworkMode } from '../tron/tron-networks.ts';
import { formatMinor } from '../../money/decimal.ts';
import type { DepositRow, InvoiceRow, WalletRow } from './receiving-repository.ts';
import type { DepositStatus, InvoiceStatus, WalletStatus } from './receiving-tables.ts';

export interface InvoiceView {
  invoice_id: string;
  external_id: string;
  status: InvoiceStatus;
  network: 'TRC20';
  /** `mainnet` only when the chain's USDT is real (docs/api-decisions.md). */
  network_mode: NetworkMode;
  asset: 'USDT';
  amount: string;
  paid_amount: string;
  address: string;
  /** tron:<address>?amount=<decimal> */
  payment_uri: string;
  lifetime_s: number;
  callback_url: string | null;
  expires_at: string;
  paid_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DepositView {
  deposit_id: string;
  tx_id: string;
  log_index: number;
  from_address: string;
  amount: string;
  status: DepositStatus;
  block_number: number;
  seen_at: string;
  final_at: string | null;
  invoice_id: string | null;
  wallet_id: string | null;
}

export interface WalletView {
  wallet_id: string;
  client_id: string;
  network: 'TRC20';
  network_mode: NetworkMode;
  asset: 'USDT';
  address: string;
  status: WalletStatus;
  /** Final deposits credited to the merchant. */
  received_amount: string;
  /** Final deposits that arrived while the wallet was blocked: recorded, not credited. */
  held_amount: string;
  created_at: string;
  updated_at: string;
  deposits?: DepositView[];
}

/** micro-USDT as the API writes it: "10.5", "0.000001", "100". */
export function usdtText(micro: bigint): string {
  return formatMinor(micro, 'USDT').replace(/\.?0+$/, '');
}

function paymentUri(address: string, amountMicro: bigint): string {
  return `tron:${address}?amount=${usdtText(amountMicro)}`;
}

export function invoiceView(row: InvoiceRow): InvoiceView {
  return {
    invoice_id: row.id,
    external_id: row.external_id,
    status: row.status,
    network: row.network,
    network_mode: row.network_mode,
    asset: 'USDT',
    amount: usdtText(row.amount_micro),
    paid_amount: usdtText(row.paid_micro),
    address: row.address,
    payment_uri: paymentUri(row.address, row.amount_micro),
    lifetime_s: row.lifetime_s,
    callback_url: row.callback_url,
    expires_at: row.expires_at.toISOString(),
    paid_at: row.paid_at ? row.paid_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function depositView(row: DepositRow): DepositView {
  return {
    deposit_id: row.id,
    tx_id: row.tx_id,
    log_index: row.log_index,
    from_address: row.from_address,
    amount: usdtText(row.amount_micro),
    status: row.status,
    block_number: Number(row.block_number),
    seen_at: row.seen_at.toISOString(),
    final_at: row.final_at ? row.final_at.toISOString() : null,
    invoice_id: row.invoice_id,
    wallet_id: row.wallet_id,
  };
}

export interface WalletTotals {
  readonly receivedMicro: bigint;
  readonly heldMicro: bigint;
}

export function walletView(row: WalletRow, totals: WalletTotals, deposits?: readonly DepositRow[]): WalletView {
  return {
    wallet_id: row.id,
    client_id: row.client_id,
    network: row.network,
    network_mode: row.network_mode,
    asset: 'USDT',
    address: row.address,
    status: row.status,
    received_amount: usdtText(totals.receivedMicro),
    held_amount: usdtText(totals.heldMicro),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(deposits === undefined ? {} : { deposits: deposits.map(depositView) }),
  };
}
