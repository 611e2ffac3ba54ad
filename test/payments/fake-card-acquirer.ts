// A fake production acquirer for live-shop tests: the true edge (the bank),
// behind the production AcquirerConnector interface. It charges cards only and
// keeps its own book of charges, one per charge key, like a bank does.
import type { AcquirerConnector, ChargeOutcome } from '../../src/payments/connectors/acquirer-connector.ts';
import { AcquirerCredentialsError, type AcquirerProvider } from '../../src/payments/connectors/acquirer-provider.ts';

export interface FakeCardAcquirer extends AcquirerConnector {
  /** The charges the bank received, by charge key. */
  readonly charges: ReadonlyMap<string, { paymentId: string; amountKopecks: bigint }>;
}

export function createFakeCardAcquirer(): FakeCardAcquirer {
  const charges = new Map<string, { paymentId: string; amountKopecks: bigint }>();
  const succeeded = (chargeKey: string): ChargeOutcome => ({ status: 'succeeded', chargeKey });
  return {
    name: 'fake_card_bank',
    methods: ['card'],
    charges,
    async charge(request) {
      if (request.method !== 'card') throw new Error(`fake_card_bank cannot charge ${request.method}`);
      if (!charges.has(request.chargeKey))
        charges.set(request.chargeKey, { paymentId: request.paymentId, amountKopecks: request.amountKopecks });
      return succeeded(request.chargeKey);
    },
    async confirm(chargeKey) {
      return succeeded(chargeKey);
    },
    async lookup({ chargeKey }) {
      return charges.has(chargeKey) ? succeeded(chargeKey) : undefined;
    },
    async refund(request) {
      return charges.has(request.chargeKey)
        ? { status: 'succeeded', refundKey: request.refundKey }
        : { status: 'refused', refundKey: request.refundKey, reason: 'no such charge' };
    },
    async lookupRefund(request) {
      return charges.has(request.chargeKey) ? { status: 'succeeded', refundKey: request.refundKey } : undefined;
    },
  };
}

/** The fake bank as a provider live shops connect to; it accepts the credential `key=good` only. */
export function fakeCardProvider(acquirer: FakeCardAcquirer): AcquirerProvider {
  return {
    name: 'fake_card_bank',
    methods: ['card'],
    defaultApiUrl: 'https://fake-card-bank.invalid',
    credentialNames: ['key'],
    connect: (connection) => ({ ...acquirer, name: `fake_card_bank:${connection.id}` }),
    async verifyCredentials(connection) {
      if (connection.credentials['key'] !== 'good') throw new AcquirerCredentialsError('the key is not known');
    },
  };
}
