// A test acquirer reached over real loopback HTTP, and the provider that connects
// live shops to it. Its API, like a real acquirer's: POST /charges answers with its
// own id and a page to send the payer to (or, for SBP, a QR); GET /charges/{id} tells the state; it
// notifies with a shared secret header, and the connector confirms every
// notification by asking GET /charges/{id} (nothing in the notification is trusted).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  AcquirerConnector,
  ChargeOutcome,
  NotificationResult,
} from '../../src/payments/connectors/acquirer-connector.ts';
import {
  AcquirerCredentialsError,
  type AcquirerConnection,
  type AcquirerProvider,
} from '../../src/payments/connectors/acquirer-provider.ts';

type ChargeState = 'pending' | 'succeeded' | 'declined';

interface LoopbackCharge {
  readonly id: string;
  readonly chargeKey: string;
  readonly amountKopecks: bigint;
  readonly returnUrl: string;
  state: ChargeState;
}

export interface LoopbackAcquirer {
  readonly url: string;
  /** The API key it accepts. */
  readonly apiKey: string;
  readonly charges: ReadonlyMap<string, LoopbackCharge>;
  /** Every API request it has answered ("GET /charges/ch_1"), to count the gateway's calls. */
  readonly requests: readonly string[];
  /** The payer finished at the acquirer's page. */
  settle(chargeId: string, state: 'succeeded' | 'declined'): void;
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}

