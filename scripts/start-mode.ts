/** npm run dev's choice between the demo and the configured service (scripts/dev.ts). */
import { placeholderVariables, REQUIRED_VARIABLES } from '../lib/config';

/** The store's and the card provider's variables: the demo runs exactly when none holds a value of its own. */
export const UPSTREAM_VARIABLES: readonly string[] = [...REQUIRED_VARIABLES.store, ...REQUIRED_VARIABLES.card];

export interface StartMode {
  /** The demo (local stand-ins for the store and the card provider) runs. */
  demo: boolean;
  why: 'production' | 'upstream configured' | 'no upstream configured';
  /** Upstream variables holding a value of their own (not empty, not the example's placeholder). */
  configured: string[];
  placeholders: string[];
}

/** Never the demo in production; a placeholder left from .env.example configures nothing. */
export function startMode(source: Record<string, string | undefined>): StartMode {
  const placeholders = placeholderVariables(source);
  const configured = UPSTREAM_VARIABLES.filter((name) => (source[name] ?? '').trim() !== '' && !placeholders.includes(name));
  if (source.NODE_ENV === 'production') return { demo: false, why: 'production', configured, placeholders };
  if (configured.length > 0) return { demo: false, why: 'upstream configured', configured, placeholders };
  return { demo: true, why: 'no upstream configured', configured, placeholders };
}
