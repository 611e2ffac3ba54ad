-- Each crypto object records whether its chain's USDT is real (network_mode,
-- docs/api-decisions.md): `mainnet` for a live shop on TRON mainnet, `testnet`
-- for a sandbox shop (the simulated chain) or a live shop of a gateway running on
-- Nile (PAYGATE_TRON_NETWORK=nile). Stored when the object is made, so a gateway
-- later pointed at another network never relabels what it made before. Every
-- live object before this migration was made on mainnet, the only network then.
alter table crypto_invoices add column network_mode text;
update crypto_invoices i
   set network_mode = case s.mode when 'sandbox' then 'testnet' else 'mainnet' end
  from shops s where s.id = i.shop_id;
alter table crypto_invoices alter column network_mode set not null;
alter table crypto_invoices add constraint crypto_invoices_network_mode_check check (network_mode in ('mainnet', 'testnet'));

alter table crypto_wallets add column network_mode text;
update crypto_wallets w
   set network_mode = case s.mode when 'sandbox' then 'testnet' else 'mainnet' end
  from shops s where s.id = w.shop_id;
alter table crypto_wallets alter column network_mode set not null;
alter table crypto_wallets add constraint crypto_wallets_network_mode_check check (network_mode in ('mainnet', 'testnet'));

alter table crypto_payouts add column network_mode text;
update crypto_payouts set network_mode = case chain when 'tron-sandbox' then 'testnet' else 'mainnet' end;
alter table crypto_payouts alter column network_mode set not null;
alter table crypto_payouts add constraint crypto_payouts_network_mode_check check (network_mode in ('mainnet', 'testnet'));

alter table crypto_refunds add column network_mode text;
update crypto_refunds set network_mode = case chain when 'tron-sandbox' then 'testnet' else 'mainnet' end;
alter table crypto_refunds alter column network_mode set not null;
alter table crypto_refunds add constraint crypto_refunds_network_mode_check check (network_mode in ('mainnet', 'testnet'));

alter table crypto_withdrawals add column network_mode text;
update crypto_withdrawals set network_mode = case chain when 'tron-sandbox' then 'testnet' else 'mainnet' end;
alter table crypto_withdrawals alter column network_mode set not null;
alter table crypto_withdrawals add constraint crypto_withdrawals_network_mode_check check (network_mode in ('mainnet', 'testnet'));
