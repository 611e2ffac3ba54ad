// The networks an acquirer publishes for its notifications, as a check of a
// sender's address: a notification from anywhere else proves nothing. IPv4
// addresses seen as IPv4-mapped IPv6 (`::ffff:a.b.c.d`) are checked as IPv4.
import { BlockList, isIP } from 'node:net';

export interface NotificationSources {
  allows(address: string): boolean;
}

/** `cidrs`: networks (`a.b.c.d/n`, `x::/n`) or single addresses; a malformed entry throws. */
export function notificationSources(cidrs: readonly string[]): NotificationSources {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/');
    const family = isIP(address ?? '');
    if (!address || family === 0) throw new Error(`not a network: ${cidr}`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix), type);
  }
  return {
    allows(address: string): boolean {
      const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
      const family = isIP(mapped);
      if (family === 0) return false;
      return list.check(mapped, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}
