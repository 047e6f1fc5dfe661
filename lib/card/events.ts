/**
 * The card provider's events in the service's own shape: what the webhook
 * verifies and what reconciliation lists are the same type, so both are
 * applied by the same code (lib/webhooks/card/handle-event.ts).
 */
export interface CardEvent {
  id: string;
  type: string;
  /** Seconds since the epoch, when the provider created the event (0 when unknown). */
  created: number;
  /** `data.object`, still unread. */
  object: Record<string, unknown>;
}

export interface CardEventQuery {
  types: readonly string[];
  /** Only events created at or after this time (seconds since the epoch). */
  createdFrom: number;
  /** The last event of the previous page: the provider lists newest first, so this continues with older ones. */
  startingAfter?: string | undefined;
  /** Page size, 1 to 100. */
  limit: number;
}

export interface CardEventPage {
  events: CardEvent[];
  hasMore: boolean;
}
