// The ledger's refusals as a client reads them. The ledger's own words (transfer
// keys such as "payout:po_…:reserve", account ids, books) name our internals:
// they travel as the error's cause, logged with the refusal and never sent.
import {
  DuplicateExternalIdError,
  InsufficientFundsError,
  InvalidRequestError,
  InvalidStateError,
  NotFoundError,
} from '../errors.ts';

export function insufficientFunds(accountId: string): InsufficientFundsError {
  return new InsufficientFundsError(undefined, {
    cause: `ledger account ${accountId}: the available balance is below the amount`,
  });
}

export function noSuchReservation(key: string): NotFoundError {
  return new NotFoundError('No such reservation.', { cause: `no reservation with id "${key}"` });
}

export function noSuchAccount(accountId: string): NotFoundError {
  return new NotFoundError('No such account.', { cause: `no ledger account "${accountId}"` });
}

export function noSuchTransfer(key: string): NotFoundError {
  return new NotFoundError('No such transfer.', { cause: `no transfer with id "${key}"` });
}

export function notReservation(key: string): InvalidStateError {
  return new InvalidStateError('The money of this operation is not reserved, so it cannot be posted or voided.', {
    cause: `transfer "${key}" is not a reservation`,
  });
}

export function reservationClosed(key: string, status: string): InvalidStateError {
  return new InvalidStateError(`The money reserved for this operation was already ${status}.`, {
    cause: `reservation "${key}" was already ${status}`,
  });
}

export function reservationExpired(key: string, expiresAt: Date): InvalidStateError {
  const at = expiresAt.toISOString();
  return new InvalidStateError(`The reservation of this operation expired at ${at}; it can no longer be posted.`, {
    cause: `reservation "${key}" expired at ${at}`,
  });
}

export function differentBooks(
  debit: { id: string; book: string },
  credit: { id: string; book: string },
): InvalidRequestError {
  return new InvalidRequestError('The two accounts are in different books: sandbox and live money never mix.', {
    cause: `accounts "${debit.id}" (${debit.book}) and "${credit.id}" (${credit.book}) are in different books`,
  });
}

export function differentCurrencies(
  debit: { id: string; currency: string },
  credit: { id: string; currency: string },
): InvalidRequestError {
  return new InvalidRequestError('The two accounts hold different currencies.', {
    cause: `accounts "${debit.id}" (${debit.currency}) and "${credit.id}" (${credit.currency}) hold different currencies`,
  });
}

export function postAboveReservation(key: string, amount: bigint, reserved: bigint): InvalidRequestError {
  return new InvalidRequestError('The amount to post is larger than the amount reserved.', {
    cause: `cannot post ${amount} of reservation "${key}", which holds ${reserved}`,
  });
}

export function reversalNotPosted(key: string, status: string): InvalidStateError {
  return new InvalidStateError(`Only posted money can be reversed; this transfer is ${status}.`, {
    cause: `transfer "${key}" is ${status}`,
  });
}

export function reversalAboveRemainder(
  key: string,
  amount: bigint,
  moved: bigint,
  reversed: bigint,
): InvalidRequestError {
  return new InvalidRequestError('The reversal is larger than what is left of the transfer to reverse.', {
    cause: `cannot reverse ${amount} of transfer "${key}": it moved ${moved} and ${reversed} of it is already reversed`,
  });
}

export function transferIdsTaken(keys: readonly string[]): DuplicateExternalIdError {
  return new DuplicateExternalIdError('This id was already used with different parameters.', {
    cause: `transfer ids "${keys.join('", "')}" exist already`,
  });
}
