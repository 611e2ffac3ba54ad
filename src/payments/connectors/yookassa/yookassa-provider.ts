// YooKassa as an acquirer provider: a shop's connection (shop_id, secret_key)
// becomes its connector `yookassa:<connection id>`, and the credentials are
// checked on save with `GET /v3/me` (the shop's own settings).
import {
  AcquirerCredentialsError,
  type AcquirerConnection,
  type AcquirerProvider,
  type ProviderDeps,
} from '../acquirer-provider.ts';
import {
  createYooKassaClient,
  YOOKASSA_PRODUCTION_API_URL,
  YooKassaApiError,
  YooKassaUnavailableError,
} from './yookassa-client.ts';
import { createYooKassaConnector, YOOKASSA_NOTIFICATION_NETWORKS } from './yookassa-connector.ts';

function credentialsOf(connection: AcquirerConnection): { shopId: string; secretKey: string } {
  const shopId = connection.credentials['shop_id'];
  const secretKey = connection.credentials['secret_key'];
  if (!shopId || !secretKey) throw new AcquirerCredentialsError('YooKassa needs shop_id and secret_key');
  return { shopId, secretKey };
}

export const yookassaProvider: AcquirerProvider = {
  name: 'yookassa',
  methods: ['card', 'sbp', 'sberpay'],
  defaultApiUrl: YOOKASSA_PRODUCTION_API_URL,
  credentialNames: ['shop_id', 'secret_key'],
  connect(connection, deps) {
    const { shopId, secretKey } = credentialsOf(connection);
    return createYooKassaConnector({
      name: `yookassa:${connection.id}`,
      methods: connection.methods,
      client: createYooKassaClient({ apiUrl: connection.apiUrl, shopId, secretKey }),
      notificationSources: deps.notificationSources ?? YOOKASSA_NOTIFICATION_NETWORKS,
      logger: deps.logger,
    });
  },
  async verifyCredentials(connection: AcquirerConnection, _deps: ProviderDeps) {
    const { shopId, secretKey } = credentialsOf(connection);
    const client = createYooKassaClient({ apiUrl: connection.apiUrl, shopId, secretKey });
    try {
      const me = await client.get('/me');
      if (me['account_id'] !== undefined && String(me['account_id']) !== shopId) {
        throw new AcquirerCredentialsError(`YooKassa answers for shop ${String(me['account_id'])}, not ${shopId}`);
      }
    } catch (error) {
      if (error instanceof YooKassaApiError) {
        throw new AcquirerCredentialsError(`YooKassa rejects shop ${shopId}: ${error.message}`, { cause: error });
      }
      if (error instanceof YooKassaUnavailableError) {
        throw new AcquirerCredentialsError(`YooKassa could not be reached at ${connection.apiUrl}`, { cause: error });
      }
      throw error;
    }
  },
};
