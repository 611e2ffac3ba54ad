export interface WebhookTables {
  webhook_events: {
    id: string;
    shop_id: string;
    type: string;
    payload: string;
    destination_url: string | null;
    created_at: Date;
  };
}
