// The rental provider of a chain, when `rent` is among the energy sources:
// the live chain's only, because a provider delegates on the public network,
// where the sandbox's addresses do not exist. The executor orders from it
// (sending-worker.ts) and the fee quote prices with it (payouts/energy-quotes.ts),
// so a quote names a rental only where signing could order one.
import type { Config } from '../../config.ts';
import type { ChainName } from '../chain/crypto-chain.ts';
import type { EnergyProvider } from './energy-provider.ts';
import { createItrxProvider } from './itrx/itrx-provider.ts';

export function rentalProviderFor(
  config: Pick<Config, 'tronEnergySources' | 'tronEnergyRental'>,
  chain: ChainName,
): EnergyProvider | undefined {
  const rental = chain === 'tron-live' ? config.tronEnergyRental : undefined;
  return rental && config.tronEnergySources.has('rent') ? createItrxProvider(rental) : undefined;
}
