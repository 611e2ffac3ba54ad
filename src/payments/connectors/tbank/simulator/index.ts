// A simulator of T-Bank's Internet Acquiring API v2 for tests and operators
// (`paygate acquirer simulate tbank --port N`): the API methods under /v2/,
// the hosted payment form (/new/<code>) with approve, decline and a
// 3-D Secure step, a "bank app" page for SBP and SberPay links, signed
// notifications retried until answered `OK`, and fault knobs (POST /sim/faults
// or the returned `faults`). State lives in memory.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  closeSimulatorServer,
  listenOn,
  readBody,
  redirect,
  sendHtml,
  sendJson,
} from '../../acquirer-simulator-http.ts';
import { createSimulatorBook, failure, type SimulatedSession, type SimulatedTerminal } from './tbank-simulator-api.ts';
import { createNotifier, TBANK_NOTIFICATION_RETRY_DELAYS_MS } from './tbank-simulator-notifier.ts';
import { bankAppPage, paymentFormPage, resultPage, threeDsPage } from './tbank-simulator-pages.ts';

/** The terminal a simulator knows unless told otherwise (the docs' test terminal name). */
export const SIMULATOR_TERMINAL: SimulatedTerminal = { terminalKey: 'TinkoffBankTest', password: 'simulator-password' };
/** The static 3-D Secure passcode of T-Bank's challenge-flow test card. */
export const SIMULATOR_3DS_PASSCODE = '1qwezxc';

export interface TBankSimulatorOptions {
  readonly port: number;
  readonly host?: string | undefined;
  /** Send notifications (default true). */
  readonly notify?: boolean | undefined;
  readonly terminals?: readonly SimulatedTerminal[] | undefined;
  /** Pauses before each repeated notification; T-Bank's hourly schedule unless given. */
  readonly notificationRetryDelaysMs?: readonly number[] | undefined;
}

export interface ApiFault {
  /** The API method it hits (`Init`, `GetState`, ...); every method when absent. */
  readonly method?: string | undefined;
  /**
   * `hang` never answers (the caller's timeout); `lose_answer` does the work, then
   * answers 500 as a connection lost after T-Bank acted would; the others answer with that HTTP status.
   */
  readonly kind: 'http500' | 'http429' | 'hang' | 'lose_answer';
  count: number;
}

interface SimulatorFaults {
  readonly api: ApiFault[];
  /** GetState keeps showing the old status until the notification of the change has been tried once. */
  notifyBeforeState: boolean;
  readonly notifications: { lose: number; duplicate: boolean; reverse: boolean };
}

