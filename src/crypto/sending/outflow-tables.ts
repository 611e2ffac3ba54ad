// Kysely types of the hourly outflow cap's table (migration 0029), owned by the sending module.
import type { ChainName } from './sending-tables.ts';

export interface OutflowTables {
  /** Each transfer taking USDT out of custody, at its latest signing. */
  crypto_outflow_signings: {
    transfer_id: string;
    chain: ChainName;
    amount: bigint;
    signed_at: Date;
  };
}
