// A production acquirer as a provider: each live shop stores its own connection
// (credentials sealed by src/kms, the methods it routes there), and the provider
// builds that shop's connector from it. One folder per provider under
// connectors/<name>/ exports one `AcquirerProvider`.
import type { Clock } from '../../clock.ts';
import type { AppContext } from '../../context.ts';
import type { PaymentMethod } from '../payment-tables.ts';
import type { AcquirerConnector } from './acquirer-connector.ts';

/** One shop's connection to a provider, with its credentials unsealed (never logged). */
export interface AcquirerConnection {
  /** The connection's id; the connector is named `<provider>:<id>` on the attempts it charges. */
  readonly id: string;
  readonly shopId: string;
  readonly provider: string;
  /** The provider's API base URL (its production URL unless configured, e.g. a simulator). */
  readonly apiUrl: string;
  /** Provider-specific secrets, e.g. `shop_id` and `secret_key` for YooKassa. */
  readonly credentials: Readonly<Record<string, string>>;
  /** The methods this shop sends to this provider. */
  readonly methods: readonly PaymentMethod[];
  /** Where the provider notifies us of this connection's charges (our public URL). */
  readonly notificationUrl: string;
}

interface ProviderDeps {
  readonly clock: Clock;
  readonly logger: AppContext['logger'];
  /** Addresses notifications are accepted from, in CIDR form; the provider's published list unless configured. */
  readonly notificationSources?: readonly string[] | undefined;
}

/** A provider's answer that the credentials do not work: `message` is shown to the operator. */
export class AcquirerCredentialsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AcquirerCredentialsError';
  }
}

export interface AcquirerProvider {
  /** `yookassa`, `tbank`. */
  readonly name: string;
  readonly methods: readonly PaymentMethod[];
  readonly defaultApiUrl: string;
  /** The credential names the configuration asks for, in order. */
  readonly credentialNames: readonly string[];
  connect(connection: AcquirerConnection, deps: ProviderDeps): AcquirerConnector;
  /** Asks the provider whether the credentials work; throws `AcquirerCredentialsError` when not. */
  verifyCredentials(connection: AcquirerConnection, deps: ProviderDeps): Promise<void>;
}
