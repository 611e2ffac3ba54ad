// Every `paygate` subcommand: its words, usage, options and examples — all that
// `--help` and shell completion show — and where its code is, imported only when
// it runs. Modules add theirs here. Nothing heavy may be imported by this file.
import type { CliCommandEntry, CliOption } from './cli-command.ts';

// The domain's own lists, restated here to keep the modules' code out of help (test/cli/cli-help.test.ts compares them).
const API_KEY_SCOPES = ['payments', 'crypto', 'payouts', 'webhooks', 'read'];
const CABINET_ROLES = ['owner', 'admin', 'developer', 'finance', 'viewer'];
const WITHDRAWAL_STATUSES = [
  'awaiting_approval',
  'pending',
  'processing',
  'completed',
  'failed',
  'rejected',
  'cancelled',
];

// The events `paygate trigger` makes (src/cli/remote/trigger-scenarios.ts) and the invoice outcomes it can give.
const TRIGGER_EVENTS = [
  'payment.paid',
  'payment.failed',
  'payment.expired',
  'payment.refunded',
  'crypto.invoice.updated',
  'crypto.wallet.deposit',
  'crypto.balance.funded',
  'crypto.refund.updated',
  'crypto.payout.updated',
  'crypto.batch.completed',
  'cabinet.withdrawal.completed',
];
const TRIGGER_INVOICE_STATUSES = ['paid', 'overpaid', 'underpaid', 'expired'];

const json: CliOption = { flag: '--json', description: 'print the result as one line of JSON' };
const listJson: CliOption = {
  flag: '--json',
  description: 'print a JSON array instead of the table (shapes: docs/cli.md)',
};
const limit = (max: number): CliOption => ({
  flag: '--limit',
  value: 'N',
  description: `at most N rows, 1..${max} (default 100)`,
});
// The commands that talk to a (remote) gateway over its public API with a shop's key.
const remote: readonly CliOption[] = [
  { flag: '--api-key', value: 'KEY', description: 'the shop’s API key (default PAYGATE_API_KEY)' },
  {
    flag: '--url',
    value: 'URL',
    description: 'the gateway’s base URL (default PAYGATE_URL, else http://localhost:8080)',
  },
];
const live: CliOption = { flag: '--live', description: 'a live shop (real money); sandbox without it' };
const by: CliOption = {
  flag: '--by',
  value: 'NAME',
  description: 'who decides, recorded (default cli:<your user name>)',
};

