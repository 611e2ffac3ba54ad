// The simulator's book and its API methods (Init, GetState, Cancel, GetQr,
// CheckOrder, the SberPay link), answering with the JSON shapes and
// ErrorCodes of https://www.tbank.ru/kassa/dev/payments/ . Where the docs are
// silent (a repeated OrderId), it does what CheckOrder implies: several
// sessions of one order, each with its own PaymentId.
import { hasValidTbankToken } from '../tbank-token.ts';

export interface SimulatedTerminal {
  readonly terminalKey: string;
  readonly password: string;
}

export interface SimulatedSession {
  readonly paymentId: string;
  readonly terminalKey: string;
  readonly orderId: string;
  readonly amount: number;
  readonly description: string;
  readonly successUrl: string;
  readonly failUrl: string;
  readonly notificationUrl: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly formCode: string;
  /** How the payer pays: the form's card until a QR or SberPay link is asked for. */
  rail: 'card' | 'sbp' | 'sberpay';
  /** What the session is; `visibleStatus` is what GetState shows (a fault may hold it back). */
  status: string;
  visibleStatus: string;
  errorCode: string;
  refundedAmount: number;
  readonly cancels: Map<string, Record<string, unknown>>;
}

export type ApiAnswer = Record<string, unknown>;

export function failure(errorCode: string, message: string, details = ''): ApiAnswer {
  return { Success: false, ErrorCode: errorCode, Message: message, Details: details };
}

