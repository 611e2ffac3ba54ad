// A simulator of YooKassa's API v3 for tests and operators
// (`paygate acquirer simulate yookassa --port N`): the API under /v3/ with
// HTTP Basic, Idempotence-Key and YooKassa's error objects; the confirmation
// page (/checkout/payments/v2/contract?orderId=…) with approve, decline and a
// 3-D Secure step; a "bank app" page for SBP QR links; notifications to each
// shop's notification URL, repeated until answered 200; and fault knobs
// (POST /sim/faults or the returned `faults`). State lives in memory.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  closeSimulatorServer,
  listenOn,
  readBody,
  redirect,
  sendHtml,
  sendJson,
} from '../../acquirer-simulator-http.ts';
import {
  apiError,
  createSimulatorBook,
  type ApiAnswer,
  type SimulatedPayment,
  type SimulatedRefund,
  type SimulatedShop,
} from './yookassa-simulator-api.ts';
import { createNotifier, YOOKASSA_NOTIFICATION_RETRY_DELAYS_MS } from './yookassa-simulator-notifier.ts';
import { bankAppPage, confirmationPage, resultPage, threeDsPage } from './yookassa-simulator-pages.ts';

/** The shop a simulator knows unless told otherwise (test shops' secret keys start with `test_`). */
export const SIMULATOR_SHOP: SimulatedShop = { shopId: '100500', secretKey: 'test_simulator_secret_key' };
/** The passcode the simulated 3-D Secure step accepts. */
export const SIMULATOR_3DS_PASSCODE = '12345';

interface YooKassaSimulatorShop extends SimulatedShop {
  /** Where this shop's notifications go (YooKassa: set in the shop's settings). */
  readonly notificationUrl?: string | undefined;
}

export interface YooKassaSimulatorOptions {
  readonly port: number;
  readonly host?: string | undefined;
  /** Send notifications (default true). */
  readonly notify?: boolean | undefined;
  readonly shops?: readonly YooKassaSimulatorShop[] | undefined;
  /** Pauses before each repeated notification; a 24-hour schedule unless given. */
  readonly notificationRetryDelaysMs?: readonly number[] | undefined;
}

export interface ApiFault {
  /** The call it hits, e.g. `POST /payments` or `GET /payments`; every call when absent. */
  readonly route?: string | undefined;
  /**
   * `hang` never answers (the caller's timeout); `lose_answer` does the work and
   * never answers; `processing` answers 202 with `retry_after`; the others that HTTP status.
   */
  readonly kind: 'http500' | 'http429' | 'hang' | 'lose_answer' | 'processing';
  count: number;
}

