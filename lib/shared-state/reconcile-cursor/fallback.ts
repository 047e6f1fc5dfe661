import { CursorWithFallback } from '@/lib/shared-state/fallback';
import type { ReconcileCursor, ReconcileCursorStore } from '@/lib/shared-state/reconcile-cursor/reconcile-cursor';

/** Payment reconciliation's cursor: unreadable, the run starts from the newest event of the window. */
export function reconcileCursorWithFallback(shared: ReconcileCursorStore): CursorWithFallback<ReconcileCursor> {
  return new CursorWithFallback(shared, {
    prefix: 'reconcile',
    unreadable: 'starting from the newest event of the window',
    position: (cursor) => ({ resumeAfter: cursor.startingAfter }),
  });
}
