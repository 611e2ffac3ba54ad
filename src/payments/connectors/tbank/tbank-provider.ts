// T-Bank as an acquirer provider: a shop's connection (terminal_key,
// password) becomes its connector `tbank:<connection id>`, and the
// credentials are checked on save with a GetState.
import {
  AcquirerCredentialsError,
  type AcquirerConnection,
  type AcquirerProvider,
  type ProviderDeps,
} from '../acquirer-provider.ts';
import { createTBankClient, TBANK_PRODUCTION_API_URL, TBankApiError, TBankUnavailableError } from './tbank-client.ts';
import { createTBankConnector, TBANK_NOTIFICATION_NETWORKS } from './tbank-connector.ts';

// ErrorCodes that mean "these credentials do not work" ("Коды ошибок"):
// 202 terminal blocked, 204/205 wrong token or terminal, 331 wrong terminal, 501 terminal not found.
const CREDENTIAL_ERROR_CODES: ReadonlySet<string> = new Set(['202', '204', '205', '331', '501']);
// A PaymentId no terminal has: T-Bank checks the Token before looking the payment up.
const PROBE_PAYMENT_ID = '1';

function credentialsOf(connection: AcquirerConnection): { terminalKey: string; password: string } {
  const terminalKey = connection.credentials['terminal_key'];
  const password = connection.credentials['password'];
  if (!terminalKey || !password) throw new AcquirerCredentialsError('T-Bank needs terminal_key and password');
  return { terminalKey, password };
}

export const tbankProvider: AcquirerProvider = {
  name: 'tbank',
  methods: ['card', 'sbp', 'sberpay'],
  defaultApiUrl: TBANK_PRODUCTION_API_URL,
  credentialNames: ['terminal_key', 'password'],
  connect(connection, deps) {
    const { terminalKey, password } = credentialsOf(connection);
    return createTBankConnector({
      name: `tbank:${connection.id}`,
      methods: connection.methods,
      client: createTBankClient({ apiUrl: connection.apiUrl, terminalKey, password }),
      password,
      notificationUrl: connection.notificationUrl,
      notificationSources: deps.notificationSources ?? TBANK_NOTIFICATION_NETWORKS,
      logger: deps.logger,
    });
  },
  async verifyCredentials(connection: AcquirerConnection, _deps: ProviderDeps) {
    const { terminalKey, password } = credentialsOf(connection);
    const client = createTBankClient({ apiUrl: connection.apiUrl, terminalKey, password });
    try {
      await client.post('GetState', { PaymentId: PROBE_PAYMENT_ID });
    } catch (error) {
      if (error instanceof TBankApiError && CREDENTIAL_ERROR_CODES.has(error.errorCode)) {
        throw new AcquirerCredentialsError(`T-Bank rejects terminal ${terminalKey}: ${error.message}`, {
          cause: error,
        });
      }
      if (error instanceof TBankUnavailableError) {
        throw new AcquirerCredentialsError(`T-Bank could not be reached at ${connection.apiUrl}`, { cause: error });
      }
      // Any other refusal (e.g. 255 payment not found) came after the Token was accepted.
      if (!(error instanceof TBankApiError)) throw error;
    }
  },
};