export const commands: readonly CliCommandEntry[] = [
  {
    words: ['serve'],
    usage: 'paygate serve [--role all|api|worker] [--port N] [--demo]',
    summary: 'Run the gateway: HTTP API and payment page (api), background workers (worker), or both (all, default)',
    description:
      'Runs until SIGTERM or SIGINT, then finishes in-flight requests and deliveries (PAYGATE_SHUTDOWN_TIMEOUT_MS). Roles other than all need DATABASE_URL.',
    options: [
      { flag: '--role', value: 'ROLE', description: 'all (default), api or worker', choices: ['all', 'api', 'worker'] },
      {
        flag: '--port',
        value: 'N',
        description:
          'HTTP port, 0..65535 (default PORT, 8080); 0 picks a free one. With --role worker: serve /healthz, /readyz and /metrics on it (a worker listens on none without it)',
      },
      {
        flag: '--demo',
        description:
          'development: on an empty database, create a demo sandbox merchant and print its key (as PAYGATE_DEMO=1; npm start passes it)',
      },
    ],
    examples: [
      'paygate serve',
      'DATABASE_URL=postgres://… paygate serve --role api --port 8080',
      'DATABASE_URL=postgres://… PAYGATE_WORKERS=webhook-delivery paygate serve --role worker --port 9100',
    ],
    runsLocally: true,
    load: async () => (await import('./serve-commands.ts')).serveCommand,
  },
  {
    words: ['migrate'],
    usage: 'paygate migrate',
    summary: 'Apply pending database migrations and exit',
    options: [],
    examples: ['paygate migrate   # before starting a new version on PostgreSQL'],
    runsLocally: true,
    load: async () => (await import('./serve-commands.ts')).migrateCommand,
  },
  {
    words: ['merchant', 'create'],
    usage: 'paygate merchant create --name NAME --email EMAIL [--password PASSWORD] [--live] [--json]',
    summary: 'Create a merchant with one shop (sandbox unless --live) and an API key with every scope',
    description: 'The API key and the webhook secret are shown once.',
    options: [
      { flag: '--name', value: 'NAME', description: 'the merchant’s (and its first shop’s) name' },
      { flag: '--email', value: 'EMAIL', description: 'the merchant’s email' },
      {
        flag: '--password',
        value: 'PASSWORD',
        description: 'make EMAIL the owner in the cabinet with this password (10 to 200 characters)',
      },
      live,
      json,
    ],
    examples: [
      'paygate merchant create --name "Coffee Ltd" --email owner@coffee.example',
      'paygate merchant create --name "Coffee Ltd" --email owner@coffee.example --live --json',
    ],
    load: async () => (await import('./merchant-commands.ts')).merchantCreateCommand,
  },
  {
    words: ['user', 'create'],
    usage: 'paygate user create --email EMAIL [--name NAME] [--password PASSWORD] [--merchant MERCHANT_ID --role ROLE]',
    summary: 'Create a cabinet user, optionally a member of a merchant with a role',
    description:
      'Without --password a one-time link to set one (valid 1 hour) is printed to pass on. Audited as the operator.',
    options: [
      { flag: '--email', value: 'EMAIL', description: 'the email the user signs in with' },
      { flag: '--name', value: 'NAME', description: 'the user’s name' },
      { flag: '--password', value: 'PASSWORD', description: 'their password (10 to 200 characters)' },
      { flag: '--merchant', value: 'MERCHANT_ID', description: 'make them a member of this merchant (with --role)' },
      { flag: '--role', value: 'ROLE', description: 'their role in the merchant', choices: CABINET_ROLES },
    ],
    examples: [
      'paygate user create --email dev@coffee.example --merchant mer_… --role developer',
      'paygate user create --email ops@coffee.example --password "long enough secret"',
    ],
    load: async () => (await import('./user-commands.ts')).userCreateCommand,
  },
  {
    words: ['user', 'reset-password'],
    usage: 'paygate user reset-password --email EMAIL [--password PASSWORD]',
    summary: 'Set a cabinet user’s password, or print a one-time reset link; either ends all their sessions',
    description:
      'Without --password the link (valid 1 hour, works once) is printed to pass on. Audited as the operator.',
    options: [
      { flag: '--email', value: 'EMAIL', description: 'the user’s email' },
      { flag: '--password', value: 'PASSWORD', description: 'the new password (10 to 200 characters)' },
    ],
    examples: [
      'paygate user reset-password --email owner@coffee.example   # prints a link',
      'paygate user reset-password --email owner@coffee.example --password "new long secret"',
    ],
    load: async () => (await import('./user-commands.ts')).userResetPasswordCommand,
  },
  {
    words: ['user', 'disable'],
    usage: 'paygate user disable --email EMAIL',
    summary: 'Stop a cabinet user from signing in and end their sessions',
    options: [{ flag: '--email', value: 'EMAIL', description: 'the user’s email' }],
    examples: ['paygate user disable --email former@coffee.example'],
    load: async () => (await import('./user-commands.ts')).userDisableCommand,
  },
  {
    words: ['user', 'enable'],
    usage: 'paygate user enable --email EMAIL',
    summary: 'Let a disabled cabinet user sign in again',
    options: [{ flag: '--email', value: 'EMAIL', description: 'the user’s email' }],
    examples: ['paygate user enable --email former@coffee.example'],
    load: async () => (await import('./user-commands.ts')).userEnableCommand,
  },
  {
    words: ['shop', 'create'],
    usage: 'paygate shop create --merchant MERCHANT_ID [--name NAME] [--live] [--json]',
    summary:
      "Add a shop (sandbox unless --live) to a merchant, with an API key with every scope; its key sees only its mode's money",
    options: [
      { flag: '--merchant', value: 'MERCHANT_ID', description: 'the merchant (mer_…)' },
      { flag: '--name', value: 'NAME', description: 'the shop’s name (default: the merchant’s)' },
      live,
      json,
    ],
    examples: ['paygate shop create --merchant mer_01h… --live   # a live shop beside the sandbox one'],
    load: async () => (await import('./merchant-commands.ts')).shopCreateCommand,
  },
  {
    words: ['key', 'create'],
    usage: `paygate key create --shop SHOP_ID --scopes ${API_KEY_SCOPES.join(',')} [--name NAME] [--json]`,
    summary: 'Issue an API key for a shop with the given scopes',
    description: 'The key is shown once; only its hash is stored.',
    options: [
      { flag: '--shop', value: 'SHOP_ID', description: 'the shop the key acts for (shop_…)' },
      { flag: '--scopes', value: 'LIST', description: `comma-separated, from: ${API_KEY_SCOPES.join(', ')}` },
      { flag: '--name', value: 'NAME', description: 'what the cabinet calls the key (up to 100 characters)' },
      json,
    ],
    examples: [
      'paygate key create --shop shop_01h… --scopes payments,read',
      'paygate key create --shop shop_01h… --scopes read --json',
    ],
    load: async () => (await import('./merchant-commands.ts')).keyCreateCommand,
  },
  {
    words: ['key', 'revoke'],
    usage: 'paygate key revoke KEY_ID',
    summary: 'Revoke an API key: running gateways refuse it (401) from their next request, and after a restart',
    options: [],
    examples: ['paygate key revoke key_01h…'],
    load: async () => (await import('./merchant-commands.ts')).keyRevokeCommand,
  },
  {
    words: ['shop', 'methods', 'list'],
    usage: 'paygate shop methods list --shop SHOP_ID [--json]',
    summary: "Show a shop's payment methods: on/off, amount range, payer fee",
    options: [{ flag: '--shop', value: 'SHOP_ID', description: 'the shop (shop_…)' }, listJson],
    examples: ['paygate shop methods list --shop shop_01h…'],
    lists: true,
    load: async () => (await import('./shop-method-commands.ts')).shopMethodsListCommand,
  },
  {
    words: ['shop', 'methods', 'set'],
    usage:
      'paygate shop methods set --shop SHOP_ID --method card|sbp|sberpay [--enable|--disable] [--min RUB] [--max RUB] [--fee-percent P] [--json]',
    summary: 'Switch a payment method on or off for a shop and set its amount range and payer fee',
    options: [
      { flag: '--shop', value: 'SHOP_ID', description: 'the shop (shop_…)' },
      { flag: '--method', value: 'METHOD', description: 'card, sbp or sberpay', choices: ['card', 'sbp', 'sberpay'] },
      { flag: '--enable', description: 'switch the method on' },
      { flag: '--disable', description: 'switch the method off' },
      { flag: '--min', value: 'RUB', description: 'smallest amount, e.g. 10.00' },
      { flag: '--max', value: 'RUB', description: 'largest amount, e.g. 150000.00' },
      {
        flag: '--fee-percent',
        value: 'P',
        description: 'fee the payer pays on top, percent with up to 2 decimals, e.g. 2.5',
      },
      json,
    ],
    examples: [
      'paygate shop methods set --shop shop_01h… --method sbp --enable --min 10 --max 150000',
      'paygate shop methods set --shop shop_01h… --method card --fee-percent 2.5',
    ],
    load: async () => (await import('./shop-method-commands.ts')).shopMethodsSetCommand,
  },
  {
    words: ['shop', 'connector', 'set'],
    usage:
      'paygate shop connector set --shop SHOP_ID --provider NAME [--credential NAME=VALUE]… [--credential-file NAME=PATH]… [--secret-key-file PATH] [--shop-id ID] [--api-url URL] [--methods card,sbp,sberpay] [--priority N] [--json]',
    summary: 'Connect a live shop to a production acquirer (credentials checked with the provider, stored sealed)',
    options: [
      { flag: '--shop', value: 'SHOP_ID', description: 'the shop (shop_…)' },
      { flag: '--provider', value: 'NAME', description: 'the acquirer provider, e.g. yookassa or tbank' },
      { flag: '--credential', value: 'NAME=VALUE', description: 'a credential the provider asks for (repeat)' },
      {
        flag: '--credential-file',
        value: 'NAME=PATH',
        description: 'a credential read from a file, kept out of the shell history (repeat)',
      },
      { flag: '--secret-key-file', value: 'PATH', description: 'the credential secret_key, read from a file' },
      { flag: '--shop-id', value: 'ID', description: "the credential shop_id (the acquirer's id of the shop)" },
      { flag: '--api-url', value: 'URL', description: "the provider's API base URL (default: its production URL)" },
      {
        flag: '--methods',
        value: 'LIST',
        description: 'the methods routed to this connection, comma-separated (default: all the provider charges)',
      },
      {
        flag: '--priority',
        value: 'N',
        description: 'routing order, 0..1000: a method goes to the lowest priority that lists it (default 0)',
      },
      json,
    ],
    examples: [
      'paygate shop connector set --shop shop_01h… --provider yookassa --shop-id 123456 --secret-key-file ./yookassa.key',
      'paygate shop connector set --shop shop_01h… --provider tbank --credential terminal_key=T123 --credential-file password=./tbank.pw --methods sbp --priority 1',
    ],
    load: async () => (await import('./shop-connector-commands.ts')).shopConnectorSetCommand,
  },
  {
    words: ['shop', 'connector', 'list'],
    usage: 'paygate shop connector list --shop SHOP_ID [--json]',
    summary: "Show a shop's acquirer connections in routing order (credential names only, never values)",
    options: [{ flag: '--shop', value: 'SHOP_ID', description: 'the shop (shop_…)' }, listJson],
    examples: ['paygate shop connector list --shop shop_01h…'],
    lists: true,
    load: async () => (await import('./shop-connector-commands.ts')).shopConnectorListCommand,
  },
  {
    words: ['shop', 'connector', 'remove'],
    usage: 'paygate shop connector remove --shop SHOP_ID --connection ACQ_ID [--json]',
    summary: 'Stop routing payments to an acquirer connection (its charges still end and can be refunded)',
    options: [
      { flag: '--shop', value: 'SHOP_ID', description: 'the shop (shop_…)' },
      { flag: '--connection', value: 'ACQ_ID', description: 'the connection (acq_…)' },
      json,
    ],
    examples: ['paygate shop connector remove --shop shop_01h… --connection acq_01h…'],
    load: async () => (await import('./shop-connector-commands.ts')).shopConnectorRemoveCommand,
  },
  {
    words: ['ledger', 'check'],
    usage: 'paygate ledger check [--batch-rows N] [--json]',
    summary:
      'Verify the ledger: debits equal credits per currency, account totals equal their transfers, no merchant below zero',
    description:
      'Exits 1 when an invariant fails (docs/ledger.md). Reads the ledger in batches over one snapshot, each statement under the statement timeout, with progress on stderr (docs/operations.md).',
    options: [{ flag: '--batch-rows', value: 'N', description: 'rows read per statement (default 100000)' }, json],
    examples: ['paygate ledger check', 'paygate ledger check --json'],
    load: async () => (await import('./ledger-commands.ts')).ledgerCheckCommand,
  },
  {
    words: ['retention', 'status'],
    usage: 'paygate retention status [--json]',
    summary: 'What each append-only table keeps (PAYGATE_RETENTION_*), what it holds, and the latest archive files',
    options: [json],
    examples: ['paygate retention status', 'paygate retention status --json'],
    load: async () => (await import('./retention-commands.ts')).retentionStatusCommand,
  },
  {
    words: ['retention', 'run'],
    usage: 'paygate retention run [--limit N] [--json]',
    summary: 'Archive the rows past retention to PAYGATE_ARCHIVE_DIR, then remove them (what the hourly worker does)',
    description: 'Exits 1 when another run holds the lease (docs/operations.md, "Retention and archive").',
    options: [
      { flag: '--limit', value: 'N', description: 'at most N months or batches per table, 1..1000 (default 1000)' },
      json,
    ],
    examples: ['paygate retention run', 'paygate retention run --limit 1 --json'],
    load: async () => (await import('./retention-commands.ts')).retentionRunCommand,
  },
  {
    words: ['payments', 'suspense', 'list'],
    usage: 'paygate payments suspense list [--limit N] [--json]',
    summary: 'List captured charges that no payment could take (held in suspense), newest first',
    options: [limit(1_000), listJson],
    examples: ['paygate payments suspense list', 'paygate payments suspense list --limit 10 --json'],
    lists: true,
    load: async () => (await import('./suspense-commands.ts')).suspenseListCommand,
  },
  {
    words: ['payments', 'suspense', 'refund'],
    usage: 'paygate payments suspense refund --attempt ATTEMPT_ID [--json]',
    summary: 'Refund a capture held in suspense to the payer through its acquirer connector',
    options: [{ flag: '--attempt', value: 'ATTEMPT_ID', description: 'the capture in suspense (att_…)' }, json],
    examples: ['paygate payments suspense refund --attempt att_01h…'],
    load: async () => (await import('./suspense-commands.ts')).suspenseRefundCommand,
  },
  {
    words: ['openapi'],
    usage: 'paygate openapi [--out FILE]',
    summary: 'Print the OpenAPI 3.1 document of the API (servers: PAYGATE_PUBLIC_URL), or write it to FILE',
    description: 'Needs no database.',
    options: [{ flag: '--out', value: 'FILE', description: 'write the document to FILE instead of standard output' }],
    examples: ['paygate openapi --out openapi.json'],
    runsLocally: true,
    load: async () => (await import('./openapi-command.ts')).openapiCommand,
  },
  {
    words: ['kms', 'generate-key'],
    usage: 'paygate kms generate-key',
    summary: 'Print a new random root key (base64) for PAYGATE_ROOT_KEY or a PAYGATE_ROOT_KEY_FILE',
    options: [],
    examples: ['paygate kms generate-key > /etc/paygate/root-key && chmod 600 /etc/paygate/root-key'],
    runsLocally: true,
    load: async () => (await import('./kms-commands.ts')).kmsGenerateKeyCommand,
  },
  {
    words: ['kms', 'rotate'],
    usage: 'paygate kms rotate',
    summary:
      'Re-wrap every stored secret under the current root key (run after moving the old key to PAYGATE_ROOT_KEYS_PREVIOUS)',
    options: [],
    examples: ['PAYGATE_ROOT_KEY=<new> PAYGATE_ROOT_KEYS_PREVIOUS=<old> paygate kms rotate'],
    load: async () => (await import('./kms-commands.ts')).kmsRotateCommand,
  },
  {
    words: ['chain', 'simulate'],
    usage:
      'paygate chain simulate [--port N] [--host 127.0.0.1] [--seed TEXT] [--persist FILE] [--retain-blocks N] [--network mainnet|nile]',
    summary: 'Run the simulated TRON chain (sandbox) as a node on loopback until SIGINT/SIGTERM',
    options: [
      { flag: '--port', value: 'N', description: 'port, 0..65535 (default 0: a free one)' },
      { flag: '--host', value: 'HOST', description: 'address to listen on (default 127.0.0.1)' },
      { flag: '--seed', value: 'TEXT', description: 'seed of its accounts (default paygate-sandbox-chain)' },
      { flag: '--persist', value: 'FILE', description: 'save the chain to FILE and resume from it' },
      {
        flag: '--retain-blocks',
        value: 'N',
        description: 'solidified blocks that keep their transactions, 1..99999999',
      },
      {
        flag: '--network',
        value: 'mainnet|nile',
        description: 'whose USDT contract and prices it runs (default: PAYGATE_TRON_NETWORK, else mainnet)',
      },
    ],
    examples: [
      'paygate chain simulate --port 9090',
      'paygate chain simulate --port 9090 --persist ./chain.json',
      'paygate chain simulate --port 9090 --network nile',
    ],
    runsLocally: true,
    load: async () => (await import('./chain-commands.ts')).chainSimulateCommand,
  },
  {
    words: ['acquirer', 'simulate'],
    usage: 'paygate acquirer simulate tbank|yookassa [--port N] [--host 127.0.0.1] [--no-notify]',
    summary:
      "Run a simulator of an acquirer's API (its hosted payment page and notifications included) on loopback until SIGINT/SIGTERM",
    options: [
      { flag: '--port', value: 'N', description: 'port, 0..65535 (default 0: a free one)' },
      { flag: '--host', value: 'HOST', description: 'address to listen on (default 127.0.0.1)' },
      { flag: '--no-notify', description: 'send no notifications (the gateway must find outcomes by asking)' },
    ],
    examples: ['paygate acquirer simulate tbank --port 9100', 'paygate acquirer simulate yookassa --port 9200'],
    runsLocally: true,
    load: async () => (await import('./acquirer-commands.ts')).acquirerSimulateCommand,
  },
  {
    words: ['listen'],
    usage:
      'paygate listen --forward-to URL [--events TYPES] [--api-key KEY] [--url GATEWAY] [--print-json] [--skip-verify]',
    summary: "Forward a (remote) gateway's webhook events of a shop to a local URL, signed as real deliveries",
    description:
      "Holds one outgoing stream (GET /v1/webhooks/stream) with a key of the shop that has the webhooks scope, so it works behind NAT. Each event is POSTed to --forward-to with Standard Webhooks headers, signed with the listen secret printed at start (derived from the key: the same every time). Prints a line per event; reconnects and resumes after the last event. Runs until SIGINT/SIGTERM; the shop's own deliveries are unaffected.",
    options: [
      { flag: '--forward-to', value: 'URL', description: 'the local receiver, e.g. http://localhost:3000/hooks' },
      {
        flag: '--events',
        value: 'TYPES',
        description: 'comma-separated types, * for any run of characters (payment.*,crypto.*); all when absent',
      },
      {
        flag: '--api-key',
        value: 'KEY',
        description: 'a key of the shop with the webhooks scope (default PAYGATE_API_KEY)',
      },
      { flag: '--url', value: 'GATEWAY', description: 'the gateway (default PAYGATE_URL, else http://localhost:8080)' },
      { flag: '--print-json', description: 'print each event as its JSON body instead of a line' },
      { flag: '--skip-verify', description: 'accept a self-signed TLS certificate of the local receiver' },
    ],
    examples: [
      'paygate listen --forward-to http://localhost:3000/hooks',
      'paygate listen --url https://pay.example.com --events payment.*,crypto.* --forward-to https://localhost:3000/hooks --skip-verify',
    ],
    runsLocally: true,
    load: async () => (await import('./listen-commands.ts')).listenCommand,
  },
  {
    words: ['crypto', 'addresses'],
    usage: 'paygate crypto addresses [--shop SHOP_ID] [--limit N] [--after ADDRESS] [--json]',
    summary:
      'Our deposit addresses with on-chain USDT/TRX balances beside the deposits credited in the ledger and held, and what sweeping moved, is moving or is stuck on',
    options: [
      { flag: '--shop', value: 'SHOP_ID', description: 'only this shop’s addresses' },
      limit(1_000),
      {
        flag: '--after',
        value: 'ADDRESS',
        description: 'the page after this address (the last one of the previous page)',
      },
      listJson,
    ],
    examples: ['paygate crypto addresses', 'paygate crypto addresses --shop shop_01h… --json'],
    lists: true,
    load: async () => (await import('./crypto-commands.ts')).cryptoAddressesCommand,
  },
  {
    words: ['crypto', 'costs'],
    usage: 'paygate crypto costs [--days N] [--json]',
    summary:
      'What outgoing transfers cost per UTC day and chain: energy by source (staked, delegated, rented, burned), bandwidth, TRX burned and rented, and the USDT equivalent (docs/payouts.md "Costs")',
    options: [
      { flag: '--days', value: 'N', description: 'the last N days, today included, 1..366 (default 7)' },
      listJson,
    ],
    examples: ['paygate crypto costs', 'paygate crypto costs --days 30 --json'],
    lists: true,
    load: async () => (await import('./crypto-commands.ts')).cryptoCostsCommand,
  },
  {
    words: ['crypto', 'sweeps', 'list'],
    usage: 'paygate crypto sweeps list --address ADDRESS [--json]',
    summary:
      'The sweep attempts of one deposit address, newest first: what each moved and what it cost (docs/sweeping.md)',
    options: [{ flag: '--address', value: 'ADDRESS', description: 'one of our TRON deposit addresses (T…)' }, listJson],
    examples: ['paygate crypto sweeps list --address TJ…'],
    lists: true,
    load: async () => (await import('./crypto-commands.ts')).cryptoSweepsListCommand,
  },
  {
    words: ['crypto', 'sweeps', 'retry'],
    usage: 'paygate crypto sweeps retry --address ADDRESS',
    summary:
      "Clears a stuck address's failed sweeps so the sweeper tries it again at its next pass, and sends again an undelegation of its energy that failed (docs/sweeping.md)",
    options: [{ flag: '--address', value: 'ADDRESS', description: 'one of our TRON deposit addresses (T…)' }],
    examples: ['paygate crypto sweeps retry --address TJ…'],
    load: async () => (await import('./crypto-commands.ts')).cryptoSweepsRetryCommand,
  },
  {
    words: ['crypto', 'settings'],
    usage: 'paygate crypto settings --shop SHOP_ID [--min-deposit USDT] [--json]',
    summary:
      "Shows a shop's receiving settings, or sets its minimum deposit: smaller transfers are ignored as dust (docs/crypto.md)",
    options: [
      { flag: '--shop', value: 'SHOP_ID', description: 'the shop (shop_…)' },
      { flag: '--min-deposit', value: 'USDT', description: 'set the minimum deposit, 0.000001..100 (default 0.01)' },
      json,
    ],
    examples: ['paygate crypto settings --shop shop_01h…', 'paygate crypto settings --shop shop_01h… --min-deposit 1'],
    load: async () => (await import('./crypto-commands.ts')).cryptoSettingsCommand,
  },
  {
    words: ['crypto', 'reconcile'],
    usage:
      'paygate crypto reconcile [--book sandbox|live] [--json] | paygate crypto reconcile --acknowledge --book sandbox|live --by NAME [--note TEXT]',
    summary:
      'Compares the USDT on our addresses (solidified) with what the ledger holds, per book; exits 1 on a shortfall. --acknowledge resumes a book paused by a shortfall',
    description: 'Exit codes: 0 balanced, 1 a shortfall, 3 a book could not be read (docs/custody.md).',
    options: [
      { flag: '--book', value: 'BOOK', description: 'sandbox or live (default: both)', choices: ['sandbox', 'live'] },
      json,
      { flag: '--acknowledge', description: 'accept the current shortfall and resume the book’s signing' },
      { flag: '--by', value: 'NAME', description: 'with --acknowledge: who accepts it, 1..200 characters (recorded)' },
      { flag: '--note', value: 'TEXT', description: 'with --acknowledge: why, at most 1000 characters' },
    ],
    examples: [
      'paygate crypto reconcile',
      'paygate crypto reconcile --acknowledge --book live --by alice --note "fee paid by hand"',
    ],
    load: async () => (await import('./custody-commands.ts')).cryptoReconcileCommand,
  },
  {
    words: ['crypto', 'deposits', 'unconfirmed'],
    usage: 'paygate crypto deposits unconfirmed [--limit N] [--json]',
    summary:
      'Final deposits no second TRON node confirmed, held and not credited, oldest first (docs/crypto.md "What a credit requires")',
    options: [limit(1_000), listJson],
    examples: ['paygate crypto deposits unconfirmed', 'paygate crypto deposits unconfirmed --json'],
    lists: true,
    load: async () => (await import('./crypto-commands.ts')).cryptoDepositsUnconfirmedCommand,
  },
  {
    words: ['crypto', 'deposits', 'release'],
    usage: 'paygate crypto deposits release --deposit DEPOSIT_ID',
    summary:
      'Credits an unconfirmed deposit on the operator\'s word, after checking its transaction on an explorer (docs/crypto.md "What a credit requires")',
    options: [
      { flag: '--deposit', value: 'DEPOSIT_ID', description: 'the held deposit (from crypto deposits unconfirmed)' },
    ],
    examples: ['paygate crypto deposits release --deposit dep_01h…'],
    load: async () => (await import('./crypto-commands.ts')).cryptoDepositsReleaseCommand,
  },
  {
    words: ['crypto', 'keys', 'import'],
    usage:
      'paygate crypto keys import [--file PATH]   (the mnemonic or xprv on stdin, or in PATH, mode 0600; never as an argument)',
    summary:
      'Seal the live signing key (BIP39 mnemonic or xprv) into the database under the root key; the worker role signs with it (docs/security.md)',
    options: [
      { flag: '--file', value: 'PATH', description: 'read the key from PATH (mode 0600) instead of standard input' },
    ],
    examples: ['paygate crypto keys import < key.txt', 'paygate crypto keys import --file /root/signer.txt'],
    load: async () => (await import('./crypto-key-commands.ts')).cryptoKeysImportCommand,
  },
  {
    words: ['crypto', 'keys', 'list'],
    usage: 'paygate crypto keys list [--json]',
    summary: 'The sealed signing keys stored, by book and account xpub (the keys themselves are never shown)',
    options: [listJson],
    examples: ['paygate crypto keys list'],
    lists: true,
    load: async () => (await import('./crypto-key-commands.ts')).cryptoKeysListCommand,
  },
  {
    words: ['crypto', 'hot-wallet'],
    usage: 'paygate crypto hot-wallet [--json]',
    summary:
      'Each book’s hot wallet against PAYGATE_TRON_HOT_WALLET_CEILING_USDT: USDT held, committed, the surplus for the cold wallet, and the recent moves there',
    options: [listJson],
    examples: ['paygate crypto hot-wallet', 'paygate crypto hot-wallet --json'],
    lists: true,
    load: async () => (await import('./hot-wallet-commands.ts')).cryptoHotWalletCommand,
  },
  {
    words: ['withdrawal', 'create'],
    usage:
      'paygate withdrawal create --merchant MERCHANT_ID --shop SHOP_ID --external-id KEY --amount USDT --address T… [--by NAME] [--json]',
    summary:
      "Withdraw USDT from a merchant's balance (the book of the shop's mode) to its own address; total_debit is reserved at once",
    options: [
      { flag: '--merchant', value: 'MERCHANT_ID', description: 'the merchant whose balance pays (mer_…)' },
      {
        flag: '--shop',
        value: 'SHOP_ID',
        description: 'its shop: names the book (sandbox or live) and receives the webhook',
      },
      {
        flag: '--external-id',
        value: 'KEY',
        description: 'your idempotency key: the same key again is the same withdrawal, never a second',
      },
      { flag: '--amount', value: 'USDT', description: 'amount to send, e.g. 125.5 (the network fee is added)' },
      { flag: '--address', value: 'T…', description: 'the merchant’s TRON address' },
      { flag: '--by', value: 'NAME', description: 'who asks, recorded (default cli:<your user name>)' },
      json,
    ],
    examples: [
      'paygate withdrawal create --merchant mer_01h… --shop shop_01h… --external-id w-2024-001 --amount 125.5 --address TJ…',
    ],
    load: async () => (await import('./withdrawal-commands.ts')).withdrawalCreateCommand,
  },
  {
    words: ['withdrawal', 'approve'],
    usage: 'paygate withdrawal approve WITHDRAWAL_ID [--by NAME] [--json]',
    summary: 'Approve a withdrawal awaiting approval: it is queued to the executor (who and when are recorded)',
    options: [by, json],
    examples: ['paygate withdrawal approve wd_01h… --by alice'],
    load: async () => (await import('./withdrawal-commands.ts')).withdrawalApproveCommand,
  },
  {
    words: ['withdrawal', 'reject'],
    usage: 'paygate withdrawal reject WITHDRAWAL_ID [--by NAME] [--reason TEXT] [--json]',
    summary: 'Reject a withdrawal awaiting approval: its reservation is voided, the funds are available again',
    options: [by, { flag: '--reason', value: 'TEXT', description: 'why, recorded and shown to the merchant' }, json],
    examples: ['paygate withdrawal reject wd_01h… --by alice --reason "address not verified"'],
    load: async () => (await import('./withdrawal-commands.ts')).withdrawalRejectCommand,
  },
  {
    words: ['withdrawal', 'list'],
    usage: 'paygate withdrawal list [--merchant MERCHANT_ID] [--status STATUS] [--limit N] [--json]',
    summary: 'List withdrawals, newest first',
    options: [
      { flag: '--merchant', value: 'MERCHANT_ID', description: 'only this merchant’s' },
      {
        flag: '--status',
        value: 'STATUS',
        description: `only those in STATUS: ${WITHDRAWAL_STATUSES.join(', ')}`,
        choices: WITHDRAWAL_STATUSES,
      },
      limit(500),
      listJson,
    ],
    examples: [
      'paygate withdrawal list --status awaiting_approval',
      'paygate withdrawal list --merchant mer_01h… --json',
    ],
    lists: true,
    load: async () => (await import('./withdrawal-commands.ts')).withdrawalListCommand,
  },
  {
    words: ['withdrawal', 'settings'],
    usage:
      'paygate withdrawal settings --merchant MERCHANT_ID --book sandbox|live --single-person-max USDT|none  |  --shop SHOP_ID --approval required|none',
    summary:
      "A merchant's rule per book: withdrawals up to USDT need no second person; above it (or with none, the default) they wait for approval",
    options: [
      { flag: '--merchant', value: 'MERCHANT_ID', description: 'the merchant (mer_…)' },
      { flag: '--book', value: 'BOOK', description: 'sandbox or live', choices: ['sandbox', 'live'] },
      {
        flag: '--single-person-max',
        value: 'USDT',
        description: 'the largest withdrawal one person may make alone, or none (every withdrawal waits)',
      },
      {
        flag: '--shop',
        value: 'SHOP_ID',
        description: "the former form: sets the rule of the shop's merchant and book",
      },
      {
        flag: '--approval',
        value: 'MODE',
        description: 'with --shop: required (no single-person limit) or none (no practical limit)',
        choices: ['required', 'none'],
      },
    ],
    examples: [
      'paygate withdrawal settings --merchant mer_01h… --book live --single-person-max 500',
      'paygate withdrawal settings --shop shop_01h… --approval required',
    ],
    load: async () => (await import('./withdrawal-commands.ts')).withdrawalSettingsCommand,
  },
  {
    words: ['backup'],
    usage: 'paygate backup --to FILE',
    summary: 'Write a backup of the embedded database to FILE (a new file, mode 0600); works while the gateway runs',
    description:
      'On PostgreSQL it points to pg_dump (docs/operations.md). The root key is not in the backup: keep it apart.',
    options: [{ flag: '--to', value: 'FILE', description: 'the backup file to create (never replaced)' }],
    examples: ['paygate backup --to /backups/paygate-$(date +%F).tgz'],
    load: async () => (await import('./backup-commands.ts')).backupCommand,
  },
  {
    words: ['restore'],
    usage: 'paygate restore --from FILE [--force]',
    summary: 'Restore a backup into PAYGATE_DATA_DIR (empty, or replaced with --force); the gateway must be stopped',
    description:
      "Applies this version's migrations to the restored database. On PostgreSQL it points to pg_restore (docs/operations.md).",
    options: [
      { flag: '--from', value: 'FILE', description: 'a file written by paygate backup' },
      { flag: '--force', description: "replace the folder's existing database" },
    ],
    examples: ['paygate restore --from /backups/paygate-2026-11-27.tgz', 'paygate restore --from backup.tgz --force'],
    runsLocally: true,
    load: async () => (await import('./backup-commands.ts')).restoreCommand,
  },
  {
    words: ['trigger'],
    usage:
      'paygate trigger EVENT [--status STATUS] [--callback-url URL] [--api-key KEY] [--url URL] [--timeout SECONDS] [--json] | --list',
    summary: 'Make a sandbox gateway emit a real webhook event of a type, over its public API, and print it',
    description:
      'Creates the sandbox objects and drives them with the test helpers (payer, acquirer, chain, clock) until the gateway writes the event; waits for it in the shop’s event log and prints its id and type. A live shop’s key is refused.',
    options: [
      {
        flag: '--status',
        value: 'STATUS',
        description: 'crypto.invoice.updated only: the invoice’s outcome (default paid)',
        choices: TRIGGER_INVOICE_STATUSES,
      },
      {
        flag: '--callback-url',
        value: 'URL',
        description:
          'payment events: the payment’s callback_url (default the shop’s webhook URL; payment events need one)',
      },
      ...remote,
      { flag: '--timeout', value: 'SECONDS', description: 'give up after this long, 1..3600 (default 300)' },
      { flag: '--list', description: 'list the events it can make, and how' },
      { flag: '--json', description: 'print the event as GET /v1/webhooks/events/{id} shows it, one line of JSON' },
    ],
    arguments: TRIGGER_EVENTS,
    examples: [
      'PAYGATE_API_KEY=sk_test_… paygate trigger payment.paid',
      'paygate trigger crypto.invoice.updated --status underpaid --url https://gateway.example.com',
      'paygate trigger --list',
    ],
    runsLocally: true,
    load: async () => (await import('./trigger-commands.ts')).triggerCommand,
  },
  {
    words: ['events', 'list'],
    usage: 'paygate events list [--type TYPE] [--limit N] [--api-key KEY] [--url URL] [--json]',
    summary: 'List the shop’s webhook events, newest first, with their delivery state (over the public API)',
    options: [
      { flag: '--type', value: 'TYPE', description: 'only events of this type (payment.paid, …)' },
      { flag: '--limit', value: 'N', description: 'at most N events, 1..1000 (default 20)' },
      ...remote,
      listJson,
    ],
    examples: ['paygate events list', 'paygate events list --type crypto.payout.updated --limit 5 --json'],
    lists: true,
    runsLocally: true,
    load: async () => (await import('./events-commands.ts')).eventsListCommand,
  },
  {
    words: ['events', 'resend'],
    usage: 'paygate events resend EVT_ID [--api-key KEY] [--url URL] [--json]',
    summary: 'Send a webhook event again now, with the same event id (the key needs the webhooks scope)',
    options: [...remote, json],
    examples: ['paygate events resend evt_01kaw…'],
    runsLocally: true,
    load: async () => (await import('./events-commands.ts')).eventsResendCommand,
  },
  {
    words: ['completion'],
    usage: 'paygate completion bash|zsh',
    summary: 'Print a shell completion script for paygate commands and their options',
    options: [],
    arguments: ['bash', 'zsh'],
    examples: [
      'source <(npx paygate completion bash)   # in ~/.bashrc',
      'npx paygate completion zsh > "${fpath[1]}/_paygate"   # zsh',
    ],
    runsLocally: true,
    load: async () => (await import('./completion.ts')).completionCommand,
  },
];
