// Kysely types of the table the keys module owns (migration 0029): each book's
// HD signing key, sealed by envelope encryption, with its account xpub in clear.
export type KeyBook = 'sandbox' | 'live';

export interface SigningKeyTables {
  crypto_signing_keys: {
    book: KeyBook;
    xpub: string;
    sealed_key: string;
    created_at: Date;
  };
}
