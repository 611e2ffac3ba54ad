-- The cabinet's people: users who sign in with an email and a password (and a second
-- factor), their memberships in merchants with a role, server-side sessions, team
-- invitations, password resets and the sign-in throttle. Tokens are stored only as
-- SHA-256 hashes; the TOTP secret is sealed by src/kms.
create table users (
  id                 text primary key,
  email              text not null check (length(email) between 3 and 320),
  name               text not null default '' check (length(name) <= 200),
  password_hash      text,
  totp_secret_sealed text,
  totp_enabled_at    timestamptz,
  -- The last TOTP time step accepted: a code is never accepted twice.
  totp_last_step     bigint,
  disabled_at        timestamptz,
  created_at         timestamptz not null
);
create unique index users_email_key on users (lower(email));

create table memberships (
  user_id     text not null references users (id),
  merchant_id text not null references merchants (id),
  role        text not null check (role in ('owner', 'admin', 'developer', 'finance', 'viewer')),
  created_at  timestamptz not null,
  primary key (user_id, merchant_id)
);
create index memberships_merchant_id_idx on memberships (merchant_id);

-- Ten one-time codes per user; a used code keeps its row with used_at set.
create table user_recovery_codes (
  user_id    text not null references users (id),
  code_hash  bytea not null,
  used_at    timestamptz,
  primary key (user_id, code_hash)
);

create table cabinet_sessions (
  id                   text primary key,
  token_hash           bytea not null,
  user_id              text not null references users (id),
  -- The merchant the user is working in (one of their memberships).
  merchant_id          text references merchants (id),
  -- The synchronizer token every state-changing form carries.
  csrf_token           text not null,
  -- Password accepted but the second factor not yet given: the session can only finish sign-in.
  pending_second_factor boolean not null default false,
  -- When the user last proved a second factor (or the password, without one): step-up is fresh for a while.
  stepped_up_at        timestamptz,
  ip                   text not null default '',
  user_agent           text not null default '' check (length(user_agent) <= 500),
  created_at           timestamptz not null,
  last_seen_at         timestamptz not null,
  expires_at           timestamptz not null,
  ended_at             timestamptz
);
create unique index cabinet_sessions_token_hash_key on cabinet_sessions (token_hash);
create index cabinet_sessions_user_id_idx on cabinet_sessions (user_id) where ended_at is null;

create table cabinet_invites (
  id           text primary key,
  token_hash   bytea not null,
  merchant_id  text not null references merchants (id),
  email        text not null check (length(email) between 3 and 320),
  role         text not null check (role in ('owner', 'admin', 'developer', 'finance', 'viewer')),
  invited_by   text not null references users (id),
  created_at   timestamptz not null,
  expires_at   timestamptz not null,
  accepted_at  timestamptz,
  revoked_at   timestamptz
);
create unique index cabinet_invites_token_hash_key on cabinet_invites (token_hash);
create index cabinet_invites_merchant_id_idx on cabinet_invites (merchant_id);

create table cabinet_password_resets (
  token_hash  bytea primary key,
  user_id     text not null references users (id),
  created_at  timestamptz not null,
  expires_at  timestamptz not null,
  used_at     timestamptz
);

-- Failed sign-ins per account and per address, for the growing delay (cabinet/sign-in-throttle.ts).
create table cabinet_sign_in_failures (
  subject      text primary key,
  failures     integer not null,
  last_failed_at timestamptz not null,
  locked_until timestamptz
);

-- A merchant created with a password before the cabinet had users: that person becomes its owner.
insert into users (id, email, name, password_hash, created_at)
select 'user_' || substr(md5(m.id), 1, 26), m.email, m.name, m.password_hash, m.created_at
from merchants m
where m.password_hash is not null
  and not exists (select 1 from users u where lower(u.email) = lower(m.email));
insert into memberships (user_id, merchant_id, role, created_at)
select u.id, m.id, 'owner', m.created_at
from merchants m
join users u on lower(u.email) = lower(m.email)
where m.password_hash is not null
on conflict do nothing;

-- Passwords belong to users from now on.
alter table merchants drop column password_hash;
