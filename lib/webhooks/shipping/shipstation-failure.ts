import type { ShipStationError } from '@/lib/errors';
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