interface SimulatorFaults {
  readonly api: ApiFault[];
  /** The API keeps showing the old status until the notification of the change has been tried once. */
  notifyBeforeState: boolean;
  readonly notifications: { lose: number; duplicate: boolean; reverse: boolean };
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function startYooKassaSimulator(options: YooKassaSimulatorOptions) {
  const shops: readonly YooKassaSimulatorShop[] = options.shops ?? [SIMULATOR_SHOP];
  const notificationUrls = new Map(shops.map((shop) => [shop.shopId, shop.notificationUrl ?? '']));
  const book = createSimulatorBook(shops);
  const notifier = createNotifier({
    enabled: options.notify ?? true,
    retryDelaysMs: options.notificationRetryDelaysMs ?? YOOKASSA_NOTIFICATION_RETRY_DELAYS_MS,
  });
  const faults: SimulatorFaults = { api: [], notifyBeforeState: false, notifications: notifier.faults };
  const hanging = new Set<ServerResponse>();
  let baseUrl = '';

  /** Moves a payment and notifies; with `notifyBeforeState`, the API catches up after the first try. */
  function settle(payment: SimulatedPayment, status: 'succeeded' | 'canceled', reason?: string): void {
    payment.status = status;
    payment.cancellationReason = reason;
    if (status === 'succeeded') payment.capturedAt = new Date();
    const show = () => {
      payment.visibleStatus = payment.status;
    };
    if (!faults.notifyBeforeState) show();
    const event = status === 'succeeded' ? 'payment.succeeded' : 'payment.canceled';
    const body = { type: 'notification', event, object: book.paymentJson(payment, baseUrl, status) };
    notifier.notify(notificationUrls.get(payment.shopId) ?? '', [body], show);
  }

  function notifyRefund(refund: SimulatedRefund, shopId: string): void {
    const body = { type: 'notification', event: 'refund.succeeded', object: book.refundJson(refund) };
    notifier.notify(notificationUrls.get(shopId) ?? '', [body]);
  }

  function takeApiFault(route: string): ApiFault | undefined {
    const fault = faults.api.find(
      (candidate) => candidate.count > 0 && (!candidate.route || candidate.route === route),
    );
    if (fault) fault.count -= 1;
    return fault;
  }

  /** The answer to one API call (after authentication), or undefined for an unknown route. */
  async function answer(
    shop: SimulatedShop,
    method: string,
    path: string,
    url: URL,
    request: IncomingMessage,
  ): Promise<ApiAnswer | undefined> {
    if (method === 'POST' && (path === '/payments' || path === '/refunds')) {
      const rawBody = await readBody(request);
      let params: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(rawBody);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
        params = parsed as Record<string, unknown>;
      } catch {
        return apiError(400, 'invalid_request', 'The request body is not a JSON object');
      }
      return book.idempotent(shop, header(request, 'idempotence-key'), path, rawBody, () => {
        if (path === '/payments') return book.createPayment(shop, params, baseUrl);
        const { answer: refundAnswer, created } = book.createRefund(shop, params);
        if (created) notifyRefund(created, shop.shopId);
        return refundAnswer;
      });
    }
    if (method !== 'GET') return undefined;
    if (path === '/payments') return book.listPayments(shop, url.searchParams, baseUrl);
    if (path === '/refunds') return book.listRefunds(shop, url.searchParams);
    if (path === '/me') return book.me(shop);
    const one = /^\/(payments|refunds)\/([A-Za-z0-9-]{1,64})$/.exec(path);
    if (one?.[1] === 'payments') return book.getPayment(shop, one[2]!, baseUrl);
    if (one?.[1] === 'refunds') return book.getRefund(shop, one[2]!);
    return undefined;
  }

  async function api(path: string, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const fault = takeApiFault(`${method} ${path.replace(/^(\/(?:payments|refunds))\/.+$/, '$1/{id}')}`);
    if (fault?.kind === 'hang') {
      hanging.add(response);
      return;
    }
    if (fault?.kind === 'http500' || fault?.kind === 'http429') {
      const [statusCode, code] = fault.kind === 'http429' ? [429, 'too_many_requests'] : [500, 'internal_server_error'];
      if (statusCode === 429) response.setHeader('retry-after', '0');
      sendJson(response, statusCode, apiError(statusCode, code, 'Simulated fault').body);
      return;
    }
    if (fault?.kind === 'processing') {
      sendJson(response, 202, {
        type: 'processing',
        description: 'Request accepted, but not processed yet. Retry again with the same Idempotence-Key',
        retry_after: 1,
      });
      return;
    }
    const shop = book.authenticate(header(request, 'authorization'));
    if ('statusCode' in shop) {
      sendJson(response, shop.statusCode, shop.body);
      return;
    }
    const result =
      (await answer(shop, method, path, url, request)) ??
      apiError(404, 'not_found', `No such method: ${method} ${path}`);
    if (fault?.kind === 'lose_answer') {
      hanging.add(response);
      return;
    }
    sendJson(response, result.statusCode, result.body);
  }

  async function form(request: IncomingMessage): Promise<URLSearchParams> {
    return new URLSearchParams(await readBody(request));
  }

