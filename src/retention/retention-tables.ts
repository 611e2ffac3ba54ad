/** The retention module's tables (migration 0047). */
export interface RetentionTables {
  /** One row per archive file: 'writing' while the file is made, 'archived' once its rows are gone. */
  retention_archives: {
    file_name: string;
    table_name: string;
    /** The month (YYYY-MM) the rows were created in. */
    period: string;
    state: 'writing' | 'archived';
    row_count: bigint | null;
    sha256: string | null;
    started_at: Date;
    archived_at: Date | null;
  };
  /** One run at a time across processes. */
  retention_lease: {
    singleton: boolean;
    holder: string | null;
    lease_until: Date | null;
  };
}
