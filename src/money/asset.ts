// The assets Paygate moves and how many decimal places each has: integer minor
// units inside (kopecks, micro-USDT as bigint), decimals only at the edge.
export type Asset = 'RUB' | 'USDT';

export const ASSETS: readonly Asset[] = ['RUB', 'USDT'];

export const ASSET_SCALE: Readonly<Record<Asset, number>> = { RUB: 2, USDT: 6 };

export function unitsToMinor(units: bigint, asset: Asset): bigint {
  return units * 10n ** BigInt(ASSET_SCALE[asset]);
}
