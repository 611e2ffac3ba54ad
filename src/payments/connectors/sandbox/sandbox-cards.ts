// The sandbox acquirer's test cards (documented in docs/payments.md). Any
// future expiry date and any 3-digit code work with them.
export type SandboxCardBehaviour =
  | { readonly kind: 'succeed' }
  | { readonly kind: 'decline'; readonly declineCode: string; readonly final: boolean }
  | { readonly kind: 'confirm' };

const SANDBOX_TEST_CARDS: Readonly<
  Record<string, { readonly behaviour: SandboxCardBehaviour; readonly description: string }>
> = {
  '4242424242424242': { behaviour: { kind: 'succeed' }, description: 'succeeds' },
  '5555555555554444': { behaviour: { kind: 'succeed' }, description: 'succeeds (Mastercard)' },
  '2200000000000004': { behaviour: { kind: 'succeed' }, description: 'succeeds (Mir)' },
  '4000000000000002': {
    behaviour: { kind: 'decline', declineCode: 'card_declined', final: false },
    description: 'declined; the payer may try another card',
  },
  '4000000000009995': {
    behaviour: { kind: 'decline', declineCode: 'insufficient_funds', final: false },
    description: 'declined for insufficient funds; the payer may try another card',
  },
  '4000000000000119': {
    behaviour: { kind: 'decline', declineCode: 'suspected_fraud', final: true },
    description: 'declined for good: the payment becomes failed (payment.failed)',
  },
  '4000000000003220': {
    behaviour: { kind: 'confirm' },
    description: 'needs a confirmation step (3-D Secure style), then succeeds',
  },
};

/** Cards not in the list are declined, so no real card number can look like it worked. */
export function sandboxCardBehaviour(number: string): SandboxCardBehaviour {
  return SANDBOX_TEST_CARDS[number]?.behaviour ?? { kind: 'decline', declineCode: 'unknown_test_card', final: false };
}
