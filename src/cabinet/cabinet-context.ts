// What the cabinet's routes are built from: the platform parts it uses and the
// reads its access rule needs on every request (cabinet-http.ts).
import type { AppContext } from '../context.ts';
import type { CryptoChain } from '../crypto/chain/crypto-chain.ts';
import type { PayoutsService } from '../crypto/payouts/payouts-module.ts';
import type { Mailer } from './mail/mailer.ts';
import { findShopProfile, merchantNames, type ShopProfile } from '../merchants/merchant-service.ts';
import { roleCan, type Permission, type Role } from './roles.ts';
import { resumeSession, type SessionDeps, type SessionRow } from './sessions/session-service.ts';
import { findUser, membershipsOf, type UserRow } from './users/user-service.ts';
import { layoutText, type Lang } from './views/cabinet-language.ts';

export type CabinetDeps = Pick<
  AppContext,
  'db' | 'clock' | 'config' | 'logger' | 'keyring' | 'notifications' | 'metrics' | 'health'
> & {
  /** The chain handle the crypto modules use (the sandbox tools drive its sandbox chain). */
  readonly chain: CryptoChain;
  /** Sends invitations and password resets; absent without PAYGATE_SMTP_URL (links are then shown to pass on). */
  readonly mailer?: Mailer | undefined;
};

/** CabinetDeps and the services of other modules that areas act through (the payout form creates through the payouts module). */
export type CabinetModuleDeps = CabinetDeps & {
  readonly payouts: PayoutsService;
};

export interface CabinetService {
  resumeSession(token: unknown): Promise<SessionRow | undefined>;
  findUser(userId: string): Promise<UserRow | undefined>;
  merchantsOf(userId: string): Promise<Array<{ id: string; name: string; role: Role }>>;
  findShop(shopId: string): Promise<ShopProfile | undefined>;
  steppedUpLately(session: SessionRow): boolean;
  /** The sections of the navigation a role may open. */
  sectionsFor(lang: Lang, role: Role | undefined): Array<{ href: string; label: string }>;
}

export function sessionDeps(deps: CabinetDeps): SessionDeps {
  return {
    db: deps.db,
    clock: deps.clock,
    timeouts: { idleMs: deps.config.cabinetSessionIdleMs, absoluteMs: deps.config.cabinetSessionAbsoluteMs },
  };
}

const SECTIONS: ReadonlyArray<{
  href: string;
  label: Parameters<typeof layoutText>[1];
  permission?: Permission;
}> = [
  { href: '/cabinet/shops', label: 'nav_home', permission: 'shops.read' },
  { href: '/cabinet/team', label: 'nav_team', permission: 'team.read' },
  { href: '/cabinet/audit', label: 'nav_audit', permission: 'audit.read' },
  { href: '/cabinet/account', label: 'nav_account' },
];

export function createCabinetService(deps: CabinetDeps): CabinetService {
  const sessions = sessionDeps(deps);
  return {
    resumeSession: (token) => resumeSession(sessions, token),
    findUser: (userId) => findUser(deps, userId),
    async merchantsOf(userId) {
      const memberships = await membershipsOf(deps, userId);
      const names = await merchantNames(
        deps.db,
        memberships.map((membership) => membership.merchant_id),
      );
      return memberships.map((membership) => ({
        id: membership.merchant_id,
        name: names.get(membership.merchant_id) ?? membership.merchant_id,
        role: membership.role,
      }));
    },
    findShop: (shopId) => findShopProfile(deps.db, shopId),
    steppedUpLately: (session) =>
      session.stepped_up_at !== null &&
      deps.clock.now().getTime() - session.stepped_up_at.getTime() < deps.config.cabinetStepUpMs,
    sectionsFor: (lang, role) =>
      SECTIONS.filter((section) => !section.permission || (role && roleCan(role, section.permission))).map(
        (section) => ({ href: section.href, label: layoutText(lang, section.label) }),
      ),
  };
}
