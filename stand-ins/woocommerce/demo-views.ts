/**
 * The WooCommerce stand-in's read-only demo views, beside its REST API, without
 * authentication:
 *   GET /demo/orders, GET /demo/orders/<id>, GET /demo/customers/<id>/cart
 * An order's view carries its items and a history of the writes made through
 * the REST API (status changes, customer notes, meta entries written, refunds
 * and order notes added or removed), the
 * way a shop owner reads an order's notes in wp-admin, so the demo can show
 * what the service did without a terminal. The loopback server
 * (loopback-server.ts) serves them; msw in the route tests mounts the API
 * alone (fetch-handler.ts).
 *
 * Not part of the production bundle.
 */
import type { FetchHandler } from '../loopback-http';
import { wooCommerceApiHandler, wooJson, type WooCredentials } from './fetch-handler';
import { WooError, type WooCommerceModel, type WooOrder } from './model';

/** One write to an order through the REST API, as the demo's timeline shows it. */
export interface OrderWrite {
  at: string;
  status?: { from: string; to: string };
  customer_note?: string;
  /** The meta entries the write brought that the order did not already hold with that value. */
  meta: { key: string; value: unknown }[];
  /** A refund recorded on the order (POST /orders/<id>/refunds). */
  refund?: { id: number; amount: string; reason: string };
  /** A refund deleted from the order (DELETE /orders/<id>/refunds/<refund_id>). */
  refund_removed?: { id: number; amount: string };
  /** An order note added: private for the shop, or to the customer (POST /orders/<id>/notes). */
  note?: { note: string; customer_note: boolean };
}

/** What a write to an order's refunds or notes added, beside any status change it caused. */
type SubresourceWrite = Pick<OrderWrite, 'refund' | 'refund_removed' | 'note'>;

/** Records what each successful order write changed, for the read-only views. */
export class OrderHistory {
  private readonly writes = new Map<number, OrderWrite[]>();

  of(id: number): OrderWrite[] {
    return structuredClone(this.writes.get(id) ?? []);
  }

  record(before: WooOrder, after: WooOrder, body: Record<string, unknown>, added: SubresourceWrite = {}): void {
    const held = new Map(before.meta_data.map((m) => [m.key, JSON.stringify(m.value)]));
    const sent = Array.isArray(body.meta_data) ? (body.meta_data as { key?: unknown; value?: unknown }[]) : [];
    const meta = sent
      .filter((m): m is { key: string; value: unknown } => typeof m?.key === 'string' && held.get(m.key) !== JSON.stringify(m.value))
      .map(({ key, value }) => ({ key, value }));
    const write: OrderWrite = { at: new Date().toISOString(), meta, ...added };
    if (after.status !== before.status) write.status = { from: before.status, to: after.status };
    if (after.customer_note !== before.customer_note) write.customer_note = after.customer_note;
    if (!write.status && write.customer_note === undefined && meta.length === 0 && Object.keys(added).length === 0) return;
    this.writes.set(after.id, [...(this.writes.get(after.id) ?? []), write]);
  }
}

/** A compact view of an order for people reading the demo. */
export function orderSummary(model: WooCommerceModel, id: number, history?: OrderHistory) {
  const order = model.get(id);
  return {
    id: order.id,
    status: order.status,
    currency: order.currency,
    total: order.total,
    date_created: order.date_created,
    items: order.line_items.map((line) => ({ name: line.name, quantity: line.quantity, total: line.total })),
    fees: order.fee_lines.map((fee) => ({ name: fee.name, total: fee.total })),
    shipping_total: order.shipping_total,
    total_tax: order.total_tax,
    customer_id: order.customer_id,
    customer_note: order.customer_note,
    payment_method: order.payment_method,
    payment_method_title: order.payment_method_title,
    transaction_id: order.transaction_id,
    date_paid: order.date_paid,
    billing: order.billing,
    shipping: order.shipping,
    meta: Object.fromEntries(order.meta_data.map((m) => [m.key, m.value])),
    refunds: (model.refunds.get(id) ?? []).map(({ id: refundId, amount, reason }) => ({ id: refundId, amount, reason })),
    notes: (model.notes.get(id) ?? []).map(({ note, customer_note }) => ({ note, customer_note })),
    history: history?.of(id) ?? [],
  };
}

const ORDER_WRITE = /^\/wp-json\/wc\/v3\/orders\/(\d+)(?:\/(refunds|notes)(?:\/(\d+))?)?$/;

/** Which writes the history follows: the order itself, a refund or note added, a refund deleted. */
function followedWrite(method: string, path: string): { id: number; part: 'order' | 'refunds' | 'notes'; removes: boolean } | undefined {
  const match = ORDER_WRITE.exec(path);
  if (!match) return undefined;
  const [, id, part, itemId] = match;
  if (!part && ['PUT', 'POST', 'PATCH'].includes(method)) return { id: Number(id), part: 'order', removes: false };
  if (part && !itemId && method === 'POST') return { id: Number(id), part: part as 'refunds' | 'notes', removes: false };
  if (part === 'refunds' && itemId && method === 'DELETE') return { id: Number(id), part: 'refunds', removes: true };
  return undefined;
}

function parsed(text: string): Record<string, unknown> {
  try {
    return (JSON.parse(text || '{}') as Record<string, unknown>) ?? {};
  } catch {
    return {};
  }
}

/** WooCommerce's REST API (fetch-handler.ts) with the read-only demo views beside it and the order history it keeps. */
export function wooCommerceApiWithDemoViews(model: WooCommerceModel, credentials: WooCredentials, history = new OrderHistory()): FetchHandler {
  const api = wooCommerceApiHandler(model, credentials);
  return async (request) => {
    const path = new URL(request.url).pathname.replace(/\/+$/, '');
    const written = followedWrite(request.method, path);
    if (written) {
      const before = model.orders.get(written.id);
      const snapshot = before ? structuredClone(before) : undefined;
      const text = await request.clone().text();
      const answer = await api(request);
      const after = model.orders.get(written.id);
      if (answer.ok && snapshot && after) {
        if (written.part === 'order') {
          history.record(snapshot, after, parsed(text));
        } else {
          // The answer is the refund or note written (or deleted); its meta belongs to it, not to the order.
          const item = parsed(await answer.clone().text());
          const added: SubresourceWrite =
            written.part === 'notes'
              ? { note: { note: String(item.note), customer_note: item.customer_note === true } }
              : written.removes
                ? { refund_removed: { id: Number(item.id), amount: String(item.amount) } }
                : { refund: { id: Number(item.id), amount: String(item.amount), reason: String(item.reason ?? '') } };
          history.record(snapshot, after, {}, added);
        }
      }
      return answer;
    }
    const view = (read: () => unknown) => {
      try {
        return wooJson(200, read());
      } catch (error) {
        if (error instanceof WooError) return wooJson(error.status, error.toJSON());
        throw error;
      }
    };
    if (request.method === 'GET') {
      const order = /^\/demo\/orders(?:\/(\d+))?$/.exec(path);
      if (order) {
        const id = order[1];
        if (id) return view(() => orderSummary(model, Number(id), history));
        return view(() => [...model.orders.keys()].sort((a, b) => a - b).map((orderId) => orderSummary(model, orderId, history)));
      }
      const cart = /^\/demo\/customers\/(\d+)\/cart$/.exec(path);
      if (cart) return view(() => ({ customer_id: Number(cart[1]), items: model.carts.get(Number(cart[1])) ?? [] }));
    }
    return api(request);
  };
}