export function createSimulatorBook(terminals: readonly SimulatedTerminal[]) {
  const sessions = new Map<string, SimulatedSession>();
  let nextPaymentId = 3_093_639_567;

  function terminalOf(terminalKey: unknown): SimulatedTerminal | undefined {
    return terminals.find((terminal) => terminal.terminalKey === terminalKey);
  }

  /** The Token check every signed method starts with: 205 unknown terminal, 204 wrong token. */
  function authenticate(
    params: Record<string, unknown>,
  ): { readonly terminal: SimulatedTerminal } | { readonly refusal: ApiAnswer } {
    if (typeof params['TerminalKey'] !== 'string' || typeof params['Token'] !== 'string') {
      return { refusal: failure('2', 'Отсутствуют обязательные параметры', 'TerminalKey and Token are required') };
    }
    const terminal = terminalOf(params['TerminalKey']);
    if (!terminal) {
      return {
        refusal: failure(
          '205',
          'Неверный токен. Проверьте пару TerminalKey/SecretKey.',
          'Указанный терминал не найден',
        ),
      };
    }
    if (!hasValidTbankToken(params, terminal.password)) {
      return { refusal: failure('204', 'Неверный токен. Проверьте пару TerminalKey/SecretKey.') };
    }
    return { terminal };
  }

  function sessionFor(terminal: SimulatedTerminal, paymentId: unknown): SimulatedSession | undefined {
    const session = sessions.get(String(paymentId));
    return session && session.terminalKey === terminal.terminalKey ? session : undefined;
  }

  function init(terminal: SimulatedTerminal, params: Record<string, unknown>, formBaseUrl: string): ApiAnswer {
    const amount = params['Amount'];
    const orderId = params['OrderId'];
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || typeof orderId !== 'string' || orderId === '') {
      return failure('2', 'Отсутствуют обязательные параметры', 'Amount and OrderId are required');
    }
    if (orderId.length > 36) return failure('212', 'Размер поля OrderId должен быть от 1 до 36');
    if (amount < 100) return failure('251', 'Неверная сумма. Сумма должна быть больше или равна 100 копеек');
    const description = typeof params['Description'] === 'string' ? params['Description'] : '';
    if (description.length > 140) return failure('213', 'Размер поля Description должен быть от 0 до 140');
    const paymentId = String(nextPaymentId++);
    const formCode = `f${paymentId}`;
    const data =
      typeof params['DATA'] === 'object' && params['DATA'] !== null ? (params['DATA'] as Record<string, unknown>) : {};
    sessions.set(paymentId, {
      paymentId,
      terminalKey: terminal.terminalKey,
      orderId,
      amount,
      description,
      successUrl: typeof params['SuccessURL'] === 'string' ? params['SuccessURL'] : '',
      failUrl: typeof params['FailURL'] === 'string' ? params['FailURL'] : '',
      notificationUrl: typeof params['NotificationURL'] === 'string' ? params['NotificationURL'] : '',
      data,
      formCode,
      rail: 'card',
      status: 'NEW',
      visibleStatus: 'NEW',
      errorCode: '0',
      refundedAmount: 0,
      cancels: new Map(),
    });
    return {
      Success: true,
      ErrorCode: '0',
      TerminalKey: terminal.terminalKey,
      Status: 'NEW',
      PaymentId: paymentId,
      OrderId: orderId,
      Amount: amount,
      PaymentURL: `${formBaseUrl}/new/${formCode}`,
    };
  }

  function getState(terminal: SimulatedTerminal, params: Record<string, unknown>): ApiAnswer {
    const session = sessionFor(terminal, params['PaymentId']);
    if (!session) return failure('255', 'Платеж не найден');
    return {
      Success: true,
      ErrorCode: '0',
      Message: 'OK',
      TerminalKey: terminal.terminalKey,
      Status: session.visibleStatus,
      PaymentId: session.paymentId,
      OrderId: session.orderId,
      Amount: session.amount - session.refundedAmount,
      Params: [{ Key: 'Route', Value: 'ACQ' }],
    };
  }

  function checkOrder(terminal: SimulatedTerminal, params: Record<string, unknown>): ApiAnswer {
    const orderId = String(params['OrderId'] ?? '');
    const payments = [...sessions.values()].filter(
      (session) => session.terminalKey === terminal.terminalKey && session.orderId === orderId,
    );
    if (payments.length === 0) {
      return failure('335', `OrderId ${orderId} не найден для TerminalKey ${terminal.terminalKey}`);
    }
    return {
      Success: true,
      ErrorCode: '0',
      Message: 'OK',
      Details: 'None',
      TerminalKey: terminal.terminalKey,
      OrderId: orderId,
      Payments: payments.map((session) => ({
        PaymentId: session.paymentId,
        Amount: session.amount,
        Status: session.visibleStatus,
        Success: 'true',
        // A number here, a string everywhere else: as in the CheckOrder schema.
        ErrorCode: Number(session.errorCode),
        Message: 'None',
      })),
    };
  }

  function getQr(terminal: SimulatedTerminal, params: Record<string, unknown>, payBaseUrl: string): ApiAnswer {
    const session = sessionFor(terminal, params['PaymentId']);
    if (!session) return failure('255', 'Платеж не найден');
    if (session.status !== 'NEW' && session.status !== 'FORM_SHOWED') return failure('8', 'Неверный статус транзакции');
    if (params['DataType'] !== undefined && params['DataType'] !== 'PAYLOAD' && params['DataType'] !== 'IMAGE') {
      return failure('1', 'Параметры не сопоставлены', 'DataType');
    }
    session.rail = 'sbp';
    return {
      Success: true,
      ErrorCode: '0',
      TerminalKey: terminal.terminalKey,
      OrderId: session.orderId,
      PaymentId: Number(session.paymentId),
      Message: 'OK',
      Details: 'None',
      // A link to the simulator's "bank app" in the shape of an NSPK link.
      Data: `${payBaseUrl}/sbp/${session.paymentId}?type=02&sum=${session.amount}&cur=RUB`,
    };
  }

  /** Cancel: NEW → CANCELED; CONFIRMED → PARTIAL_REFUNDED / REFUNDED; ExternalRequestId answers a repeat. */
  function cancel(
    terminal: SimulatedTerminal,
    params: Record<string, unknown>,
  ): { answer: ApiAnswer; changed?: SimulatedSession } {
    const session = sessionFor(terminal, params['PaymentId']);
    if (!session) return { answer: failure('255', 'Платеж не найден') };
    const externalId = typeof params['ExternalRequestId'] === 'string' ? params['ExternalRequestId'] : '';
    const earlier = externalId ? session.cancels.get(externalId) : undefined;
    if (earlier) return { answer: { ...earlier, Status: session.visibleStatus } };
    const originalAmount = session.amount - session.refundedAmount;
    let status: string;
    if (session.status === 'NEW' || session.status === 'FORM_SHOWED') {
      status = 'CANCELED';
      session.refundedAmount = session.amount;
    } else if (session.status === 'CONFIRMED' || session.status === 'PARTIAL_REFUNDED') {
      const requested = params['Amount'] === undefined ? originalAmount : params['Amount'];
      if (typeof requested !== 'number' || !Number.isSafeInteger(requested) || requested <= 0) {
        return { answer: failure('1', 'Параметры не сопоставлены', 'Amount') };
      }
      if (requested > originalAmount)
        return { answer: failure('330', 'Сумма в запросе больше чем в оригинальной транзакции') };
      session.refundedAmount += requested;
      status = session.refundedAmount === session.amount ? 'REFUNDED' : 'PARTIAL_REFUNDED';
    } else {
      return { answer: failure('8', 'Неверный статус транзакции') };
    }
    session.status = status;
    session.visibleStatus = status;
    const answer: ApiAnswer = {
      Success: true,
      ErrorCode: '0',
      Message: 'OK',
      Details: 'None',
      TerminalKey: terminal.terminalKey,
      OrderId: session.orderId,
      Status: status,
      OriginalAmount: originalAmount,
      NewAmount: session.amount - session.refundedAmount,
      PaymentId: session.paymentId,
      ...(externalId ? { ExternalRequestId: externalId } : {}),
    };
    if (externalId) session.cancels.set(externalId, answer);
    return { answer, changed: session };
  }

  function sberPayLink(paymentId: string, payBaseUrl: string): ApiAnswer {
    const session = sessions.get(paymentId);
    if (!session) return failure('255', 'Платеж не найден');
    session.rail = 'sberpay';
    return {
      Success: true,
      ErrorCode: '0',
      Message: 'OK',
      Details: 'None',
      Params: { RedirectUrl: `${payBaseUrl}/sberpay/${session.paymentId}` },
    };
  }

  return {
    sessions,
    terminalOf,
    authenticate,
    init,
    getState,
    checkOrder,
    getQr,
    cancel,
    sberPayLink,
    byFormCode(code: string): SimulatedSession | undefined {
      return [...sessions.values()].find((session) => session.formCode === code);
    },
  };
}
