// The cabinet's route table as the security tests walk it: every registered route
// with its access rule, made into a concrete path a request can be sent to. Tests
// built on it cover routes other areas add without being told of them.
import { randomUUID } from 'node:crypto';
import type { CabinetAccess } from '../../src/cabinet/cabinet-http.ts';
import { newId, type IdKind } from '../../src/ids.ts';
import type { TestApp } from '../support/app.ts';

export interface CabinetRoute {
  readonly method: string;
  readonly url: string;
  readonly access: CabinetAccess;
}

/** Param names (lower-cased, without `Id`) whose ids have a kind of their own. */
const ID_KINDS: Readonly<Record<string, IdKind>> = {
  session: 'cabinetSession',
  invite: 'teamInvite',
  user: 'user',
  member: 'user',
  key: 'apiKey',
  apikey: 'apiKey',
  merchant: 'merchant',
  event: 'event',
  delivery: 'delivery',
  invoice: 'invoice',
  wallet: 'wallet',
  withdrawal: 'withdrawal',
  refund: 'refund',
};

/** A syntactically plausible value for a path parameter that names nothing of the merchant. */
function plausibleParam(name: string): string {
  if (name === 'lang') return 'en';
  const base = name.replace(/Id$/, '').toLowerCase();
  if (base.includes('payment')) return randomUUID();
  const kind = ID_KINDS[base];
  return kind ? newId(kind) : `x_${newId('event').slice(4)}`;
}

/** The route's path with `:shopId` the given shop and every other parameter a plausible id. */
export function concretePath(route: CabinetRoute, shopId: string): string {
  return route.url
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment;
      const name = segment.slice(1);
      return encodeURIComponent(name === 'shopId' ? shopId : plausibleParam(name));
    })
    .join('/');
}

/** The cabinet's routes (assets excluded: files, not pages). */
export function cabinetRoutes(testApp: TestApp): CabinetRoute[] {
  return testApp.cabinet.routes.filter((route) => !route.url.startsWith('/cabinet/assets/'));
}

export function describeRoute(route: CabinetRoute): string {
  return `${route.method} ${route.url}`;
}
