// Kysely types of the table the cold-storage module owns (migration 0029): the
// moves of the hot wallet's surplus to the operator's cold address.
import type { ChainAccess } from '../chain/crypto-chain.ts';

type ChainName = ChainAccess['chain'];

/** sending: its outgoing transfer is queued or on its way; completed / failed: final. */
export type ColdMoveStatus = 'sending' | 'completed' | 'failed';

export interface ColdStorageTables {
  crypto_cold_moves: {
    id: string;
    chain: ChainName;
    to_address: string;
    amount_micro: bigint;
    hot_wallet_micro: bigint;
    ceiling_micro: bigint;
    status: ColdMoveStatus;
    transfer_id: string;
    tx_hash: string | null;
    fee_sun: bigint | null;
    error_code: string | null;
    error_message: string | null;
    created_at: Date;
    updated_at: Date;
    final_at: Date | null;
  };
}
