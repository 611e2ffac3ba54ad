// The scopes an API key may carry. Each /v1 route names those that let a key call
// it (authentication.ts); the merchants module stores a key's scopes.
export type ApiKeyScope = 'payments' | 'crypto' | 'payouts' | 'webhooks' | 'read';
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['payments', 'crypto', 'payouts', 'webhooks', 'read'];