  async function checkout(
    payment: SimulatedPayment,
    step: 'contract' | '3ds',
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const open = payment.status === 'pending';
    if (request.method !== 'POST' || !open) {
      if (!open) return sendHtml(response, resultPage(payment));
      return sendHtml(
        response,
        payment.challenged ? threeDsPage(payment, SIMULATOR_3DS_PASSCODE) : confirmationPage(payment),
      );
    }
    const fields = await form(request);
    if (step === '3ds') {
      if (fields.get('code') === SIMULATOR_3DS_PASSCODE) settle(payment, 'succeeded');
      else settle(payment, 'canceled', '3d_secure_failed');
    } else if (fields.get('action') === 'pay') {
      settle(payment, 'succeeded');
    } else if (fields.get('action') === '3ds') {
      payment.challenged = true;
      return sendHtml(response, threeDsPage(payment, SIMULATOR_3DS_PASSCODE));
    } else {
      settle(payment, 'canceled', fields.get('action') === 'decline_funds' ? 'insufficient_funds' : 'general_decline');
    }
    return redirect(response, payment.returnUrl);
  }

  async function bankApp(payment: SimulatedPayment, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const open = payment.status === 'pending';
    if (request.method === 'POST' && open) {
      const fields = await form(request);
      if (fields.get('action') === 'pay') settle(payment, 'succeeded');
      else settle(payment, 'canceled', 'general_decline');
    }
    return sendHtml(response, payment.status === 'pending' ? bankAppPage(payment) : resultPage(payment));
  }

  async function simulatorSettings(path: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const changes = JSON.parse(await readBody(request)) as Record<string, unknown>;
    if (path === '/sim/notification-url') {
      const shopId = String(changes['shop_id'] ?? '');
      if (!notificationUrls.has(shopId)) return sendJson(response, 404, { error: 'no such shop' });
      notificationUrls.set(shopId, String(changes['url'] ?? ''));
      return sendJson(response, 200, { shop_id: shopId, url: notificationUrls.get(shopId) });
    }
    const typed = changes as Partial<{
      api: ApiFault[];
      notifyBeforeState: boolean;
      notifications: Partial<SimulatorFaults['notifications']>;
    }>;
    if (typed.api) faults.api.push(...typed.api);
    if (typed.notifyBeforeState !== undefined) faults.notifyBeforeState = typed.notifyBeforeState;
    Object.assign(faults.notifications, typed.notifications ?? {});
    return sendJson(response, 200, faults);
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', baseUrl);
    const path = url.pathname;
    if (path.startsWith('/v3/')) return api(path.slice(3), url, request, response);
    const orderId = url.searchParams.get('orderId') ?? '';
    const checkoutPayment = book.payments.get(orderId);
    if (checkoutPayment && checkoutPayment.confirmationType === 'redirect') {
      if (path === '/checkout/payments/v2/contract') return checkout(checkoutPayment, 'contract', request, response);
      if (path === '/checkout/3ds' && checkoutPayment.challenged)
        return checkout(checkoutPayment, '3ds', request, response);
    }
    const sbp = /^\/sbp\/([A-Za-z0-9-]+)$/.exec(path);
    const sbpPayment = sbp ? book.payments.get(sbp[1]!) : undefined;
    if (sbpPayment && sbpPayment.confirmationType === 'qr') return bankApp(sbpPayment, request, response);
    if ((path === '/sim/faults' || path === '/sim/notification-url') && request.method === 'POST') {
      return simulatorSettings(path, request, response);
    }
    sendJson(response, 404, { error: 'not_found' });
  }

  const server = createServer((request, response) => {
    route(request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 400, apiError(400, 'invalid_request', 'Malformed request').body);
      else response.end();
    });
  });
  baseUrl = await listenOn(server, options.port, options.host);

  return {
    /** The API base URL to configure a connection with (`<url>/v3`). */
    url: `${baseUrl}/v3`,
    faults,
    /** Every notification sent, with its attempts: for tests and the operator's log. */
    deliveries: notifier.deliveries,
    payments: book.payments,
    refunds: book.refunds,
    /** Where a shop's notifications go (YooKassa: the shop's settings). */
    setNotificationUrl(shopId: string, url: string): void {
      notificationUrls.set(shopId, url);
    },
    async close(): Promise<void> {
      notifier.close();
      await closeSimulatorServer(server, hanging);
    },
  };
}

export type YooKassaSimulator = Awaited<ReturnType<typeof startYooKassaSimulator>>;
