// Which failed upstream calls the replay queue retries, and the reason it records for each.
import { ShipStationError, type StoreError } from '@/lib/errors';
import { log } from '@/lib/log';
import { isResourceUrlRefusal } from '@/lib/shipping/resource-url';

/** All but a refused URL and a 404/410 may pass (credentials being rotated, a redirect…), and the batch is known nowhere else. */
export function isRetryableShipStationFailure(error: ShipStationError): boolean {
  if (isResourceUrlRefusal(error.failure)) return false;
  return !(error.failure === 'rejected' && (error.status === 404 || error.status === 410));
}

/** The status tells a 403 from a redirect in the replay queue's report. */
export function shipStationFailure(error: ShipStationError): string {
  return error.status !== undefined && error.failure === 'rejected' ? `shipstation:rejected:${error.status}` : `shipstation:${error.failure}`;
}

/** The replay queue's reason for a ShipStation failure worth retrying, else nothing. */
export function retryableShipStation(error: ShipStationError): { retryableFailure?: string } {
  return isRetryableShipStationFailure(error) ? { retryableFailure: shipStationFailure(error) } : {};
}

/** A ShipStation read whose failure is logged and answered as `resource_read_failed`, with the queue's reason if any. */
export async function readShipStation<T>(
  read: () => Promise<T>,
): Promise<{ value: T } | { outcome: 'resource_read_failed'; retryableFailure?: string }> {
  try {
    return { value: await read() };
  } catch (error) {
    if (!(error instanceof ShipStationError)) throw error;
    log.error('shipping.resource_read_failed', { failure: error.failure, status: error.status });
    return { outcome: 'resource_read_failed', ...retryableShipStation(error) };
  }
}

/** docs/integrations/shipstation.md#what-is-queued-and-what-is-not: every other answer says nothing of the order. */
export function isFinalStoreFailure(error: StoreError): boolean {
  return error.failure === 'not_found' || error.failure === 'invalid_param';
}

/** The replay queue's reason for a store failure worth retrying, else nothing. */
export function retryableStore(error: StoreError): { retryableFailure?: string } {
  if (isFinalStoreFailure(error)) return {};
  // The status tells a 429 from a 403 or a redirect in the queue's report; a network failure has none.
  const status = error.failure === 'rejected' && error.status !== undefined ? `:${error.status}` : '';
  return { retryableFailure: `store:${error.failure}${status}` };
}