export async function startLoopbackAcquirer(): Promise<LoopbackAcquirer> {
  const apiKey = 'loopback-key';
  const charges = new Map<string, LoopbackCharge>();
  let next = 0;
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    void (async () => {
      const send = (status: number, body: unknown) =>
        response
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify(body, (_key, value) => (typeof value === 'bigint' ? String(value) : value)));
      if (request.headers.authorization !== `Bearer ${apiKey}`) return send(401, { error: 'unauthorized' });
      const url = new URL(request.url ?? '/', 'http://loopback');
      if (request.method === 'GET' && url.pathname === '/me') return send(200, { ok: true });
      if (request.method === 'POST' && url.pathname === '/charges') {
        const body = JSON.parse(await bodyOf(request)) as { key: string; amount: string; return_url: string };
        const existing = [...charges.values()].find((charge) => charge.chargeKey === body.key);
        const charge = existing ?? {
          id: `ch_${(next += 1)}`,
          chargeKey: body.key,
          amountKopecks: BigInt(body.amount),
          returnUrl: body.return_url,
          state: 'pending' as const,
        };
        charges.set(charge.id, charge);
        return send(200, { ...charge, page: `${acquirer.url}/page/${charge.id}` });
      }
      if (request.method === 'GET' && url.pathname === '/charges') return send(200, [...charges.values()]);
      const found = /^\/charges\/([a-z0-9_]+)$/.exec(url.pathname);
      const charge = found ? charges.get(found[1]!) : undefined;
      if (request.method === 'GET' && charge) return send(200, charge);
      return send(404, { error: 'not_found' });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const acquirer: LoopbackAcquirer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey,
    charges,
    requests,
    settle(chargeId, state) {
      const charge = charges.get(chargeId);
      if (!charge) throw new Error(`no charge ${chargeId}`);
      charge.state = state;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return acquirer;
}

/** The provider live shops connect to the loopback acquirer with; credentials `api_key` and `notify_secret`. */
export const loopbackProvider: AcquirerProvider = {
  name: 'loopback',
  methods: ['card', 'sbp'],
  defaultApiUrl: 'http://127.0.0.1:9',
  credentialNames: ['api_key', 'notify_secret'],
  connect: (connection) => loopbackConnector(connection),
  async verifyCredentials(connection) {
    const response = await fetch(`${connection.apiUrl}/me`, {
      headers: { authorization: `Bearer ${connection.credentials['api_key']}` },
    });
    if (response.status === 401) throw new AcquirerCredentialsError('the acquirer does not know this api_key');
    if (!response.ok) throw new Error(`loopback acquirer answered ${response.status}`);
  },
};

function loopbackConnector(connection: AcquirerConnection): AcquirerConnector {
  const headers = {
    authorization: `Bearer ${connection.credentials['api_key']}`,
    'content-type': 'application/json',
  };
  async function fetchCharge(id: string): Promise<{ id: string; chargeKey: string; state: ChargeState } | undefined> {
    const response = await fetch(`${connection.apiUrl}/charges/${encodeURIComponent(id)}`, { headers });
    if (response.status === 404) return undefined;
    return (await response.json()) as { id: string; chargeKey: string; state: ChargeState };
  }
  function outcomeOf(charge: { id: string; chargeKey: string; state: ChargeState }): ChargeOutcome {
    if (charge.state === 'succeeded')
      return { status: 'succeeded', chargeKey: charge.chargeKey, providerReference: charge.id };
    if (charge.state === 'declined')
      return {
        status: 'declined',
        chargeKey: charge.chargeKey,
        declineCode: 'declined_by_acquirer',
        final: false,
        providerReference: charge.id,
      };
    return { status: 'processing', chargeKey: charge.chargeKey, providerReference: charge.id };
  }
  const reply = { statusCode: 200, contentType: 'text/plain', body: 'OK' };
  return {
    name: `loopback:${connection.id}`,
    methods: connection.methods,
    async charge(request) {
      const response = await fetch(`${connection.apiUrl}/charges`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          key: request.chargeKey,
          amount: String(request.amountKopecks),
          return_url: request.returnUrl,
        }),
      });
      const charge = (await response.json()) as { id: string; page: string };
      return {
        status: 'requires_action',
        chargeKey: request.chargeKey,
        // SBP: a QR for the payer's bank app, and the link that opens it on a phone.
        action:
          request.method === 'sbp'
            ? { kind: 'qr', payload: `https://qr.loopback.test/${charge.id}`, deepLink: `bank://pay/${charge.id}` }
            : { kind: 'redirect', url: charge.page },
        providerReference: charge.id,
      };
    },
    confirm: async (chargeKey) => ({ status: 'processing', chargeKey }),
    async lookup(reference) {
      if (!reference.providerReference) return undefined;
      const charge = await fetchCharge(reference.providerReference);
      if (!charge) return undefined;
      // Still at the acquirer's page: the payer has not finished.
      if (charge.state === 'pending')
        return {
          status: 'requires_action',
          chargeKey: charge.chargeKey,
          action: { kind: 'redirect', url: `${connection.apiUrl}/page/${charge.id}` },
          providerReference: charge.id,
        };
      return outcomeOf(charge);
    },
    refund: async (request) => ({ status: 'refused', refundKey: request.refundKey, reason: 'not in this test' }),
    lookupRefund: async () => undefined,
    async *listCharges() {
      const response = await fetch(`${connection.apiUrl}/charges`, { headers });
      const listed = (await response.json()) as {
        id: string;
        chargeKey: string;
        state: ChargeState;
        amountKopecks: string;
      }[];
      for (const charge of listed)
        yield {
          providerReference: charge.id,
          chargeKey: charge.chargeKey,
          status: charge.state,
          amountKopecks: BigInt(charge.amountKopecks),
        };
    },
    async handleNotification(notification): Promise<NotificationResult> {
      if (notification.headers['x-loopback-secret'] !== connection.credentials['notify_secret'])
        return { reply: { ...reply, statusCode: 401 }, kind: 'ignored', reason: 'bad secret' };
      const claimed = JSON.parse(notification.rawBody) as { charge_id?: unknown };
      if (typeof claimed.charge_id !== 'string') return { reply, kind: 'ignored', reason: 'no charge id' };
      const charge = await fetchCharge(claimed.charge_id);
      if (!charge || charge.state === 'pending') return { reply, kind: 'ignored', reason: 'nothing final' };
      return { reply, kind: 'charge', reference: { providerReference: charge.id }, outcome: outcomeOf(charge) };
    },
  };
}