export async function startTBankSimulator(options: TBankSimulatorOptions) {
  const terminals = options.terminals ?? [SIMULATOR_TERMINAL];
  const book = createSimulatorBook(terminals);
  const notifier = createNotifier({
    enabled: options.notify ?? true,
    retryDelaysMs: options.notificationRetryDelaysMs ?? TBANK_NOTIFICATION_RETRY_DELAYS_MS,
  });
  const faults: SimulatorFaults = { api: [], notifyBeforeState: false, notifications: notifier.faults };
  const hanging = new Set<ServerResponse>();
  let baseUrl = '';

  function passwordOf(session: SimulatedSession): string {
    return book.terminalOf(session.terminalKey)?.password ?? '';
  }

  function notificationOf(session: SimulatedSession, status: string): Record<string, unknown> {
    const card = session.rail === 'card';
    return {
      TerminalKey: session.terminalKey,
      OrderId: session.orderId,
      Success: status !== 'REJECTED',
      Status: status,
      PaymentId: Number(session.paymentId),
      ErrorCode: session.errorCode,
      Amount: status.includes('REFUND') ? session.refundedAmount : session.amount,
      ...(card ? { CardId: 322264, Pan: '430000******0777', ExpDate: '1230' } : {}),
    };
  }

  /** Moves a session and notifies; with `notifyBeforeState`, GetState catches up after the first try. */
  function settle(
    session: SimulatedSession,
    status: string,
    errorCode: string,
    notifiedStatuses: readonly string[],
  ): void {
    session.status = status;
    session.errorCode = errorCode;
    const show = () => {
      session.visibleStatus = session.status;
    };
    if (!faults.notifyBeforeState) show();
    const bodies = notifiedStatuses.map((notified) => notificationOf(session, notified));
    notifier.notify(session.notificationUrl, passwordOf(session), bodies, show);
  }

  function pay(session: SimulatedSession): void {
    settle(session, 'CONFIRMED', '0', ['AUTHORIZED', 'CONFIRMED']);
  }

  function decline(session: SimulatedSession, errorCode: string): void {
    settle(session, 'REJECTED', errorCode, ['REJECTED']);
  }

  function takeApiFault(method: string): ApiFault | undefined {
    const fault = faults.api.find(
      (candidate) => candidate.count > 0 && (!candidate.method || candidate.method === method),
    );
    if (fault) fault.count -= 1;
    return fault;
  }

  async function api(method: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const fault = takeApiFault(method);
    if (fault?.kind === 'hang') {
      hanging.add(response);
      return;
    }
    if (fault && fault.kind !== 'lose_answer') {
      const statusCode = fault.kind === 'http429' ? 429 : 500;
      response.writeHead(statusCode, {
        'content-type': 'text/plain',
        ...(statusCode === 429 ? { 'retry-after': '0' } : {}),
      });
      response.end(statusCode === 429 ? 'Too Many Requests' : 'Internal Server Error');
      return;
    }
    let params: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(await readBody(request));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      params = parsed as Record<string, unknown>;
    } catch {
      sendJson(response, 200, failure('1', 'Параметры не сопоставлены', 'the body is not a JSON object'));
      return;
    }
    const authenticated = book.authenticate(params);
    if ('refusal' in authenticated) {
      sendJson(response, 200, authenticated.refusal);
      return;
    }
    const { terminal } = authenticated;
    const answer = answerOf(method, terminal, params);
    if (fault?.kind === 'lose_answer') {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('Internal Server Error');
      return;
    }
    sendJson(response, answer.statusCode, answer.body);
  }

  function answerOf(
    method: string,
    terminal: SimulatedTerminal,
    params: Record<string, unknown>,
  ): { statusCode: number; body: Record<string, unknown> } {
    switch (method) {
      case 'Init':
        return { statusCode: 200, body: book.init(terminal, params, baseUrl) };
      case 'GetState':
        return { statusCode: 200, body: book.getState(terminal, params) };
      case 'CheckOrder':
        return { statusCode: 200, body: book.checkOrder(terminal, params) };
      case 'GetQr':
        return { statusCode: 200, body: book.getQr(terminal, params, baseUrl) };
      case 'Cancel': {
        const { answer, changed } = book.cancel(terminal, params);
        // "Уведомления об операциях": Cancel notifies PARTIAL_REFUNDED / REFUNDED like any operation.
        if (changed && changed.status !== 'CANCELED') {
          notifier.notify(changed.notificationUrl, terminal.password, [notificationOf(changed, changed.status)]);
        }
        return { statusCode: 200, body: answer };
      }
      default:
        return { statusCode: 404, body: failure('1', 'Параметры не сопоставлены', `no method ${method}`) };
    }
  }

  async function form(request: IncomingMessage): Promise<URLSearchParams> {
    return new URLSearchParams(await readBody(request));
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', baseUrl);
    const path = url.pathname;
    const apiMatch = /^\/v2\/([A-Za-z0-9]+)$/.exec(path);
    if (apiMatch?.[1] && request.method === 'POST') return api(apiMatch[1], request, response);
    const sberLink = /^\/v2\/SberPay\/transactions\/([0-9]+)\/link$/.exec(path);
    if (sberLink && request.method === 'GET') return sendJson(response, 200, book.sberPayLink(sberLink[1]!, baseUrl));

    const formMatch = /^\/new\/([A-Za-z0-9]+)(\/3ds)?$/.exec(path);
    const formSession = formMatch ? book.byFormCode(formMatch[1]!) : undefined;
    if (formMatch && formSession) {
      const open =
        formSession.status === 'NEW' || formSession.status === 'FORM_SHOWED' || formSession.status === '3DS_CHECKING';
      if (request.method === 'GET') {
        if (formSession.status === 'NEW') formSession.status = formSession.visibleStatus = 'FORM_SHOWED';
        if (!open) return sendHtml(response, resultPage(formSession));
        const challenged = formSession.status === '3DS_CHECKING';
        return sendHtml(response, challenged ? threeDsPage(formSession) : paymentFormPage(formSession));
      }
      if (!open) return sendHtml(response, resultPage(formSession));
      const fields = await form(request);
      if (formMatch[2]) {
        if (fields.get('code') === SIMULATOR_3DS_PASSCODE) pay(formSession);
        else decline(formSession, '101');
      } else if (fields.get('action') === 'pay') {
        pay(formSession);
      } else if (fields.get('action') === '3ds') {
        formSession.status = formSession.visibleStatus = '3DS_CHECKING';
        return sendHtml(response, threeDsPage(formSession));
      } else {
        decline(formSession, fields.get('action') === 'decline_funds' ? '1051' : '1005');
      }
      return redirect(response, formSession.status === 'CONFIRMED' ? formSession.successUrl : formSession.failUrl);
    }

    const appMatch = /^\/(sbp|sberpay)\/([0-9]+)$/.exec(path);
    const appSession = appMatch ? book.sessions.get(appMatch[2]!) : undefined;
    if (appMatch && appSession) {
      const open = appSession.status === 'NEW' || appSession.status === 'FORM_SHOWED';
      if (request.method === 'GET') return sendHtml(response, open ? bankAppPage(appSession) : resultPage(appSession));
      if (open) {
        const fields = await form(request);
        if (fields.get('action') === 'pay') pay(appSession);
        else decline(appSession, '1005');
      }
      return sendHtml(response, resultPage(appSession));
    }

    if (path === '/sim/faults' && request.method === 'POST') {
      const changes = JSON.parse(await readBody(request)) as Partial<{
        api: ApiFault[];
        notifyBeforeState: boolean;
        notifications: Partial<SimulatorFaults['notifications']>;
      }>;
      if (changes.api) faults.api.push(...changes.api);
      if (changes.notifyBeforeState !== undefined) faults.notifyBeforeState = changes.notifyBeforeState;
      Object.assign(faults.notifications, changes.notifications ?? {});
      return sendJson(response, 200, faults);
    }
    sendJson(response, 404, { error: 'not_found' });
  }

  const server = createServer((request, response) => {
    route(request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 400, failure('1', 'Параметры не сопоставлены'));
      else response.end();
    });
  });
  baseUrl = await listenOn(server, options.port, options.host);

  return {
    /** The API base URL to configure a connection with (`<url>/v2`). */
    url: `${baseUrl}/v2`,
    faults,
    /** Every notification sent, with its attempts: for tests and the operator's log. */
    deliveries: notifier.deliveries,
    sessions: book.sessions as ReadonlyMap<string, SimulatedSession>,
    async close(): Promise<void> {
      notifier.close();
      await closeSimulatorServer(server, hanging);
    },
  };
}

export type TBankSimulator = Awaited<ReturnType<typeof startTBankSimulator>>;
