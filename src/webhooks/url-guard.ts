// The SSRF guard. Webhook URLs must be https (http only when configured), and
// every address a delivery connects to is checked: loopback, private,
// link-local (cloud metadata), unspecified, multicast and reserved ranges are
// refused unless private targets are allowed. The check runs inside the socket's
// DNS lookup, so the address checked is the address connected to (no DNS rebinding).
// When a URL is accepted (a callback_url, the shop endpoint, a test URL) the same
// ranges are refused for IP-literal hosts and for localhost, without a DNS lookup.
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Config } from '../config.ts';
import { InvalidRequestError } from '../errors.ts';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export type AddressRules = Pick<Config, 'webhookAllowPrivate'>;
export type WebhookUrlRules = Pick<Config, 'allowHttpWebhooks'> & AddressRules;

/** Why a URL may not receive webhooks, or null when it may. Other modules call this at request time. */
export function webhookUrlProblem(raw: string, rules: WebhookUrlRules): string | null {
  const problem = webhookUrlShapeProblem(raw, rules);
  if (problem) return problem;
  return rules.webhookAllowPrivate ? null : hostProblem(new URL(raw).hostname);
}

/** The URL rule without the address check: scheme, credentials, length. */
export function webhookUrlShapeProblem(raw: string, rules: Pick<Config, 'allowHttpWebhooks'>): string | null {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && rules.allowHttpWebhooks)) {
    return rules.allowHttpWebhooks ? 'must use https or http' : 'must use https';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must name a host';
  return null;
}

/**
 * Refuses, without a DNS lookup, hosts whose address is known from the URL alone:
 * IP literals in a blocked range, and localhost names (RFC 6761: always loopback).
 * Other names are checked at every connection (guardedLookup): a lookup here would
 * put the merchant's DNS on the path of payment creation and prove nothing for later.
 */
function hostProblem(hostname: string): string | null {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) {
    const reason = blockedAddressReason(host);
    return reason ? `must not point to ${host} (${reason} address)` : null;
  }
  const name = host.replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return `must not point to ${name} (loopback address)`;
  return null;
}

/** Throws 400 invalid_request naming `field` when the URL may not receive webhooks. */
export function assertWebhookUrl(raw: string, rules: WebhookUrlRules, field = 'url'): void {
  const problem = webhookUrlProblem(raw, rules);
  if (problem) throw new InvalidRequestError(`${field} ${problem}`);
}

const BLOCKED: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'reserved (documentation)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'ipv4', 'reserved (documentation)'],
  ['203.0.113.0', 24, 'ipv4', 'reserved (documentation)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['100::', 64, 'ipv6', 'reserved (discard)'],
  ['2001:db8::', 32, 'ipv6', 'reserved (documentation)'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'private (site-local)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const blockLists = BLOCKED.map(([network, prefix, type, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return { list, type, reason };
});

function hextets(address: string): number[] | null {
  const zone = address.indexOf('%');
  let text = zone >= 0 ? address.slice(0, zone) : address;
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two hextets.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const missing = 8 - headParts.length - tailParts.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return null;
  const all = [...headParts, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailParts];
  return all.map((part) => Number.parseInt(part, 16));
}

/** The IPv4 address an IPv6 address carries (IPv4-mapped, IPv4-compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | null {
  const parts = hextets(address);
  if (!parts) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zerosBefore = (n: number) => parts.slice(0, n).every((part) => part === 0);
  if (zerosBefore(5) && parts[5] === 0xffff) return v4(parts[6]!, parts[7]!); // ::ffff:a.b.c.d
  if (zerosBefore(6) && (parts[6] !== 0 || parts[7]! > 1)) return v4(parts[6]!, parts[7]!); // ::a.b.c.d
  if (parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((part) => part === 0))
    return v4(parts[6]!, parts[7]!);
  if (parts[0] === 0x2002) return v4(parts[1]!, parts[2]!); // 6to4
  return null;
}

/** Why a delivery may not connect to this IP address, or null when it may. */
export function blockedAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner) {
      const reason = blockedAddressReason(inner);
      return reason ? `${reason} (IPv4 ${inner} inside IPv6)` : null;
    }
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const entry of blockLists) {
    if (entry.type === type && entry.list.check(address, type)) return entry.reason;
  }
  return null;
}

/** Raised when the guard refuses an address; the attempt is recorded as `refused`. */
export class AddressRefusedError extends Error {
  readonly code = 'PAYGATE_ADDRESS_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefusedError';
  }
}

/** Refuses an IP-literal host before any connection (sockets skip DNS for literals). */
export function checkLiteralHost(hostname: string, rules: AddressRules): void {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (rules.webhookAllowPrivate || isIP(host) === 0) return;
  const reason = blockedAddressReason(host);
  if (reason) throw new AddressRefusedError(`refused to connect to ${host}: ${reason} address`);
}

/**
 * A `lookup` for sockets that resolves the name and refuses the connection when
 * any resolved address is blocked; the socket then connects to the checked addresses.
 */
export function guardedLookup(rules: AddressRules): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      const reply = callback as (error: NodeJS.ErrnoException | null, address: unknown, family?: number) => void;
      if (error) return reply(error, options.all ? [] : '', 0);
      if (!rules.webhookAllowPrivate) {
        for (const entry of addresses) {
          const reason = blockedAddressReason(entry.address);
          if (reason) {
            // The address itself is left out: the attempt log is shown to the merchant who chose the name.
            return reply(
              new AddressRefusedError(`refused to connect to ${hostname}: it resolves to a ${reason} address`),
              options.all ? [] : '',
              0,
            );
          }
        }
      }
      if (options.all) return reply(null, addresses);
      const first = addresses[0];
      if (!first) return reply(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return reply(null, first.address, first.family);
    });
  };
}
