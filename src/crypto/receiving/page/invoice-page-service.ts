// What the hosted invoice page shows, looked up by the invoice id alone (the
// page has no API key): the invoice as the API gives it, the shop's name and
// whether it is a sandbox shop, and the QR code of the payment URI.
import { findShopProfile } from '../../../merchants/merchant-service.ts';
import type { CryptoDeps } from '../../chain/chain-module.ts';
import { invoiceQrSvg, type InvoiceView } from '../invoice-service.ts';
import { findInvoiceById } from '../receiving-repository.ts';
import { invoiceView } from '../receiving-views.ts';
import type { InvoicePage } from './invoice-page-html.ts';

export async function loadInvoicePage(deps: CryptoDeps, invoiceId: string): Promise<InvoicePage | undefined> {
  const row = await findInvoiceById(deps.db, invoiceId);
  const shop = row && (await findShopProfile(deps.db, row.shop_id));
  if (!row || !shop) return undefined;
  return {
    invoice: invoiceView(row),
    shopName: shop.name,
    sandbox: shop.mode === 'sandbox',
    qrSvg: await invoiceQrSvg(deps, shop.shopId, invoiceId),
  };
}

/** The part of an invoice the page's script polls for: what the page shows, nothing more. */
export type InvoiceStatusView = Pick<InvoiceView, 'status' | 'amount' | 'paid_amount' | 'expires_at'>;

export async function loadInvoiceStatus(deps: CryptoDeps, invoiceId: string): Promise<InvoiceStatusView | undefined> {
  const row = await findInvoiceById(deps.db, invoiceId);
  if (!row) return undefined;
  const { status, amount, paid_amount, expires_at } = invoiceView(row);
  return { status, amount, paid_amount, expires_at };
}
