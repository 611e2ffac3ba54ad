-- The cabinet's overview reads a merchant account's history by time, not by
-- sequence: the changes of a range of UTC days grouped per day and transfer type,
-- and the balance just before the range (the newest entry before its first day).
-- Without this index both scan every entry of the account since it opened
-- (ledger_operations_account_seq_idx orders by seq only). The included columns
-- let the opening-balance look-up and the day sums read the index alone.
create index ledger_operations_account_created_idx
  on ledger_operations (account_id, created_at, seq) include (amount, balance_after, origin_id);
